#include "tuner/tune_command.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>
#include <torch/cuda.h>

#include "reports/atomic_file.h"
#include "reports/quantity.h"
#include "reports/run_report.h"
#include "reports/user_error.h"
#include "suite/cli/commands.h"
#include "tuner/process_trial_executor.h"
#include "tuner/search_space.h"
#include "tuner/strategy.h"
#include "tuner/tune_report.h"
#include "tuner/tuner.h"
#include "workloads/workload.h"

namespace dyno {
namespace {

struct TuneArgs {
  std::string workload = "fashion-mlp";
  std::string space_path;
  std::vector<std::string> axes;
  std::vector<std::string> settings;
  std::string strategy = "staged";
  std::string budget;
  int64_t trials = 0;
  std::string objective = "throughput";
  std::string memory_limit;
  bool resume = false;
  std::string out;
  uint64_t seed = 0;
  int64_t measure_steps = 150;
  double trial_cap_s = 30;
  double trial_timeout_s = 300;
  double verify_cap_s = 900;
  bool no_verify = false;
  bool quiet = false;
  int64_t max_ranks = 1;
};

nlohmann::json start_point_for(const SearchSpace& space, const RunConfig& base) {
  const nlohmann::json base_json = to_json(base);
  nlohmann::json start = nlohmann::json::object();
  for (const auto& axis : space.axes()) {
    const auto& wanted = base_json[axis.knob];
    bool found = false;
    for (const auto& v : axis.values) found |= v == wanted;
    start[axis.knob] = found ? wanted : axis.values.front();
  }
  return start;
}

void on_interrupt(int) { ProcessTrialExecutor::interrupted = true; }

int run_tune(const TuneArgs& args) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  if (args.out.empty()) throw UserError("tune", "--out DIR is required: the journal, reports and best config go there");
  if (args.objective != "throughput" && args.objective != "time-to-target")
    throw UserError("tune", "--objective: '" + args.objective + "' is not one of throughput, time-to-target");
  make_strategy(args.strategy);  // validates the name before anything runs
  const Workload& workload = workload_or_throw(args.workload);

  RunConfig base;
  base.workload = workload.name;
  for (const auto& s : args.settings) apply_setting(base, s);
  base.workload = workload.name;

  // On CUDA, every visible GPU may be a rank unless --max-ranks says otherwise.
  const int64_t max_ranks = args.max_ranks > 1 || base.device != "cuda" ? args.max_ranks : std::max<int64_t>(1, torch::cuda::device_count());
  SearchSpace space = args.space_path.empty()
                          ? SearchSpace::default_for(base.device, workload.convolutional, static_cast<int64_t>(std::thread::hardware_concurrency()),
                                                     max_ranks)
                          : SearchSpace::from_json(read_json_file(args.space_path, "space"));
  for (const auto& a : args.axes) space.override_axis(a);
  if (!workload.convolutional) space.remove_axis("channels_last");

  std::filesystem::create_directories(args.out);
  const std::string journal = args.out + "/journal.jsonl";
  TunerOptions options;
  options.strategy = args.strategy;
  options.objective = args.objective;
  options.max_trials = args.trials;
  options.budget_s = args.budget.empty() ? 0 : parse_duration_s(args.budget, "tune", "--budget");
  options.seed = args.seed;
  options.journal_path = journal;
  options.resume = args.resume;
  const nlohmann::json header = journal_header(options, space, to_json(base));
  if (std::filesystem::exists(journal)) {
    if (!args.resume)
      throw UserError("tune", "'" + args.out + "' already holds a tuning journal; pass --resume to continue it, or choose another --out");
    std::ifstream in(journal);
    std::string first;
    std::getline(in, first);
    nlohmann::json old;
    try {
      old = nlohmann::json::parse(first);
    } catch (...) {
      throw UserError("journal", journal + " has no readable header line");
    }
    for (const char* key : {"strategy", "objective", "seed", "space", "base_config"})
      if (old[key] != header[key])
        throw UserError("tune", "--resume: the journal in '" + args.out + "' was made with another " + key + " (" + old[key].dump().substr(0, 200) +
                                    "); give the same options as the first run, or choose another --out");
  } else {
    append_line_durably(journal, header.dump());
  }

  ProcessTrialOptions trial_options;
  trial_options.dyno_binary = current_executable();
  trial_options.trial_dir = args.out + "/trials";
  trial_options.base = base;
  trial_options.measure_steps = args.measure_steps;
  trial_options.time_cap_s = args.objective == "time-to-target" ? args.verify_cap_s : args.trial_cap_s;
  trial_options.timeout_s = args.objective == "time-to-target" ? args.verify_cap_s * 2 : args.trial_timeout_s;
  trial_options.memory_limit_bytes = args.memory_limit.empty() ? 0 : static_cast<int64_t>(parse_bytes(args.memory_limit, "tune", "--memory-limit"));
  trial_options.to_target = args.objective == "time-to-target";
  // Trials log every 10 steps so that a short trial still yields enough windows for an interval.
  if (!trial_options.to_target) trial_options.base.log_every_steps = std::min<int64_t>(base.log_every_steps, 10);
  ProcessTrialExecutor executor(trial_options);

  const bool show = !args.quiet;
  const int64_t grid = space.grid_size();
  options.on_trial = [&, show](const Trial& t, const Tuner& tuner) {
    if (!show) return;
    const Trial* best = tuner.best();
    std::string eta = "?";
    const int64_t done = tuner.executed_trials();
    const double per_trial = done > 0 ? tuner.spent_s() / static_cast<double>(done) : 0;
    if (options.max_trials > 0) eta = format_duration(per_trial * static_cast<double>(options.max_trials - done));
    else if (options.budget_s > 0) eta = format_duration(options.budget_s - tuner.spent_s());
    else if (args.strategy == "grid" || args.strategy == "random") eta = format_duration(per_trial * static_cast<double>(grid - done));
    std::fprintf(stderr, "[tune %s] trial %lld %-13s %-10s %9.0f %s/s | best %.0f | spent %s, ETA %s | %s\n", args.strategy.c_str(),
                 static_cast<long long>(t.id), t.stage.c_str(), t.outcome.c_str(), std::isfinite(t.samples_per_second) ? t.samples_per_second : 0.0,
                 workload.throughput_unit.c_str(), best ? best->samples_per_second : 0.0,
                 format_duration(std::chrono::duration<double>(Clock::now() - started).count()).c_str(), eta.c_str(),
                 describe_changes(tuner, t.point).c_str());
  };
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);

  Tuner tuner(space, start_point_for(space, base), executor, options);
  if (show)
    std::fprintf(stderr, "[tune] %s on %s: strategy %s, objective %s, %zu axes (%lld grid points)%s; trials in %s\n", workload.name.c_str(),
                 base.device.c_str(), args.strategy.c_str(), args.objective.c_str(), space.axes().size(), static_cast<long long>(grid),
                 tuner.resumed_from_journal() ? ", resuming" : "", args.out.c_str());
  TuneSummary summary;
  summary.workload = workload.name;
  summary.device = base.device;
  summary.base = base;
  int status = 0;
  try {
    tuner.run();
    const Trial* best = tuner.best();
    if (best && !args.no_verify) {
      // Verification: the winner and the default configuration, both trained to the target.
      ProcessTrialOptions verify_options = trial_options;
      verify_options.base = base;
      verify_options.to_target = true;
      verify_options.time_cap_s = args.verify_cap_s;
      verify_options.timeout_s = args.verify_cap_s * 2;
      verify_options.memory_limit_bytes = 0;
      ProcessTrialExecutor verifier(verify_options);
      const nlohmann::json best_point = best->point;
      const Trial tuned = tuner.verify(verifier, best_point, "best");
      const Trial fallback = tuner.verify(verifier, nlohmann::json::object(), "default");
      auto describe = [](const Trial& t) {
        return nlohmann::json{{"outcome", t.outcome}, {"reason", t.reason}, {"time_to_target_s", t.time_to_target_s ? nlohmann::json(*t.time_to_target_s) : nlohmann::json(nullptr)},
                              {"samples_per_second", t.samples_per_second}, {"report", t.report_path}};
      };
      summary.verification = {{"best", describe(tuned)}, {"default", describe(fallback)}, {"speedup", nullptr}};
      if (tuned.time_to_target_s && fallback.time_to_target_s)
        summary.verification["speedup"] = *fallback.time_to_target_s / *tuned.time_to_target_s;
    }
  } catch (const TuningInterrupted&) {
    std::fprintf(stderr, "[tune] interrupted: %lld trials are in %s; continue with --resume\n", static_cast<long long>(tuner.executed_trials()), journal.c_str());
    status = 130;
  }
  if (const Trial* best = tuner.best(); best && !best->report_path.empty() && std::filesystem::exists(best->report_path))
    summary.environment = to_json(read_report(best->report_path))["environment"];
  summary.wall_time_s = std::chrono::duration<double>(Clock::now() - started).count();

  write_file_atomically(args.out + "/report.json", tune_report_json(tuner, summary).dump(2) + "\n");
  const Trial* best = tuner.best();
  if (best) {
    const nlohmann::json best_config = best_config_json(tuner, base);
    write_file_atomically(args.out + "/best-config.json", best_config.dump(2) + "\n");
    write_file_atomically(args.out + "/best-config.py", best_config_python(config_from_json(best_config)));
  }
  if (show) {
    std::cout << trials_table(tuner);
    if (best)
      std::printf("\nbest: trial %lld, %.0f %s/s [%.0f, %.0f], %s\n", static_cast<long long>(best->id), best->samples_per_second,
                  workload.throughput_unit.c_str(), best->ci_low, best->ci_high, describe_changes(tuner, best->point).c_str());
    else
      std::printf("\nno trial succeeded; see the reasons above\n");
    if (!summary.verification.is_null()) {
      const auto& v = summary.verification;
      std::printf("verification (train to target %s %.4g): tuned %s s, default %s s, speedup %s\n", workload.metric_name.c_str(), workload.target,
                  v["best"]["time_to_target_s"].dump().c_str(), v["default"]["time_to_target_s"].dump().c_str(),
                  v["speedup"].is_null() ? "n/a" : (std::to_string(v["speedup"].get<double>()).substr(0, 5) + "x").c_str());
    }
    std::printf("tuning cost: %lld trials, %s of trials, %s wall\n", static_cast<long long>(tuner.executed_trials()),
                format_duration(tuner.spent_s()).c_str(), format_duration(summary.wall_time_s).c_str());
    std::printf("wrote %s/report.json%s\n", args.out.c_str(), best ? (", " + args.out + "/best-config.json, " + args.out + "/best-config.py").c_str() : "");
  }
  if (status) return status;
  return best ? 0 : 3;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "search a workload's knobs for the fastest configuration that still converges");
  cmd->add_option("--workload,-w", args->workload, "workload name (see `dyno workloads`)")->capture_default_str();
  cmd->add_option("--space", args->space_path, "search space JSON: {\"axes\": {knob: [values] | {min, max, step|factor}}}");
  cmd->add_option("--axis,-a", args->axes, "override an axis: knob=v1,v2 | knob=lo:hi:xF | knob=lo:hi:+S (repeatable)")->take_all();
  cmd->add_option("--set,-s", args->settings, "knob=value for every trial (device, size, ...)")->take_all();
  cmd->add_option("--strategy", args->strategy, "grid | random | staged | halving")->capture_default_str();
  cmd->add_option("--budget", args->budget, "stop after this much trial time: 90s, 10m, 1h");
  cmd->add_option("--trials", args->trials, "stop after this many trials");
  cmd->add_option("--objective", args->objective, "throughput | time-to-target")->capture_default_str();
  cmd->add_option("--memory-limit", args->memory_limit, "reject trials whose peak memory is above this (bytes, or 512M, 2G)");
  cmd->add_flag("--resume", args->resume, "continue the journal in --out (after an interruption or kill)");
  cmd->add_option("--out,-o", args->out, "output folder (journal, trials, report.json, best-config.json/.py)")->required();
  cmd->add_option("--seed", args->seed, "seed for the random and halving strategies")->capture_default_str();
  cmd->add_option("--measure-steps", args->measure_steps, "measured steps per trial (after warm-up), at budget level 1")->capture_default_str();
  cmd->add_option("--trial-cap", args->trial_cap_s, "seconds a throughput trial may measure")->capture_default_str();
  cmd->add_option("--trial-timeout", args->trial_timeout_s, "seconds after which a trial is killed and recorded as timeout")->capture_default_str();
  cmd->add_option("--verify-cap", args->verify_cap_s, "seconds a train-to-target run may take")->capture_default_str();
  cmd->add_flag("--no-verify", args->no_verify, "skip training the winner and the default to the target");
  cmd->add_flag("--quiet,-q", args->quiet, "no progress lines or table");
  cmd->add_option("--max-ranks", args->max_ranks, "allow data-parallel trials up to this many local ranks (adds the ddp.* axes)")->capture_default_str();
  register_command_handler(cmd, [args] { return run_tune(*args); });
}

}  // namespace dyno
