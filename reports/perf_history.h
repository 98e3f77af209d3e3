// PerfHistory: the figures of successive gate runs, one JSON object per line (appended, flushed),
// so that a metric can be followed over revisions:
//   {"revision": "abc1234", "time": "2026-11-23T16:30:00Z", "fingerprint_id": "...", "subject":
//    "fashion-mlp config 1a2b3c4d5e6f", "metric": "samples_per_second", "value": 5210.4, "low": 5190.2, "high": 5230.9, "regression": 0.012,
//    "regression_low": -0.01, "regression_high": 0.03, "verdict": "PASS"}
// value: the candidate's median run figure, low/high its 95% interval; regression: the check's
// estimate against its base; subject: what was measured, the workload and a digest of the
// candidate's config (a gate of several baselines appends one entry for each). history_series
// splits the entries into series of one subject, metric and machine; history_html plots each
// series' values over revisions with their intervals and marks the change points
// (reports/change_points.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct HistoryEntry {
  std::string revision;
  std::string time;
  std::string fingerprint_id;
  std::string subject;  // "" in histories written before the field
  std::string metric;
  double value = 0;
  double low = 0;
  double high = 0;
  nlohmann::json regression = nullptr;  // {estimate, low, high} against the base, or null
  std::string verdict;
};

nlohmann::json to_json(const HistoryEntry& entry);
// Reads a history file; throws UserError("history", "<path> line N: ...") for a bad line (a torn
// last line, without its newline, is ignored).
std::vector<HistoryEntry> read_history(const std::string& path);
// The same for a history's text; `path` only names it in errors.
std::vector<HistoryEntry> parse_history(const std::string& text, const std::string& path);
void append_history(const std::string& path, const HistoryEntry& entry);
// The entry of a `dyno check --out` result (kind "check", with "runs") at `revision`.
HistoryEntry history_entry_from_check(const nlohmann::json& check, const std::string& revision, const std::string& time);
// The entries by series, each named "<metric> of <subject> (machine <fingerprint_id>)", in the
// history's order within each: only figures of one subject on one machine are comparable.
std::map<std::string, std::vector<const HistoryEntry*>> history_series(const std::vector<HistoryEntry>& entries);
// One self-contained HTML page: per series, the values over revisions with their intervals,
// change points marked, and a table of the change points.
std::string history_html(const std::vector<HistoryEntry>& entries);

}  // namespace dyno
