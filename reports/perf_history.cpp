#include "dyno/reports/perf_history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/machine_fingerprint.h"
#include "dyno/reports/change_points.h"
#include "dyno/reports/html_report.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/utf8_text.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

// A history point's figures: a throughput above 0 inside its interval, and a check's verdict.
void check_figures(const JsonFields& f, double value, double low, double high, const std::string& verdict) {
  if (!(value > 0) || !std::isfinite(value)) f.fail("value", "a throughput above 0");
  if (!(low <= value && value <= high)) f.fail("low", "at most \"value\", with \"high\" at least \"value\" (its interval)");
  if (verdict != "PASS" && verdict != "FAIL" && verdict != "INCONCLUSIVE" && !verdict.empty()) f.fail("verdict", "PASS, FAIL or INCONCLUSIVE");
}


std::string fixed(double v, int digits) { return format_fixed(v, digits); }

}  // namespace

nlohmann::json to_json(const HistoryEntry& e) {
  nlohmann::json j = {{"revision", e.revision}, {"time", e.time}, {"fingerprint_id", e.fingerprint_id}, {"subject", e.subject},
                      {"metric", e.metric},     {"value", e.value}, {"low", e.low},                   {"high", e.high},
                      {"verdict", e.verdict}};
  if (!e.regression.is_null()) {
    j["regression"] = e.regression["estimate"];
    j["regression_low"] = e.regression["low"];
    j["regression_high"] = e.regression["high"];
  }
  return j;
}

std::vector<HistoryEntry> read_history(const std::string& path) {
  if (std::filesystem::is_directory(path))
    throw UserError("history", "'" + path + "' is a folder; give a history file (written by `dyno report history FILE --append CHECK.json`)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("history", "'" + path + "' cannot be read (a history file is written by `dyno report history FILE --append CHECK.json`)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_history(buffer.str(), path);
}

std::vector<HistoryEntry> parse_history(const std::string& text, const std::string& path) {
  std::vector<HistoryEntry> entries;
  size_t start = 0, number = 0;
  while (start < text.size()) {
    // A last line without its newline was torn by an interrupted append, unless it is whole JSON
    // (as the appender, which completes such a line, reads it too).
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end == text.size() && !nlohmann::json::accept(text.substr(start))) break;
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.empty()) continue;
    const std::string where = path + " line " + std::to_string(number);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw UserError("history", where + ": not valid JSON: " + json_error_text(e));
    }
    if (!j.is_object()) throw UserError("history", where + ": not a JSON object");
    const JsonFields f(j, "history", where);
    for (const char* field : {"revision", "metric", "value", "low", "high"})
      if (!f.has(field)) throw UserError("history", where + ": missing \"" + field + "\"");
    HistoryEntry e;
    // (A revision may be a number, as a build's; a metric is a name.)
    e.revision = j["revision"].is_number_integer() ? j["revision"].dump() : f.required_text("revision");
    e.time = f.text("time");
    e.fingerprint_id = f.text("fingerprint_id");
    e.subject = f.text("subject");
    e.metric = f.required_text("metric");
    e.value = f.number("value");
    e.low = f.number("low");
    e.high = f.number("high");
    e.verdict = f.text("verdict");
    if (f.has("regression"))
      e.regression = {{"estimate", f.number("regression")}, {"low", f.number("regression_low")}, {"high", f.number("regression_high")}};
    check_figures(f, e.value, e.low, e.high, e.verdict);
    entries.push_back(e);
  }
  return entries;
}

void append_history(const std::string& path, const HistoryEntry& entry) { append_line_durably(path, to_json(entry).dump()); }

HistoryEntry history_entry_from_check(const nlohmann::json& check, const std::string& revision, const std::string& time) {
  const JsonFields c(check, "history", "the check result");
  if (c.text("kind") == "check" && c.text("verdict") == "NOT_COMPARABLE")
    throw UserError("history", "the check result is NOT_COMPARABLE (its baseline was recorded on another machine): it measured no runs, so there "
                               "is nothing to append");
  if (c.text("kind") == "check" && c.has("failure"))
    throw UserError("history", "the check FAILED without figures: the candidate " + c.text("failure") + "; there are no runs to append");
  if (c.text("kind") != "check")
    throw UserError("history", "expected the result of `dyno check --out FILE` (kind check, with runs); got kind '" + c.text("kind", "?") + "'");
  const std::vector<double> runs = c.throughputs("runs", 1);
  if (c.has("regression") && !check["regression"].is_number() && !check["regression"].is_null()) c.fail("regression", "a number or null");
  HistoryEntry e;
  e.revision = revision;
  e.time = time;
  e.fingerprint_id = c.text("fingerprint_id");
  if (c.has("config") && check["config"].is_object())
    e.subject = (check["config"].contains("workload") && check["config"]["workload"].is_string() ? check["config"]["workload"].get<std::string>() : "?") +
                " config " + digest_of(check["config"]);
  e.metric = "samples_per_second";
  e.value = median(runs);
  const Interval ci = median_confidence_interval(runs);
  e.low = ci.low;
  e.high = ci.high;
  e.verdict = c.text("verdict");
  check_figures(c, e.value, e.low, e.high, e.verdict);
  if (c.has("regression") && check["regression"].is_number()) {
    for (const std::string bound : {"regression_low", "regression_high"})
      if (!c.has(bound.c_str()))
        throw UserError("history", "the check result has \"regression\" without \"" + bound + "\", its interval's bound; is it the output of dyno check --out?");
    e.regression = {{"estimate", check["regression"]}, {"low", c.number("regression_low")}, {"high", c.number("regression_high")}};
  }
  return e;
}

std::map<std::string, std::vector<const HistoryEntry*>> history_series(const std::vector<HistoryEntry>& entries) {
  std::map<std::string, std::vector<const HistoryEntry*>> series;
  for (const auto& e : entries)
    series[e.metric + (e.subject.empty() ? "" : " of " + e.subject) + " (machine " + (e.fingerprint_id.empty() ? "?" : e.fingerprint_id) + ")"]
        .push_back(&e);
  return series;
}

std::string history_html(const std::vector<HistoryEntry>& entries) {
  const auto series = history_series(entries);
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dyno performance history</title><style>"
    << "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
    << "</style></head><body><h1>dyno performance history</h1>"
    << "<p>Each point: the candidate's median run figure at a revision, with its 95% interval. Red lines: change points "
    << "(circular binary segmentation on the two-sample t, permutation test p &lt; 0.01, segments of at least 3 revisions).</p>";
  for (const auto& [key, points] : series) {
    std::vector<double> values;
    for (const auto* p : points) values.push_back(p->value);
    const auto changes = change_points(values);
    double lo = values.front(), hi = values.front();
    for (const auto* p : points) {
      lo = std::min(lo, p->low);
      hi = std::max(hi, p->high);
    }
    if (hi <= lo) hi = lo + 1;
    const double width = 900, height = 260, left = 70, bottom = 40;
    const double step = points.size() > 1 ? (width - left - 20) / static_cast<double>(points.size() - 1) : 0;
    auto x = [&](size_t i) { return left + step * static_cast<double>(i); };
    auto y = [&](double v) { return 10 + (height - bottom - 10) * (1 - (v - lo) / (hi - lo)); };
    h << "<h2>" << html_escape(key) << "</h2>"
      << "<svg width='" << width << "' height='" << height << "' xmlns='http://www.w3.org/2000/svg'>"
      << "<text x='5' y='" << y(hi) + 4 << "' font-size='11'>" << fixed(hi, 0) << "</text><text x='5' y='" << y(lo) + 4 << "' font-size='11'>"
      << fixed(lo, 0) << "</text>";
    for (const auto& c : changes)
      h << "<line x1='" << (x(c.index - 1) + x(c.index)) / 2 << "' x2='" << (x(c.index - 1) + x(c.index)) / 2 << "' y1='5' y2='" << height - bottom
        << "' stroke='#d62728' stroke-dasharray='4,3'/>";
    for (size_t i = 0; i < points.size(); ++i) {
      const auto* p = points[i];
      h << "<line x1='" << x(i) << "' x2='" << x(i) << "' y1='" << y(p->low) << "' y2='" << y(p->high) << "' stroke='#888'/>"
        << "<circle cx='" << x(i) << "' cy='" << y(p->value) << "' r='3.5' fill='" << (p->verdict == "FAIL" ? "#d62728" : "#1f77b4") << "'><title>"
        << html_escape(p->revision) << ": " << fixed(p->value, 1) << " [" << fixed(p->low, 1) << ", " << fixed(p->high, 1) << "] " << html_escape(p->verdict)
        << "</title></circle>"
        << "<text x='" << x(i) << "' y='" << height - bottom + 14 << "' font-size='10' text-anchor='middle'>" << html_escape(utf8_text(p->revision, 8))
        << "</text>";
    }
    h << "</svg>";
    if (changes.empty()) {
      h << "<p>No change point.</p>";
    } else {
      h << "<table><tr><th>first revision after</th><th>mean before</th><th>mean after</th><th>change</th><th>p</th></tr>";
      for (const auto& c : changes)
        h << "<tr><td>" << html_escape(points[c.index]->revision) << "</td><td>" << fixed(c.before, 1) << "</td><td>" << fixed(c.after, 1) << "</td><td>"
          << fixed(100 * (c.after / c.before - 1), 1) << "%</td><td>" << fixed(c.p_value, 3) << "</td></tr>";
      h << "</table>";
    }
  }
  h << "</body></html>\n";
  return h.str();
}

}  // namespace dyno
