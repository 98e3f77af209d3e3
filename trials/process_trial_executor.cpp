#include "dyno/trials/process_trial_executor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/child_process.h"
#include "dyno/reports/host_allocator_environment.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"
#include "dyno/trials/child_outcome.h"
#include "dyno/trials/program_command.h"

namespace dyno {

std::string current_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("dyno") : path.string();
}

RunConfig ProcessTrialExecutor::trial_config(const nlohmann::json& point, const TrialRequest& request) const {
  RunConfig c = config_from_json(point, options_.base);
  if (options_.to_target) {
    // A time-to-target trial at budget level L is the point's L-th seed (a repeat, not a longer run).
    c.stop_at_target = true;
    c.time_limit_s = options_.time_cap_s;
    c.seed += request.budget_level - 1;
  } else {
    c.stop_at_target = false;
    c.final_eval = false;
    c.max_steps = c.warmup_steps + options_.profile_steps + options_.measure_steps * request.units;
    // About 16 windows per unit, so that the median's 95% interval is made of inner order
    // statistics (with 4 windows it is [min, max] and every pair of configs ties); the same
    // window length at every level, so that a point's processes are alike.
    c.log_every_steps = std::clamp<int64_t>(options_.measure_steps / 16, 1, std::min<int64_t>(c.log_every_steps, 10));
    c.time_limit_s = options_.time_cap_s * static_cast<double>(request.units);
    c.measure_rel_ci = options_.measure_rel_ci;
    c.measure_stop_below = request.stop_below;
    // (The LR schedule spans the configured epochs, so stopping early keeps the trajectory.)
    // (At least one throughput window past the warm-up, or the run would not count as measured.)
    if (request.loss_windows > 0)
      c.max_steps = std::min(c.max_steps, std::max(request.loss_windows * c.log_every_steps, c.warmup_steps + c.log_every_steps));
  }
  c.save_state.clear();
  c.resume_state.clear();
  return c;
}

Trial ProcessTrialExecutor::execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) {
  Trial trial;
  trial.point = point;
  trial.budget_level = request.budget_level;
  const std::string dir = options_.trial_dir + "/" + name;
  make_folder(dir);
  const std::string config_path = dir + "/config.json", report_path = dir + "/report.json", log_path = dir + "/log.txt";
  std::remove(report_path.c_str());
  RunConfig config;
  try {
    config = trial_config(point, request);
    validate_combination(config);
  } catch (const UserError& e) {
    trial.outcome = Outcome::InvalidConfig;
    trial.reason = e.what();
    return trial;
  }
  write_file_atomically(config_path, to_json(config).dump(2) + "\n");

  // A launcher (the user's, or `dyno launch` for a data-parallel trial) starts the ranks; a config's
  // world size other than 1 must be the launcher's (the engine refuses another).
  std::vector<std::string> launcher = options_.launcher;
  if (launcher.empty() && config.ddp.world_size > 1) launcher = {options_.dyno_binary, "launch", "--nproc", "{ddp.world_size}", "--"};
  std::vector<std::string> argv = {options_.dyno_binary, "train", "--config", config_path, "--out", report_path, "--no-progress"};
  if (options_.profile_steps > 0) argv.insert(argv.end(), {"--profile", dir + "/trace.json", "--profile-steps", std::to_string(options_.profile_steps)});
  if (!launcher.empty()) {
    try {
      argv = ProgramCommand(argv, launcher).argv_for(to_json(config), config.seed);
    } catch (const UserError& e) {
      trial.outcome = Outcome::InvalidConfig;
      trial.reason = e.what();
      return trial;
    }
  }
  // What the trial's host allocator needs from the process's start, so that `dyno train` need not
  // re-execute itself to get it.
  ChildOptions child_options;
  child_options.environment = host_allocator_start_environment(config.host_allocator);
  child_options.own_job = true;  // a trial is one rank, or its launcher's job
  child_options.reap_descendants = true;  // a launcher template's ranks (torchrun starts each in a session of its own)
  const double hang_limit = hang_limit_s(options_.timeout_s, options_.to_target ? 1 : request.units);
  const ChildResult child = run_child(argv, log_path, hang_limit, &interrupted, child_options);
  trial.wall_time_s = child.wall_time_s;
  trial.report_path = report_path;
  if (record_abnormal_end(trial, child, hang_limit)) return trial;
  const int code = child.exit_code;
  if (code == kExitOutOfSpace) {
    std::string last = error_line_of(log_path);
    if (last.rfind("dyno: [file] ", 0) == 0) last = last.substr(13);
    throw OutOfSpace("tune", name + ": " + last);
  }
  if (code == 2) {
    trial.outcome = Outcome::InvalidConfig;
    trial.reason = error_line_of(log_path);
    return trial;
  }
  // A launcher (torchrun) ends with 1 for whatever a rank's exit was: a report saying the run did
  // not end well (diverged, out of memory) is what happened.
  const bool reported_failure = code != 0 && code != 3 && std::filesystem::exists(report_path) && [&] {
    try {
      return read_report(report_path).outcome != Outcome::Ok;
    } catch (const UserError&) {
      return false;  // cut off mid-write: the exit status says more
    }
  }();
  if ((code != 0 && code != 3 && !reported_failure) || !std::filesystem::exists(report_path)) {
    trial.outcome = Outcome::Crashed;
    trial.reason = "exit status " + std::to_string(code) + " (log: " + log_path + "): " + error_line_of(log_path);
    return trial;
  }
  RunReport report = read_report(report_path);
  // (A run that ran out of memory may end before it records its world size.)
  if (report.outcome != Outcome::Oom && point.contains("ddp.world_size") && point["ddp.world_size"] != report.world_size) {
    trial.outcome = Outcome::InvalidConfig;
    trial.reason = "ddp.world_size: the point's is " + point["ddp.world_size"].dump() + " and the launcher started " +
                   std::to_string(report.world_size) + " ranks; give the launcher {ddp.world_size}";
    return trial;
  }
  trial.outcome = report.outcome;
  trial.reason = report.outcome_reason;
  trial.windows = report.throughput_windows;
  set_throughput_from_windows(trial);
  trial.samples_per_second = report.summary.samples_per_second;  // the run's own figure (data parallel: the ranks' sum)
  trial.peak_memory_bytes = report.summary.peak_memory_bytes;
  trial.time_to_target_s = report.summary.time_to_target_s;
  for (const auto& e : report.metric_curve) {  // the first evaluation at the target
    const double margin = report.summary.higher_is_better ? e.value - report.summary.target : report.summary.target - e.value;
    if (trial.time_to_target_s && margin >= 0) {
      trial.steps_to_target = e.step;
      trial.epochs_to_target = e.epoch;
      trial.target_margin = margin;
      break;
    }
  }
  if (report.summary.stop_reason == "outpaced") {
    trial.reason = "stopped early: its throughput's 95% interval lay below the best so far (" + format_fixed(request.stop_below, 0) + "/s)";
    trial.outpaced_by = request.race_id;
  }
  // The log points' losses, one a window, as the guard compares them point for point (not the
  // shorter interval after the last one).
  for (const auto& p : report.loss_curve)
    if (p.step % config.log_every_steps == 0) trial.losses.push_back(p.value);
  if (trial.ok() && report.throughput_windows.empty() && !options_.to_target) {
    trial.outcome = Outcome::Rejected;
    trial.reason = "no measurement window completed (raise the time cap or lower log_every_steps)";
  }
  if (trial.ok() && options_.memory_limit_bytes > 0 && trial.peak_memory_bytes > options_.memory_limit_bytes) {
    trial.outcome = Outcome::Oom;
    trial.reason = "peak memory " + std::to_string(trial.peak_memory_bytes) + " B is above the limit " +
                   std::to_string(options_.memory_limit_bytes) + " B";
  }
  if (trial.ok() && options_.to_target && !trial.time_to_target_s) {
    trial.outcome = Outcome::Rejected;
    char reason[256];
    std::snprintf(reason, sizeof reason, "did not reach the target: %s %.4g (target %.4g) when it stopped (stop: %s, after %.2f epochs, %.1f s; cap %.0f s)",
                  report.summary.metric_name.c_str(), report.summary.final_metric, report.summary.target, report.summary.stop_reason.c_str(),
                  report.summary.epochs, report.summary.wall_time_s, config.time_limit_s);
    trial.reason = reason;
  }
  return trial;
}

}  // namespace dyno
