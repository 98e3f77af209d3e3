// Renders a tuning run (DIR/report.json plus each trial's run report under DIR/trials/) as one
// self-contained HTML file with inline SVG charts: the bottleneck verdicts of the default and the
// chosen configuration, throughput per trial with its interval, the throughput / peak-memory
// Pareto front, loss curves per configuration, the verification runs against steps and
// wall-clock time, the chosen configuration's op table, the phase breakdown of the best
// configuration, and (when given) the technique table. No scripts, no external assets.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

// The "kind" of a program trial's curves (trials/program_report.h, program_report_curves), which
// run over the items its windows reported instead of optimizer steps.
inline constexpr char kProgramCurvesKind[] = "program_report";

// tune_report: DIR/report.json; trial_reports: id -> that trial's run report, or a program trial's
// curves (may be empty); techniques: a Google Benchmark JSON of dyno_bench_techniques, or null.
std::string render_html_report(const nlohmann::json& tune_report, const std::map<int64_t, nlohmann::json>& trial_reports,
                               const nlohmann::json& techniques);

// Text as HTML shows it, in an element or in either kind of quoted attribute: & < > " ' escaped.
std::string html_escape(const std::string& text);

}  // namespace dyno
