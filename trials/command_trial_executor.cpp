#include "dyno/trials/command_trial_executor.h"

#include <sys/statvfs.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/child_process.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"
#include "dyno/trials/child_outcome.h"
#include "dyno/trials/program_report.h"

namespace dyno {
namespace {

double wall_clock_s() {
  timeval now{};
  ::gettimeofday(&now, nullptr);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_usec) * 1e-6;
}

bool same_value(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

std::vector<double> measured_throughputs(const ProgramReport& report, int64_t warmup_windows) {
  std::vector<double> values;
  for (size_t i = static_cast<size_t>(std::max<int64_t>(0, warmup_windows)); i < report.windows.size(); ++i)
    values.push_back(report.windows[i].throughput());
  return values;
}

// The first evaluation that meets the target, or nullptr.
const ReportEvaluation* reaching_evaluation(const ProgramReport& report, const TargetSpec& target) {
  for (const auto& e : report.evaluations)
    if (e.metric == target.metric && std::isfinite(e.value) && target.met_by(e.value)) return &e;
  return nullptr;
}

// Whether `dir`'s file system lacks room for the trials to come: under kRoomForTrials free, or a
// write of that much there fails for want of space (a quota statvfs does not show).
bool short_of_room(const std::string& dir) {
  constexpr double kRoomForTrials = 16.0 * 1024 * 1024;
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0 && static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) < kRoomForTrials) return true;
  const std::string probe = dir + "/.room-probe";
  try {
    write_file_atomically(probe, std::string(static_cast<size_t>(kRoomForTrials), '\0'));
  } catch (const OutOfSpace&) {
    return true;
  } catch (const UserError&) {
    return false;  // another write error: not room, and the trial is the program's crash
  }
  std::remove(probe.c_str());
  return false;
}

}  // namespace

TargetSpec TargetSpec::parse(const std::string& text) {
  const auto trimmed = [](const std::string& s) {
    const size_t first = s.find_first_not_of(" \t"), last = s.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  };
  for (const char* op : {">=", "<="}) {
    const auto at = text.find(op);
    if (at == std::string::npos) continue;
    TargetSpec t;
    // Spaces around the comparison are the user's layout (a metric named "accuracy " would never be met).
    t.metric = trimmed(text.substr(0, at));
    t.higher_is_better = op[0] == '>';
    if (t.metric.empty() || t.metric.find_first_of(" \t<>=") != std::string::npos)
      throw UserError("tune", "--target '" + text + "': '" + t.metric + "' is not a metric name (the name the program's eval lines give, e.g. accuracy)");
    const std::string number = trimmed(text.substr(at + 2));
    try {
      size_t used = 0;
      t.value = std::stod(number, &used);
      if (used == number.size() && std::isfinite(t.value)) return t;
    } catch (...) {
    }
    throw UserError("tune", "--target '" + text + "': '" + number + "' is not a number");
  }
  throw UserError("tune", "--target '" + text + "' is not METRIC>=VALUE or METRIC<=VALUE (e.g. accuracy>=0.85, val_loss<=0.3)");
}

// The value as the shortest text that reads back as it (a program stopping at DYNO_TARGET stops at
// dyno's own target: 0.00005 rounded to four places would be 0.0001).
std::string TargetSpec::to_string() const { return metric + (higher_is_better ? ">=" : "<=") + nlohmann::json(value).dump(); }

Trial CommandTrialExecutor::execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) {
  Trial trial;
  trial.point = point;
  trial.budget_level = request.budget_level;
  const std::string dir = options_.trial_dir + "/" + name;
  make_folder(dir);
  const std::string point_path = dir + "/point.json", report_path = dir + "/report.jsonl", log_path = dir + "/log.txt";
  std::remove(report_path.c_str());
  trial.report_path = report_path;

  nlohmann::json full = options_.base.is_object() ? options_.base : nlohmann::json::object();
  if (point.is_object()) full.update(point);
  const bool to_target = options_.target.has_value();
  const int64_t seed = options_.seed + (to_target ? request.budget_level - 1 : 0);
  const double units = static_cast<double>(std::max<int64_t>(1, request.units));
  const double time_cap = to_target ? options_.time_cap_s : options_.time_cap_s * units;
  write_file_atomically(point_path, full.dump(2) + "\n");

  std::vector<std::string> env = ProgramCommand::environment_for(full, seed);
  env.push_back("DYNO_POINT=" + canonical_path(point_path));
  env.push_back("DYNO_REPORT=" + canonical_path(report_path));
  if (!options_.tune_dir.empty()) env.push_back("DYNO_TUNE_DIR=" + canonical_path(options_.tune_dir));
  env.push_back("DYNO_OBJECTIVE=" + std::string(to_target ? "time-to-target" : "throughput"));
  if (to_target) env.push_back("DYNO_TARGET=" + options_.target->to_string());
  env.push_back("DYNO_TIME_CAP_S=" + format_fixed(time_cap, 1));
  char start[32];
  std::snprintf(start, sizeof start, "%.6f", wall_clock_s());
  env.push_back(std::string("DYNO_TRIAL_START=") + start);

  // Watches the report while the program runs; `stop_reason` says why dyno stopped it.
  ProgramReport seen;
  std::string stop_reason, report_error;
  std::uintmax_t seen_size = 0;
  auto should_stop = [&](double elapsed) {
    try {
      // Read again only when the program wrote more (a stopped program's cap still applies).
      std::error_code ec;
      const std::uintmax_t size = std::filesystem::file_size(report_path, ec);
      if (!ec && size != seen_size) {
        seen_size = size;
        seen = read_program_report(report_path, elapsed, &seen);
      }
    } catch (const UserError& e) {
      report_error = e.what();
      return stop_reason = "report error", true;
    }
    // Finished (its last line): what it still does (a loader's or a logger's teardown) is not the trial's.
    if (seen.done) return stop_reason = "done", true;
    if (to_target) {
      if (reaching_evaluation(seen, *options_.target)) return stop_reason = "target", true;
      if (elapsed > time_cap) return stop_reason = "time cap", true;
      return false;
    }
    const auto measured = measured_throughputs(seen, options_.warmup_windows);
    if (request.loss_windows > 0 && static_cast<int64_t>(seen.windows.size()) >= request.loss_windows) return stop_reason = "loss windows", true;
    if (static_cast<double>(measured.size()) >= static_cast<double>(options_.windows_per_unit) * units) return stop_reason = "windows", true;
    // (A program that has reported nothing may be one timed as a whole process: it runs to its end.)
    if (!seen.empty() && elapsed > time_cap) return stop_reason = "time cap", true;
    if (measured.size() >= kFewestWindowsFor95) {
      const Interval ci = median_confidence_interval(measured);
      if (request.stop_below > 0 && ci.high < request.stop_below) return stop_reason = "outpaced", true;
      if (relative_ci_half_width(measured) <= options_.measure_rel_ci) return stop_reason = "precise", true;
    }
    return false;
  };
  ChildOptions child_options;
  child_options.environment = env;
  child_options.own_job = true;  // a trial is the program's job, not a surrounding one's rank
  child_options.should_stop = should_stop;
  child_options.measure_memory = true;     // the program's own figure is not known; what it and its workers held is
  child_options.reap_descendants = true;  // torchrun starts each rank in a session of its own
  ChildResult child;
  ProgramReport report;
  const double hang_limit = hang_limit_s(options_.timeout_s, to_target ? 1 : request.units);
  child = run_child(options_.program.argv_for(full, seed), log_path, hang_limit, &interrupted, child_options);
  try {
    const bool ended = !child.stopped && !child.signaled && !child.timed_out && !child.interrupted;
    if (report_error.empty()) report = read_program_report(report_path, child.wall_time_s, &seen, ended);
  } catch (const UserError& e) {
    report_error = e.what();
  }
  if (!report_error.empty()) {
    trial.outcome = Outcome::InvalidReport;
    trial.reason = report_error;
    trial.wall_time_s = child.wall_time_s;
    return trial;
  }
  trial.wall_time_s = child.wall_time_s;
  trial.peak_memory_bytes = child.peak_rss_bytes;
  for (const auto& w : report.windows) trial.losses.push_back(w.loss.value_or(std::nan("")));
  if (std::none_of(report.windows.begin(), report.windows.end(), [](const ReportWindow& w) { return w.loss.has_value(); })) trial.losses.clear();
  trial.windows = measured_throughputs(report, options_.warmup_windows);

  if (record_abnormal_end(trial, child, hang_limit)) return trial;
  if (!child.stopped && child.exit_code != 0) {
    const std::string last = error_line_of(log_path);
    // A program's own words for a full disk or a file size limit (strerror's, as Python's OSError
    // prints them) stop the tune only when the trials' own folder is short of room: they may be about
    // another file system (a container's 64 MiB /dev/shm under many loader workers), where the
    // trial is a crash like any other and the search goes on.
    const bool says_out_of_space = last.find("No space left on device") != std::string::npos || last.find("File too large") != std::string::npos ||
                                   last.find("Disk quota exceeded") != std::string::npos;
    if (says_out_of_space && short_of_room(dir)) throw OutOfSpace("tune", "the program ran out of space: " + last);
    const bool oom = last.find("out of memory") != std::string::npos || last.find("MemoryError") != std::string::npos;
    // A wrapper shell's 128 + the signal that killed what it ran (after the log's own words, which say more).
    const int sig = oom ? 0 : signal_of_shell_status(child.exit_code);
    trial.outcome = oom ? Outcome::Oom : outcome_of_signal(sig);
    trial.reason = "exit status " + std::to_string(child.exit_code) + (sig ? ", a process it ran " + signal_text(sig) : std::string()) + " (log: " +
                   log_path + "): " + last;
    return trial;
  }

  // A program stopped before it wrote a line (only the time cap stops one: compiling, say, or timed
  // as a whole process) had no chance to acknowledge its knobs: it was slower than the cap, not wrong.
  if (child.stopped && report.empty()) {
    trial.outcome = Outcome::Rejected;
    trial.reason = "stopped at the time cap (" + format_fixed(time_cap, 1) + " s) before it reported anything";
    return trial;
  }
  // A program that opened its report for writing, not appending, left only its last lines.
  const std::string rewritten = report.rewrites == 0 ? "" : "; the report file was rewritten or removed " + std::to_string(report.rewrites) +
                                                                " times while the program ran: open it for appending (mode \"a\")";
  // Every knob is acknowledged: on the command line, or applied with the same value.
  const auto placed = options_.program.command_placeholders();
  for (const auto& [knob, value] : full.items()) {
    if (placed.count(knob)) continue;
    if (report.empty()) {
      trial.outcome = Outcome::InvalidConfig;
      trial.reason = "knob " + knob + " is not acknowledged: the program reported nothing, and the command has no {" + knob +
                     "} placeholder (a program that reports nothing can only take its knobs on its command line" +
                     (options_.program.launcher_placeholders().count(knob) ? "; the launcher's is the launcher's, and the program may not see it)" : ")");
      return trial;
    }
    if (!report.applied.is_object() || !report.applied.contains(knob)) {
      trial.outcome = Outcome::InvalidConfig;
      trial.reason = "knob " + knob + " is not acknowledged: the program's knobs line does not list it (" +
                     (report.applied.is_object() ? "it lists " + report.applied.dump() : "it wrote none") + ")" + rewritten;
      return trial;
    }
    if (!same_value(report.applied[knob], value)) {
      trial.outcome = Outcome::InvalidConfig;
      trial.reason = "knob " + knob + ": the program applied " + report.applied[knob].dump() + ", not " + value.dump();
      return trial;
    }
  }

  // Above --memory-limit is out of memory, whichever objective the trial measures.
  if (options_.memory_limit_bytes > 0 && trial.peak_memory_bytes > options_.memory_limit_bytes) {
    trial.outcome = Outcome::Oom;
    trial.reason = "peak memory " + std::to_string(trial.peak_memory_bytes) + " B is above the limit " + std::to_string(options_.memory_limit_bytes) + " B";
    return trial;
  }
  if (report.empty()) {
    // Timed as a whole process: a run per wall second, or the run's wall time to the target.
    trial.windows = {1.0 / child.wall_time_s};
    set_throughput_from_windows(trial);
    if (to_target) trial.time_to_target_s = child.wall_time_s;
    return trial;
  }
  set_throughput_from_windows(trial);
  if (to_target) {
    if (const ReportEvaluation* e = reaching_evaluation(report, *options_.target)) {
      trial.time_to_target_s = e->elapsed_s.value_or(e->seen_s);
      return trial;
    }
    double best = std::nan("");
    std::set<std::string> others;  // metrics reported under another name, which the target cannot read
    for (const auto& e : report.evaluations) {
      if (e.metric != options_.target->metric) others.insert(e.metric == "metric" ? "(no \"metric\" field)" : e.metric);
      else if (std::isfinite(e.value))
        best = !std::isfinite(best) ? e.value : options_.target->higher_is_better ? std::max(best, e.value) : std::min(best, e.value);
    }
    std::string reported;
    for (const auto& name : others) reported += (reported.empty() ? "" : ", ") + name;
    trial.outcome = Outcome::Rejected;
    trial.reason = "did not reach the target " + options_.target->to_string() + ": best " + options_.target->metric + " " +
                   (std::isfinite(best) ? format_fixed(best, 4) : std::string("never reported")) + " in " + std::to_string(report.evaluations.size()) +
                   " evaluations, " + format_fixed(child.wall_time_s, 1) + " s" + (stop_reason == "time cap" ? " (the time cap)" : "") +
                   (others.empty() ? "" : "; its eval lines name " + reported + ", not " + options_.target->metric);
    return trial;
  }
  if (!child.stopped && !report.done) {
    trial.outcome = Outcome::Crashed;
    trial.reason = "exit status 0 but the report has no done line: the program stopped before it finished" + rewritten;
    return trial;
  }
  if (stop_reason == "outpaced") {
    trial.reason = "stopped early: its throughput's 95% interval lay below the best so far (" + format_fixed(request.stop_below, 0) + "/s)";
    trial.outpaced_by = request.race_id;
  }
  if (trial.windows.empty()) {
    trial.outcome = Outcome::Rejected;
    trial.reason = "no measured window: it reported " + std::to_string(report.windows.size()) + " windows, and the first " +
                   std::to_string(options_.warmup_windows) + " are warm-up" + rewritten;
    return trial;
  }
  return trial;
}

int CommandTrialExecutor::end_trials_left_running(const std::string& out) {
  int ended = 0;
  for (int round = 0; round < 10; ++round) {
    const int killed = kill_processes_with_environment("DYNO_TUNE_DIR=" + canonical_path(out));
    if (killed == 0) break;
    ended += killed;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ended;
}

}  // namespace dyno
