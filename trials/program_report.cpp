#include "dyno/trials/program_report.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "dyno/reports/html_report.h"
#include "dyno/reports/user_error.h"
#include "dyno/reports/utf8_text.h"

namespace dyno {
namespace {

// Python's json.dumps writes non-finite floats as bare NaN / Infinity / -Infinity, which JSON
// does not allow; they are read as the strings the protocol also accepts.
std::string quote_non_finite(const std::string& line) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "NaN"}) {
      const std::string t = token;
      if (line.compare(i, t.size(), t) == 0) {
        out += "\"" + t + "\"";
        i += t.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

// How deep brackets nest in a line of JSON, outside its strings.
constexpr int kDeepestReportNesting = 64;
constexpr size_t kLongestReportLine = size_t{1} << 20;
int nesting_depth(const std::string& line) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

double number_field(const nlohmann::json& line, const char* field, const std::string& where, bool allow_non_finite) {
  const auto it = line.find(field);
  if (it == line.end()) throw UserError("report", where + ": a " + line.value("event", "") + " line needs \"" + field + "\"");
  if (it->is_number()) return it->get<double>();
  if (allow_non_finite && it->is_string()) {
    const std::string s = it->get<std::string>();
    if (s == "nan" || s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  throw UserError("report", where + ": \"" + field + "\" is " + it->dump() + ", not a number" +
                                (allow_non_finite ? " (or \"nan\", \"inf\", \"-inf\")" : ""));
}

// Parses `text`, the report's bytes from `report.bytes` on, into `report`.
void parse_lines(ProgramReport& report, const std::string& text, const std::string& path, double seen_s, const ProgramReport* previous, bool ended) {
  size_t start = 0, number = report.line_number;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    if ((newline == std::string::npos ? text.size() : newline) - start > kLongestReportLine)
      throw UserError("report", path + " line " + std::to_string(number + 1) + ": longer than 1 MiB; a report line is one short event");
    // Without its newline a line is torn (still being written, or cut off by a kill), unless the
    // program has ended and it is a whole JSON value: then it is the last line it wrote.
    if (newline == std::string::npos && (!ended || !nlohmann::json::accept(quote_non_finite(text.substr(start))))) break;
    if (newline == std::string::npos) newline = text.size();
    const std::string line = text.substr(start, newline - start);
    report.bytes += std::min(newline + 1, text.size()) - start;
    start = newline + 1;
    report.line_number = ++number;
    const std::string where = path + " line " + std::to_string(number);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    if (nesting_depth(line) > kDeepestReportNesting)  // the parser recurses: a deeper line would overflow the stack
      throw UserError("report", where + ": nested more than " + std::to_string(kDeepestReportNesting) + " levels deep; a report line is a flat object");
    try {
      j = nlohmann::json::parse(quote_non_finite(line));
    } catch (const nlohmann::json::exception&) {
      throw UserError("report", where + ": not a JSON object: " + utf8_text(line, 200));
    }
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string())
      throw UserError("report", where + ": expected an object with \"event\": one of knobs, window, eval, done; got " + utf8_text(line, 200));
    const std::string event = j["event"];
    if (report.done) throw UserError("report", where + ": a " + event + " line after \"done\", the program's last event");
    ++report.lines;
    if (event == "knobs") {
      if (!j.contains("applied") || !j["applied"].is_object())
        throw UserError("report", where + ": a knobs line needs \"applied\": {knob: value, ...}");
      if (report.applied.is_null()) report.applied = nlohmann::json::object();
      report.applied.update(j["applied"]);
    } else if (event == "window") {
      ReportWindow w;
      w.items = number_field(j, "items", where, false);
      w.seconds = number_field(j, "seconds", where, false);
      if (!(w.items > 0) || !(w.seconds > 0) || !std::isfinite(w.items / w.seconds))
        throw UserError("report", where + ": a window needs items > 0 and seconds > 0 whose ratio is a finite rate, got items " + j["items"].dump() +
                                      ", seconds " + j["seconds"].dump());
      if (j.contains("loss") && !j["loss"].is_null()) w.loss = number_field(j, "loss", where, true);
      report.windows.push_back(w);
    } else if (event == "eval") {
      ReportEvaluation e;
      e.value = number_field(j, "value", where, true);
      e.metric = j.contains("metric") && j["metric"].is_string() ? j["metric"].get<std::string>() : "metric";
      if (j.contains("elapsed") && !j["elapsed"].is_null()) {
        e.elapsed_s = number_field(j, "elapsed", where, false);
        if (!(e.elapsed_s >= 0))
          throw UserError("report", where + ": \"elapsed\" is " + j["elapsed"].dump() + "; it is the seconds since the program started, 0 or more");
        const auto earlier = std::find_if(report.evaluations.rbegin(), report.evaluations.rend(), [](const auto& x) { return x.elapsed_s.has_value(); });
        if (earlier != report.evaluations.rend() && *e.elapsed_s < *earlier->elapsed_s)
          throw UserError("report", where + ": \"elapsed\" " + j["elapsed"].dump() + " is before an earlier evaluation's " +
                                        nlohmann::json(*earlier->elapsed_s).dump() + "; it counts the seconds of the whole run and never restarts");
      }
      const size_t index = report.evaluations.size();
      e.seen_s = previous && index < previous->evaluations.size() ? previous->evaluations[index].seen_s : seen_s;
      e.windows_before = report.windows.size();
      report.evaluations.push_back(e);
    } else if (event == "done") {
      report.done = true;
    } else {
      throw UserError("report", where + ": event '" + event + "' is not one of knobs, window, eval, done");
    }
  }
}

}  // namespace

ProgramReport read_program_report(const std::string& path, double seen_s, const ProgramReport* previous, bool ended) {
  // A FIFO would block the read (and the tuner), a device never end it.
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
    throw UserError("report", path + " is not a file (a FIFO, a device or a folder was put there); write the report as a file, appending lines");
  std::ifstream in(path, std::ios::binary);
  const size_t rewrites = previous ? previous->rewrites + (previous->bytes > 0) : 0;  // when not read on from where it stopped
  if (!in) {
    ProgramReport gone;
    gone.rewrites = rewrites;
    return gone;
  }
  // The lines the last read parsed are not parsed again (a program writing a window a step makes a
  // long report, read every 50 ms): only what was written since, unless the file is now shorter or
  // its parsed part's first or last bytes changed.
  const auto bytes_at = [&in](size_t offset, size_t count) {
    std::string bytes(count, '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(count));
    return in ? bytes : std::string();
  };
  in.seekg(0, std::ios::end);
  const bool since = previous && previous->bytes > 0 && in && static_cast<size_t>(in.tellg()) >= previous->bytes &&
                     bytes_at(0, previous->head.size()) == previous->head &&
                     bytes_at(previous->bytes - previous->seam.size(), previous->seam.size()) == previous->seam;
  in.clear();
  const size_t start = since ? previous->bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  ProgramReport report = since ? *previous : ProgramReport{};
  if (!since) report.rewrites = rewrites;
  parse_lines(report, text, path, seen_s, since ? previous : nullptr, ended);  // a rewritten file's evaluations are new
  constexpr size_t kHead = 256, kSeam = 64;
  const std::string parsed = (since ? previous->seam : std::string()) + text.substr(0, report.bytes - start);
  report.seam = parsed.substr(parsed.size() - std::min(parsed.size(), kSeam));
  if (report.head.size() < kHead && report.head.size() == start) report.head += text.substr(0, std::min(report.bytes, kHead) - start);
  return report;
}

ProgramReport parse_program_report(const std::string& text, const std::string& path, double seen_s, const ProgramReport* previous, bool ended) {
  ProgramReport report;
  parse_lines(report, text, path, seen_s, previous, ended);
  return report;
}

nlohmann::json program_report_curves(const ProgramReport& report) {
  nlohmann::json loss = nlohmann::json::array(), metric = nlohmann::json::array();
  std::vector<double> items_after{0}, seconds_after{0};  // [i]: the first i windows'
  for (const ReportWindow& w : report.windows) {
    items_after.push_back(items_after.back() + w.items);
    seconds_after.push_back(seconds_after.back() + w.seconds);
    if (w.loss && std::isfinite(*w.loss)) loss.push_back({{"items", items_after.back()}, {"time_s", seconds_after.back()}, {"value", *w.loss}});
  }
  for (const ReportEvaluation& e : report.evaluations)
    if (std::isfinite(e.value)) {
      const size_t before = std::min(e.windows_before, report.windows.size());
      metric.push_back({{"items", items_after[before]}, {"time_s", e.elapsed_s.value_or(seconds_after[before])}, {"value", e.value}});
    }
  return {{"kind", kProgramCurvesKind}, {"curves", {{"loss", loss}, {"metric", metric}}}};
}

}  // namespace dyno
