// ProgramReport: what an external training program told dyno about one trial, read from the
// JSON-lines file named by DYNO_REPORT (the report protocol, README "Tune any training program").
// Each line is one object with an "event":
//   {"event": "knobs", "applied": {"batch_size": 128, "compile": true}}   the knobs it applied
//   {"event": "window", "items": 1280, "seconds": 0.42, "loss": 0.61}    a throughput window
//   {"event": "eval", "metric": "accuracy", "value": 0.86, "elapsed": 12.5}  an evaluation
//   {"event": "done"}                                                     it finished
// "loss" is optional; "elapsed" (seconds of training so far, on the program's clock: the Python
// helper counts from its start(), after the imports) is optional, and when absent the time since
// the trial's process started, as dyno read the line, stands in for it. A non-finite loss may be written as NaN/Infinity (Python's json) or as the
// strings "nan", "inf", "-inf". A last line with no newline is torn (the program was stopped
// while writing it) and ignored; any other line that breaks the protocol is an error naming the
// file and the line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct ReportWindow {
  double items = 0;
  double seconds = 0;
  std::optional<double> loss;
  double throughput() const { return items / seconds; }
};

struct ReportEvaluation {
  std::string metric;
  double value = 0;
  std::optional<double> elapsed_s;
  double seen_s = 0;  // dyno's clock when it read the line (seconds since the trial started)
  size_t windows_before = 0;  // the windows reported before it
};

struct ProgramReport {
  nlohmann::json applied = nullptr;  // the knobs lines' "applied" objects merged; null when none
  std::vector<ReportWindow> windows;
  std::vector<ReportEvaluation> evaluations;
  bool done = false;
  size_t lines = 0;  // complete lines read
  size_t line_number = 0, bytes = 0;  // where the read stopped: the lines (blank ones too) and bytes it parsed
  // The parsed part's first bytes and its last ones (up to `bytes`): a file whose bytes there
  // differ was rewritten (a program started again, a wrapper's retry) and is read again whole.
  std::string head, seam;
  size_t rewrites = 0;  // reads that found the file rewritten (or gone) since the one before

  bool empty() const { return lines == 0; }
};

// Reads the report at `path` (a missing file is an empty report). `seen_s` stamps evaluations
// read for the first time; `previous` (the last read of the same file) keeps their stamps, and
// its lines are not parsed again unless the file was rewritten since (ProgramReport::head, seam).
// Throws UserError("report", "<path> line N: ...") for a line that breaks the protocol. A last line
// without its newline is still being written (or was cut off by a kill) and is left out, unless
// `ended` (the program exited on its own, so what it wrote is all it will write) and it is whole JSON.
ProgramReport read_program_report(const std::string& path, double seen_s = 0, const ProgramReport* previous = nullptr, bool ended = false);
// The same for the report's text; `path` only names it in errors.
ProgramReport parse_program_report(const std::string& text, const std::string& path, double seen_s = 0, const ProgramReport* previous = nullptr,
                                   bool ended = false);

// The report's curves in a run report's shape, for the HTML report's charts: {"kind":
// kProgramCurvesKind, "curves": {"loss": [...], "metric": [...]}}, each point {"items", "time_s",
// "value"}. A window's point is at its end: the items of the windows up to it, and their seconds
// (the program's training time: what it did between windows is not in them); an evaluation's at
// the items of the windows before it, and at its "elapsed" (the time since the program started),
// else at those windows' seconds. Non-finite values are left out.
nlohmann::json program_report_curves(const ProgramReport& report);

}  // namespace dyno
