#include "dyno/suite/cli/tune_command.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <torch/cuda.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/child_process.h"
#include "dyno/reports/json_difference.h"
#include "dyno/reports/knob.h"
#include "dyno/reports/python_settings.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"
#include "dyno/reports/utf8_text.h"
#include "dyno/suite/cli/commands.h"
#include "dyno/suite/cli/option_checks.h"
#include "dyno/suite/device_backend.h"
#include "dyno/suite/engine.h"
#include "dyno/trials/command_trial_executor.h"
#include "dyno/trials/process_trial_executor.h"
#include "dyno/trials/program_command.h"
#include "dyno/tuner/journal.h"
#include "dyno/tuner/search_space.h"
#include "dyno/tuner/strategy.h"
#include "dyno/tuner/time_to_target.h"
#include "dyno/tuner/tune_report.h"
#include "dyno/tuner/tuner.h"
#include "dyno/tuner/verification.h"
#include "dyno/workloads/scripted_workload.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

struct TuneArgs {
  std::string workload;  // empty: default_workload()
  ModelFileArgs model_file;
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
  int verify_seeds = 1;
  bool no_verify = false;
  bool no_profile = false;
  bool quiet = false;
  int64_t max_ranks = 0;  // 0: the visible GPUs on CUDA, else 1
  // An external program (--command ...): its argument vector, the launcher, the target.
  std::vector<std::string> command;
  std::string launcher;
  std::string target;
  int64_t warmup_windows = 2;
  int64_t measure_windows = 16;
};

// Each axis at the base's value when the axis has it, else at its first value.
nlohmann::json start_point_for(const SearchSpace& space, const nlohmann::json& base) {
  nlohmann::json start = nlohmann::json::object();
  for (const auto& axis : space.axes()) {
    const auto wanted = base.value(axis.knob, nlohmann::json());
    start[axis.knob] = axis.values.front();
    for (const auto& v : axis.values)
      if (v == wanted) start[axis.knob] = v;  // the axis's value as the axis writes it (64, not 64.0): one point, one key
  }
  return start;
}

void on_interrupt(int) { TrialExecutor::interrupted = true; }

// What a trial executor is for: a search's throughput trials, its time-to-target trials, the
// verification's runs to the target (no memory limit), or the profiles of the default and the
// chosen configuration (throughput trials under LibTorch's profiler).
enum class TrialPurpose { Throughput, ToTarget, Verify, Profile };

// A profiled run of the default or the chosen configuration, for the tune report: its verdict,
// its report and trace, and what it is ("batch_size 512 with bf16").
nlohmann::json profile_entry(const Trial& trial) {
  nlohmann::json entry = {{"trial", trial.id}, {"outcome", trial.outcome}, {"reason", trial.reason}, {"report", trial.report_path},
                          {"verdict", nullptr}, {"trace", nullptr}, {"at", ""}};
  if (trial.report_path.empty() || !std::filesystem::exists(trial.report_path)) return entry;
  const RunReport report = read_report(trial.report_path);
  if (report.verdict) entry["verdict"] = to_json(*report.verdict);
  if (report.profile) entry["trace"] = report.profile->trace_path;
  const nlohmann::json& config = report.config;
  std::string at = "batch_size " + config.value("batch_size", nlohmann::json(0)).dump();
  if (config.value("amp", std::string("off")) != "off") at += " with " + config.value("amp", std::string());
  entry["at"] = at;
  return entry;
}

int64_t memory_limit_bytes(const TuneArgs& args) {
  return args.memory_limit.empty() ? 0 : static_cast<int64_t>(parse_bytes(args.memory_limit, "tune", "--memory-limit"));
}

// How trials run: `dyno train` of a workload, or an external program. `base` holds the knob
// values under every point (as JSON: the RunConfig's, or the program's point).
class TrialSource {
 public:
  virtual ~TrialSource() = default;
  virtual std::unique_ptr<TrialExecutor> executor(const nlohmann::json& base, const std::string& trial_dir, TrialPurpose purpose) const = 0;
  // The journal header's base_config: what must not change for --resume.
  virtual nlohmann::json header(const nlohmann::json& base) const = 0;
  // What best-config.json holds for `point` over `base`, and its companion file.
  virtual nlohmann::json best_config(const nlohmann::json& base, const nlohmann::json& point) const = 0;
  virtual void write_companion(const std::string& dir, const nlohmann::json& best_config) const = 0;
};

// A built-in or registered workload, each trial `dyno train --config` in a child process.
class WorkloadTrials : public TrialSource {
 public:
  WorkloadTrials(const TuneArgs& args, ProcessTrialOptions options) : args_(args), options_(std::move(options)) {}
  std::unique_ptr<TrialExecutor> executor(const nlohmann::json& base, const std::string& trial_dir, TrialPurpose purpose) const override {
    ProcessTrialOptions o = options_;
    o.base = config_from_json(base);
    o.trial_dir = trial_dir;
    if (purpose == TrialPurpose::ToTarget || purpose == TrialPurpose::Verify) {
      o.to_target = true;
      o.time_cap_s = args_.verify_cap_s;
      o.timeout_s = args_.verify_cap_s * 2;
    }
    if (purpose == TrialPurpose::Verify || purpose == TrialPurpose::Profile) o.memory_limit_bytes = 0;
    if (purpose == TrialPurpose::Profile) o.profile_steps = ProfileOptions{}.steps;
    return std::make_unique<ProcessTrialExecutor>(o);
  }
  nlohmann::json header(const nlohmann::json& base) const override { return base; }
  nlohmann::json best_config(const nlohmann::json& base, const nlohmann::json& point) const override {
    return to_json(config_from_json(point, config_from_json(base)));
  }
  void write_companion(const std::string& dir, const nlohmann::json& best_config) const override {
    // Resolved against the workload's recipe: the optimizer and the learning rate it trains with.
    const RunConfig config = config_from_json(best_config);
    const Workload workload = workload_for(config);
    const RunConfig resolved = resolve_config(config, workload);
    const std::string loss = !workload.loss ? "cross_entropy" : resolved.workload == kTorchScriptWorkload ? resolved.model_loss : "own";
    const PythonRecipe recipe{workload.recipe.weight_decay, workload.recipe.momentum, workload.recipe.warmup_fraction, loss};
    write_file_atomically(dir + "/best-config.py", best_config_python(resolved, recipe));
  }

 private:
  const TuneArgs& args_;
  ProcessTrialOptions options_;
};

// An external program (--command), each trial one run of it watched through its report.
class ProgramTrials : public TrialSource {
 public:
  ProgramTrials(const TuneArgs& args, CommandTrialOptions options, std::optional<TargetSpec> target)
      : args_(args), options_(std::move(options)), target_(std::move(target)) {}
  std::unique_ptr<TrialExecutor> executor(const nlohmann::json& base, const std::string& trial_dir, TrialPurpose purpose) const override {
    CommandTrialOptions o = options_;
    o.base = base;
    o.trial_dir = trial_dir;
    if (purpose != TrialPurpose::Throughput) {
      o.target = target_;
      o.time_cap_s = args_.verify_cap_s;
      o.timeout_s = args_.verify_cap_s * 2;
    }
    if (purpose == TrialPurpose::Verify) o.memory_limit_bytes = 0;
    return std::make_unique<CommandTrialExecutor>(o);
  }
  nlohmann::json header(const nlohmann::json& base) const override {
    nlohmann::json h = options_.program.to_json();
    h["base"] = base;
    h["target"] = args_.target;
    h["warmup_windows"] = options_.warmup_windows;
    h["windows_per_unit"] = options_.windows_per_unit;
    return h;
  }
  nlohmann::json best_config(const nlohmann::json& base, const nlohmann::json& point) const override {
    nlohmann::json full = base;
    full.update(point);
    nlohmann::json config = options_.program.best_config_json(full, options_.seed);
    config["working_directory"] = std::filesystem::current_path().string();  // where the trials ran: the command's relative paths
    return config;
  }
  // best-config.sh, and the point beside it as DYNO_POINT (a program may read its knobs there).
  void write_companion(const std::string& dir, const nlohmann::json& best_config) const override {
    write_file_atomically(dir + "/best-point.json", best_config["point"].dump(2) + "\n");
    write_file_atomically(dir + "/best-config.sh", "#!/bin/sh\n# dyno's tuned configuration: the command line and environment to run\n"
                                                   "point=\"$(CDPATH= cd -- \"$(dirname -- \"$0\")\" && pwd)/best-point.json\"\n"
                                                   "if [ -f \"$point\" ]; then DYNO_POINT=\"$point\"; export DYNO_POINT; fi\n" +
                                                       options_.program.best_config_shell(best_config["point"], options_.seed,
                                                                                          best_config["working_directory"].get<std::string>()) + "\n");
  }

 private:
  const TuneArgs& args_;
  CommandTrialOptions options_;
  std::optional<TargetSpec> target_;  // --target, for runs to the target
};

// One search: its own journal, trials folder and report in `dir`.
struct Phase {
  std::string dir;
  nlohmann::json base;
  std::unique_ptr<TrialExecutor> executor;
  std::unique_ptr<Tuner> tuner;
  double ended_s = 0;  // run time when its search ended
  int64_t expected_trials = 0;  // the search's trials when a plan knows them (time to target's); 0: its strategy's estimate
};

constexpr int64_t kLargestEnumeratedGrid = 1000000;

// An executor whose trials' time cap is asked for as each starts.
class CapAskedAtStart : public TrialExecutor {
 public:
  CapAskedAtStart(std::unique_ptr<TrialExecutor> inner, std::function<double()> cap) : inner_(std::move(inner)), cap_(std::move(cap)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    inner_->set_time_cap(cap_());
    return inner_->execute(point, request, name);
  }
  void set_time_cap(double seconds) override { inner_->set_time_cap(seconds); }

 private:
  std::unique_ptr<TrialExecutor> inner_;
  std::function<double()> cap_;
};

// What the console says about what is tuned.
struct Subject {
  std::string name;
  std::string device;
  std::string throughput_unit;
};

class TuneRun {
 public:
  TuneRun(const TuneArgs& args, Subject subject, const TrialSource& trials)
      : args_(args), subject_(std::move(subject)), trials_(trials), started_(Clock::now()) {}

  // `time_cap` (optional): each trial's cap, asked for as it starts, from the phase's trials so far
  // (a resumed run's replayed ones included, which run no trial).
  Phase& start_phase(const std::string& dir, const nlohmann::json& base, const SearchSpace& space, const TunerOptions& options_in,
                     TrialPurpose purpose, std::function<double(const Tuner&)> time_cap = nullptr) {
    auto phase = std::make_unique<Phase>();
    Phase* self = phase.get();
    phase->dir = dir;
    phase->base = base;
    TunerOptions options = options_in;
    options.journal_path = dir + "/journal.jsonl";
    nlohmann::json header = journal_header(options, space, trials_.header(base));
    // How each trial measured, and the axes' order (a resumed search asks for its points in it).
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& axis : space.axes()) axes.push_back(axis.knob);
    header["measurement"] = {{"--measure-steps", args_.measure_steps}, {"--trial-cap", args_.trial_cap_s}, {"--memory-limit", memory_limit_bytes(args_)},
                             {"--verify-cap", args_.verify_cap_s}, {"axis order", axes}};
    open_journal(dir, header, args_.resume);
    phase->executor = trials_.executor(base, dir + "/trials", purpose);
    if (time_cap) phase->executor = std::make_unique<CapAskedAtStart>(std::move(phase->executor), [self, time_cap] { return time_cap(*self->tuner); });
    options.on_trial = [this, self](const Trial& t, const Tuner& tuner) { progress(t, tuner, *self); };
    phase->tuner = std::make_unique<Tuner>(space, start_point_for(space, base), *phase->executor, options);
    if (!args_.quiet)
      std::fprintf(stderr, "[tune] %s on %s: strategy %s, objective %s, %zu axes (%lld grid points)%s; trials in %s\n", subject_.name.c_str(),
                   subject_.device.c_str(), options.strategy.c_str(), options.objective.c_str(), space.axes().size(),
                   static_cast<long long>(space.grid_size()), phase->tuner->resumed_from_journal() ? ", resuming" : "", dir.c_str());
    phases_.push_back(std::move(phase));
    return *phases_.back();
  }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  void progress(const Trial& t, const Tuner& tuner, const Phase& phase) const {
    if (args_.quiet) return;
    const Trial* best = tuner.best();
    const TunerOptions& o = tuner.options();
    std::string eta = "?";
    const int64_t done = tuner.executed_trials();
    const double per_trial = done > 0 ? tuner.spent_s() / static_cast<double>(done) : 0;
    // From the mean trial time and the trials the phase's plan or strategy expects (staged: an
    // estimate; "?" once it ran past it), or from the time budget.
    if (o.budget_s > 0 && o.max_trials <= 0) {
      eta = format_duration(std::max(0.0, o.budget_s - tuner.spent_s()));
    } else if (done > 0) {
      const int64_t expected = phase.expected_trials > 0 ? within_trial_limit(phase.expected_trials, o.max_trials)
                                                         : make_strategy(o.strategy)->expected_trials(tuner.space(), o.max_trials);
      if (expected > done) eta = "~" + format_duration(per_trial * static_cast<double>(expected - done));
    }
    // A verification trial trains to the target under either objective: its figure is that time.
    char trial_figure[48], best_figure[32];
    const bool to_target = !o.throughput();
    const auto seconds = [](const std::optional<double>& s) { return !s ? std::string("-") : *s < 60 ? format_fixed(*s, 1) + "s" : format_duration(*s); };
    if (to_target || t.role() == TrialRole::Verify)
      std::snprintf(trial_figure, sizeof trial_figure, "%s to target", seconds(t.time_to_target_s).c_str());
    else
      std::snprintf(trial_figure, sizeof trial_figure, "%9.0f %s/s", std::isfinite(t.samples_per_second) ? t.samples_per_second : 0.0,
                    subject_.throughput_unit.c_str());
    // The best's figure is its point's estimate over its processes (seeds, for time to target).
    const double estimate = best ? tuner.estimated_objective(best->point) : 0.0;
    if (to_target)
      std::snprintf(best_figure, sizeof best_figure, "%s", seconds(best ? std::optional<double>(1.0 / estimate) : std::nullopt).c_str());
    else
      std::snprintf(best_figure, sizeof best_figure, "%.0f", estimate);
    char figure[96];
    std::snprintf(figure, sizeof figure, "%s | best %s", trial_figure, best_figure);
    std::fprintf(stderr, "[tune %s] trial %lld %-13s %-10s %s | spent %s, ETA %s | %s\n", o.strategy.c_str(), static_cast<long long>(t.id),
                 t.stage.c_str(), to_string(t.outcome), figure, format_duration(elapsed_s()).c_str(), eta.c_str(),
                 describe_changes(tuner, t.point).c_str());
  }

  const TuneArgs& args_;
  Subject subject_;
  const TrialSource& trials_;
  Clock::time_point started_;
  std::vector<std::unique_ptr<Phase>> phases_;
};

// "noise between processes: 3.1% spread, slow spells in 8% of processes at 23% slower (...)", or for
// time to target "noise between seeds: 20.3% spread, no slow spells (...)": the noise model the
// decisions used (tuner/noise_model.h).
std::string describe_noise(const NoiseModel& noise) {
  char line[200];
  const double spread = 100.0 * (std::exp(noise.sigma()) - 1.0);
  if (noise.slow_chance() == 0)
    std::snprintf(line, sizeof line, "noise between seeds: %.1f%% spread, no slow spells (%.0f degrees of freedom)", spread, noise.degrees_of_freedom());
  else
    std::snprintf(line, sizeof line, "noise between processes: %.1f%% spread, slow spells in %.0f%% of processes at %.0f%% slower (%.0f degrees of freedom)",
                  spread, 100.0 * noise.slow_chance(), 100.0 * (1.0 - std::exp(-noise.slow_shift())), noise.degrees_of_freedom());
  return line;
}

// The console table of a tuner's trials.
std::string trials_table(const Tuner& tuner, const std::string& unit) {
  std::ostringstream out;
  char line[512];
  // Throughput trials show the median's 95% interval; time-to-target trials their time to the target.
  const bool to_target = !tuner.options().throughput();
  std::snprintf(line, sizeof line, "%4s  %-15s %-14s %12s  %-21s %9s %7s  %s\n", "id", "stage", "outcome", (unit + "/s").c_str(),
                to_target ? "to target s" : "95% interval", "peak MiB", "time s", "changes from start");
  out << line;
  const Trial* best = tuner.best();
  for (const auto& t : tuner.trials()) {
    if (!tuner.visible(t)) continue;  // journaled, but not part of this run (a resume that went another way)
    char interval[64] = "";
    if (t.time_to_target_s && (to_target || t.role() == TrialRole::Verify)) std::snprintf(interval, sizeof interval, "%.1f", *t.time_to_target_s);
    else if (t.ok() && t.role() != TrialRole::Verify) std::snprintf(interval, sizeof interval, "[%.0f, %.0f]", t.ci_low, t.ci_high);
    std::snprintf(line, sizeof line, "%4lld%s %-15s %-14s %12.0f  %-21s %9.0f %7.1f  %s\n", static_cast<long long>(t.id),
                  best && best->id == t.id ? "*" : " ", t.stage.c_str(), to_string(t.outcome),
                  std::isfinite(t.samples_per_second) ? t.samples_per_second : 0.0, interval,
                  static_cast<double>(t.peak_memory_bytes) / (1 << 20), t.wall_time_s, describe_changes(tuner, t.point).c_str());
    out << line;
    // (A program's words: cut at a character's boundary, its control characters written out.)
    if (!t.ok() && !t.reason.empty())
      out << "        " << terminal_text(t.reason.size() > 160 ? utf8_text(t.reason, 157) + "... (whole in report.json)" : t.reason) << "\n";
  }
  return out.str();
}

void write_outputs(const Phase& phase, TuneSummary summary, const TrialSource& trials) {
  summary.base_config = trials.header(phase.base);
  const Trial* best = phase.tuner->best();
  summary.best_config = best ? trials.best_config(phase.base, best->point) : nlohmann::json(nullptr);
  write_file_atomically(phase.dir + "/report.json", tune_report_json(*phase.tuner, summary).dump(2) + "\n");
  if (best) {
    write_file_atomically(phase.dir + "/best-config.json", summary.best_config.dump(2) + "\n");
    trials.write_companion(phase.dir, summary.best_config);
  }
}

// What `dyno tune` tunes: a workload through `dyno train` trials, or an external program.
struct Tunable {
  Subject subject;
  std::unique_ptr<TrialSource> trials;
  nlohmann::json base;      // knob values under every point
  SearchSpace space;        // the throughput search's
  SearchSpace convergence;  // time-to-target's second phase
  std::optional<Workload> workload;  // a workload's recipe (LR refinement, the recipe's batch)
  int64_t recipe_batch = 0;
  std::string metric;  // the verification's target, as printed
  double target = 0;
  bool target_reachable = true;  // false: a placeholder no run reaches (a TorchScript model's without --set target=)
  bool lr_fixed = false;  // --set lr: phase 2 does not refine the learning rate
};

// The knob a --set or --axis argument names ("batch_size=32,64" -> "batch_size").
std::string knob_of(const std::string& assignment) { return assignment.substr(0, assignment.find('=')); }

// Each --axis replaces its knob's axis; the same knob twice would silently keep only the last.
void override_axes(SearchSpace& space, const std::vector<std::string>& axes) {
  std::set<std::string> given;
  for (const auto& a : axes)
    if (!given.insert(knob_of(a)).second)
      throw UserError("tune", "--axis " + knob_of(a) + " is given twice; give its values in one --axis (knob=v1,v2,...)");
  for (const auto& a : axes) space.override_axis(a);
}

// The space in --space FILE; what is wrong with it names the file.
SearchSpace space_from_file(const std::string& path) {
  const nlohmann::json json = read_json_file(path, "space");
  try {
    return SearchSpace::from_json(json);
  } catch (const OutOfSpace&) {
    throw;
  } catch (const UserError& e) {
    const std::string message = e.what();
    throw UserError("space", "'" + path + "': " + (message.rfind("[space] ", 0) == 0 ? message.substr(8) : message));
  }
}

Tunable workload_tunable(const TuneArgs& args, bool to_target) {
  for (const auto& setting : args.settings) {
    const std::string knob = knob_of(setting);
    if (knob == "workload") throw UserError("tune", "--set " + setting + ": give the workload with -w (--workload)");
    if (knob == "save_state" || knob == "resume_state")
      throw UserError("tune", "--set " + setting + ": trials start fresh and save no state; " + knob + " is for dyno train");
  }
  Tunable t;
  RunConfig base;
  for (const auto& s : args.settings) apply_setting(base, s);
  base.workload = args.workload.empty() ? default_workload() : args.workload;
  apply_model_file_args(args.model_file, args.workload, base);
  t.workload = workload_for(base);
  const Workload& workload = *t.workload;
  // Without --max-ranks, every visible GPU may be a rank on CUDA.
  const int64_t max_ranks = args.max_ranks > 0 ? args.max_ranks : base.device == "cuda" ? std::max<int64_t>(1, torch::cuda::device_count()) : 1;
  t.space = args.space_path.empty()
                ? SearchSpace::default_for(base.device, workload.convolutional, static_cast<int64_t>(std::thread::hardware_concurrency()), max_ranks)
                : space_from_file(args.space_path);
  if (t.space.declares_knobs()) throw UserError("space", "declares knobs of its own (\"knobs\"): only a program given with --command can take them");
  override_axes(t.space, args.axes);
  // --max-ranks bounds every trial's ranks, a searched or set world size included.
  if (const Axis* ranks = t.space.find("ddp.world_size"); ranks && args.max_ranks > 0)
    for (const auto& value : ranks->values)
      if (value.is_number_integer() && value.get<int64_t>() > max_ranks)
        throw UserError("tune", "ddp.world_size " + value.dump() + " (in the space) is above --max-ranks " + std::to_string(max_ranks));
  if (args.max_ranks > 0 && base.ddp.world_size > max_ranks)
    throw UserError("tune", "--set ddp.world_size=" + std::to_string(base.ddp.world_size) + " is above --max-ranks " + std::to_string(max_ranks));
  resolve_config(base, workload);  // the settings' combination, and with the workload's recipe
  // A knob fixed with --set is the user's choice: the default space leaves its axis out, saying
  // so; a --space or --axis that searches it contradicts the setting. (The last --set of a knob wins.)
  std::map<std::string, std::string> fixed;
  for (const auto& setting : args.settings) fixed[knob_of(setting)] = setting;
  for (const auto& [knob, setting] : fixed) {
    if (!t.space.find(knob)) continue;
    const bool axis_given = !args.space_path.empty() ||
                            std::any_of(args.axes.begin(), args.axes.end(), [&](const std::string& a) { return knob_of(a) == knob; });
    if (axis_given)
      throw UserError("tune", "--set " + setting + " fixes " + knob + ", which " + (args.space_path.empty() ? "--axis" : "the --space") +
                                  " searches; give one or the other");
    t.space.remove_axis(knob);
    std::fprintf(stderr, "[tune] %s stays %s (--set): the default space's %s axis is left out\n", knob.c_str(),
                 setting.substr(knob.size() + 1).c_str(), knob.c_str());
  }
  if (!workload.convolutional) t.space.remove_axis("channels_last");
  // Checkpointing recomputes every segment but the last: a model of one segment has nothing to recompute.
  if (t.space.find("checkpointing") && in_workload_code("'" + workload.name + "': build_model()", workload.build_model)->segments().size() < 2) {
    t.space.remove_axis("checkpointing");
    std::fprintf(stderr, "[tune] checkpointing is not searched: the model is one segment, where it changes nothing\n");
  }
  if (t.space.axes().empty() && args.space_path.empty() && !to_target)
    throw UserError("tune", "every axis of the default space is fixed with --set; leave a knob unset (or give --axis) to search it");
  if (to_target) {
    t.convergence = take_convergence_axes(t.space, {workload.recipe.epochs, workload.metric_name == "accuracy" && !workload.loss});
    for (const auto& entry : fixed) t.convergence.remove_axis(entry.first);  // nor does phase 2 search a fixed knob
  }
  t.lr_fixed = fixed.count("lr") > 0;

  ProcessTrialOptions trial_options;
  trial_options.dyno_binary = current_executable();
  trial_options.launcher = split_command_line(args.launcher);
  if (!trial_options.launcher.empty()) {
    std::set<std::string> knobs;
    for (const auto& knob : all_knobs()) knobs.insert(knob.name);
    ProgramCommand(std::vector<std::string>{trial_options.dyno_binary}, trial_options.launcher).check_placeholders(knobs);
  }
  trial_options.measure_steps = args.measure_steps;
  trial_options.time_cap_s = args.trial_cap_s;
  trial_options.timeout_s = args.trial_timeout_s;
  trial_options.memory_limit_bytes = memory_limit_bytes(args);
  t.trials = std::make_unique<WorkloadTrials>(args, trial_options);
  t.subject = {workload.name, base.device, workload.throughput_unit};
  t.base = to_json(base);
  t.recipe_batch = workload.recipe.reference_batch_size;
  t.metric = workload.metric_name;
  t.target = base.target > 0 ? base.target : workload.target;
  // A TorchScript model's target is a placeholder (perfect accuracy, zero loss): a run to it trains
  // every epoch and shows nothing. A workload without one (0) is never reached.
  if ((workload.name == kTorchScriptWorkload || workload.target <= 0) && base.target <= 0) {
    const std::string which = workload.name == kTorchScriptWorkload ? "a --model" : "'" + workload.name + "' (its Workload::target is 0)";
    if (to_target)
      throw UserError("tune", "--objective time-to-target on " + which + " needs a reachable target: --set target=0.9 (for " + workload.metric_name + ")");
    t.target_reachable = false;
    if (!args.no_verify)
      std::fprintf(stderr, "[tune] no verification: %s has no target of its own to train to; give --set target=... to verify the pick\n", which.c_str());
  }
  return t;
}

Tunable program_tunable(const TuneArgs& args, bool to_target) {
  if (!args.settings.empty() || !args.model_file.model.empty() || args.max_ranks != 0 || !args.workload.empty())
    throw UserError("tune", "--workload, --set, --model and --max-ranks are for dyno's workloads; a --command program takes its knobs from --space and --axis");
  if (args.space_path.empty() && args.axes.empty())
    throw UserError("tune", "--command needs a search space: --space FILE or --axis knob=v1,v2 (dyno cannot guess a program's knobs)");
  if (to_target && args.target.empty())
    throw UserError("tune", "--objective time-to-target with --command needs --target METRIC>=VALUE (or <=), matched against the program's evaluations");
  const std::optional<TargetSpec> target = args.target.empty() ? std::nullopt : std::optional<TargetSpec>(TargetSpec::parse(args.target));
  Tunable t;
  t.space = args.space_path.empty() ? SearchSpace() : space_from_file(args.space_path);
  override_axes(t.space, args.axes);
  if (t.space.axes().empty()) throw UserError("space", "has no axes: give the program's knobs with their values");
  CommandTrialOptions options;
  options.program = ProgramCommand(args.command, split_command_line(args.launcher));
  options.tune_dir = args.out;
  std::set<std::string> knobs;
  for (const auto& axis : t.space.axes()) knobs.insert(axis.knob);
  options.program.check_placeholders(knobs);
  ProgramCommand::check_environment_names(knobs);
  options.seed = static_cast<int64_t>(args.seed);
  options.warmup_windows = args.warmup_windows;
  options.windows_per_unit = args.measure_windows;
  options.time_cap_s = args.trial_cap_s;
  options.timeout_s = args.trial_timeout_s;
  options.memory_limit_bytes = memory_limit_bytes(args);
  t.base = t.space.default_point();
  if (to_target) t.convergence = t.space.take_convergence_axes();
  if (t.base.contains("batch_size") && t.base["batch_size"].is_number_integer()) t.recipe_batch = t.base["batch_size"];
  // Named after its script when an interpreter runs one.
  const bool interpreted = args.command.size() > 1 && std::filesystem::path(args.command[0]).filename().string().rfind("python", 0) == 0;
  t.subject = {std::filesystem::path(args.command[interpreted ? 1 : 0]).filename().string(), "its own device", "items"};
  if (target) {
    t.metric = target->metric;
    t.target = target->value;
  } else if (!args.no_verify) {
    std::fprintf(stderr, "[tune] no verification: a --command program is trained to --target; give --target METRIC>=VALUE to verify the pick\n");
  }
  t.trials = std::make_unique<ProgramTrials>(args, options, target);
  return t;
}

// The throughput objective leaves the knobs items/s cannot judge at their defaults, saying so.
void leave_throughput_blind_knobs(Tunable& t) {
  if (t.space.axes().empty()) throw UserError("space", "has no axes: give the knobs to search with their values, or leave --space out for the default space");
  const SearchSpace blind = t.space.take_convergence_axes();
  for (const auto& axis : blind.axes())
    std::fprintf(stderr, "[tune] %s stays %s: %s; --objective time-to-target searches it\n", axis.knob.c_str(),
                 (axis.knob == "lr" && t.workload && t.base.value("lr", 0.0) == 0
                      ? nlohmann::json(resolve_config(config_from_json(t.base), *t.workload).lr).dump() + " (the recipe's)"
                      : t.base[axis.knob].dump()).c_str(),
                 t.space.knob(axis.knob).warmup_cost ? "it is declared warmup_cost, a price throughput does not see"
                                                     : "its role is convergence (it changes how many steps reach a target, not items/s)");
  if (t.space.axes().empty())
    throw UserError("space", "every axis is a knob whose role is convergence or that is declared warmup_cost, which the throughput objective leaves at its default: "
                             "nothing to search; use --objective time-to-target");
}

// A resumed time-to-target run whose phase 1 ran on (a larger budget) and chose another point than
// phase 2's journal started from: that phase 2 is set aside, journal and trials renamed, and starts
// afresh from the new winner.
void set_aside_phase_started_elsewhere(const std::string& dir, const nlohmann::json& base_header) {
  const std::string journal = dir + "/journal.jsonl";
  const nlohmann::json old = read_journal(journal).header;
  if (!old.is_object() || old.value("base_config", nlohmann::json()) == base_header) return;
  // The trials folder first, the journal last: a kill between the two leaves a trials folder set
  // aside without its journal, which the next resume completes under the same number.
  const std::string live = dir + "/trials";
  int n = 1;
  auto set_aside = [&](const char* kind, const char* ext) { return dir + "/" + kind + "-set-aside-" + std::to_string(n) + ext; };
  while (std::filesystem::exists(set_aside("journal", ".jsonl")) || (std::filesystem::exists(set_aside("trials", "")) && std::filesystem::exists(live))) ++n;
  const std::string kept = set_aside("journal", ".jsonl"), trials = set_aside("trials", "");
  if (std::filesystem::exists(live)) std::filesystem::rename(live, trials);
  // Its trials' reports where they now are; then the journal goes aside, in one rename.
  std::string text = read_file(journal), rewritten;
  for (size_t start = 0, end = 0; start < text.size(); start = end + 1) {
    end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("kind", "") == "trial" && j["trial"].value("report_path", "").rfind(live + "/", 0) == 0) {
      j["trial"]["report_path"] = trials + j["trial"]["report_path"].get<std::string>().substr(live.size());
      line = j.dump();
    }
    rewritten += line + (end < text.size() ? "\n" : "");
  }
  write_file_atomically(journal, rewritten);
  std::filesystem::rename(journal, kept);
  std::fprintf(stderr, "[tune] phase 2's journal %s started from another phase-1 winner (%s); phase 2 starts afresh, the earlier one kept as %s and %s\n",
               journal.c_str(), first_difference("base_config", old.value("base_config", nlohmann::json()), base_header).c_str(), kept.c_str(), trials.c_str());
}

// One tune at a time in a folder (tune.lock, held while this process runs the tune): two would
// write one journal, and a resume would end the running one's trials.
class FolderLock {
 public:
  explicit FolderLock(const std::string& out) {
    make_folder(out);
    fd_ = ::open((out + "/tune.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UserError("tune", "cannot create '" + out + "/tune.lock': " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw UserError("tune", "--out '" + out + "' is in use by another dyno tune (it holds tune.lock); wait for it to end, or choose another --out");
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

int run_tune(const TuneArgs& args) {
  if (args.out.empty()) throw UserError("tune", "--out DIR is required: the journal, reports and best config go there");
  if (args.objective != "throughput" && args.objective != "time-to-target")
    throw UserError("tune", "--objective: '" + args.objective + "' is not one of throughput, time-to-target");
  make_strategy(args.strategy);  // validates the name before anything runs
  if (args.trial_cap_s >= args.trial_timeout_s)
    throw UserError("tune", "--trial-cap " + format_fixed(args.trial_cap_s, 1) + " is not below --trial-timeout " + format_fixed(args.trial_timeout_s, 1) +
                                ": a trial measuring to its cap would be killed as hung; raise --trial-timeout or lower --trial-cap");
  const bool to_target = args.objective == "time-to-target";
  const bool program = !args.command.empty();
  // Resuming time to target over another objective's journal is refused now, not after phase 1.
  // (A time-to-target run interrupted in phase 1 has only its phase-1 journal, in throughput/.)
  const bool phase_one_only = args.resume && !std::filesystem::exists(args.out + "/journal.jsonl") &&
                              std::filesystem::exists(args.out + "/throughput/journal.jsonl");
  if (phase_one_only && !to_target)
    throw UserError("tune", "--resume: the journal in '" + args.out + "' was made with --objective time-to-target (its phase 1, in " + args.out +
                                "/throughput), not " + args.objective + "; give the same options as the first run, or choose another --out");
  if (const nlohmann::json old = args.resume ? read_journal(args.out + "/journal.jsonl").header : nlohmann::json();
      old.is_object() && old.contains("objective") && old["objective"] != args.objective)
    throw UserError("tune", "--resume: the journal in '" + args.out + "' was made with " + first_difference("objective", old.value("objective", nlohmann::json()), args.objective) +
                                "; give the same options as the first run, or choose another --out");
  // A folder of something else is not written over: a tune writes its journal first, so without one
  // (here or phase 1's) the files a tune writes are another's.
  if (!std::filesystem::exists(args.out + "/journal.jsonl") && !std::filesystem::exists(args.out + "/throughput/journal.jsonl"))
    for (const char* name : {"report.json", "best-config.json", "best-config.py", "best-config.sh", "best-point.json", "report.html", "trials", "throughput"})
      if (std::filesystem::exists(args.out + "/" + name))
        throw UserError("tune", "--out '" + args.out + "' holds " + name + " but no tuning journal: it is not a folder dyno tune made, and the tune would overwrite it; "
                                "choose an empty or new folder");
  Tunable tunable = program ? program_tunable(args, to_target) : workload_tunable(args, to_target);
  if (!to_target) leave_throughput_blind_knobs(tunable);
  const SearchSpace& space = tunable.space;
  const TrialSource& trials = *tunable.trials;
  // grid, random and halving hold every point of the space in memory before their first trial (as
  // time to target's phase 2, a grid, does its convergence axes).
  if (args.strategy != "staged" && space.grid_size() > kLargestEnumeratedGrid)
    throw UserError("tune", "--strategy " + args.strategy + ": the space has " + std::to_string(space.grid_size()) + " points, more than the " +
                                std::to_string(kLargestEnumeratedGrid) + " it enumerates; use fewer axis values, or --strategy staged");
  if (to_target && tunable.convergence.grid_size() > kLargestEnumeratedGrid)
    throw UserError("tune", "time to target's phase 2 searches a grid of the convergence axes, here " + std::to_string(tunable.convergence.grid_size()) +
                                " points, more than the " + std::to_string(kLargestEnumeratedGrid) + " it enumerates; use fewer values of lr, epochs, schedule...");

  TunerOptions options;
  options.strategy = args.strategy;
  options.objective = "throughput";
  options.max_trials = args.trials;
  options.budget_s = args.budget.empty() ? 0 : parse_duration_s(args.budget, "tune", "--budget");
  options.seed = args.seed;
  options.resume = args.resume;
  options.ties_prefer_smaller_batch = to_target;
  if (to_target) options.decision.indifference = DecisionRule::kThroughputPhaseIndifference;
  options.guard.exact_values = space.exact_values();
  const int64_t memory_limit = memory_limit_bytes(args);
  if (memory_limit > 0) options.memory_capacity_bytes = memory_limit;
  else if (!program) options.memory_capacity_bytes = device_memory_capacity_bytes(config_from_json(tunable.base));

  const FolderLock lock(args.out);
  if (args.resume && program)
    if (const int left = CommandTrialExecutor::end_trials_left_running(args.out))
      std::fprintf(stderr, "[tune] ended %d process(es) the interrupted run's trial left running\n", left);

  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  if (!hangup_ignored()) std::signal(SIGHUP, on_interrupt);  // a closed terminal or ssh session (nohup's stays ignored)
  // Trials' exit statuses are read with wait: a SIGCHLD inherited as ignored would reap them first.
  std::signal(SIGCHLD, SIG_DFL);
  TuneRun run(args, tunable.subject, trials);
  TuneSummary summary;
  summary.workload = tunable.subject.name;
  summary.device = tunable.subject.device;
  summary.throughput_unit = tunable.subject.throughput_unit;
  const nlohmann::json& base = tunable.base;
  Phase* throughput = nullptr;
  Phase* final_phase = nullptr;
  int status = 0;
  try {
    if (!to_target || !space.axes().empty()) {
      // Time to target's budget is the whole run's: phase 1 leaves phase 2 the trials its plan
      // expects, up to half of --trials, and half of --budget (its trials train to the target).
      TunerOptions phase_options = options;
      if (to_target) {
        TargetPhaseOptions expected;
        expected.seeds = args.verify_seeds;
        if (tunable.workload && !tunable.lr_fixed) expected.learning_rate = [](const nlohmann::json&) { return std::optional<double>(1.0); };
        const int64_t phase_two = TargetPhase(expected).expected_trials(tunable.convergence);
        if (options.max_trials > 0) phase_options.max_trials = std::max<int64_t>(1, options.max_trials - std::min(phase_two, options.max_trials / 2));
        phase_options.budget_s = options.budget_s / 2;
      }
      throughput = &run.start_phase(to_target ? args.out + "/throughput" : args.out, base, space, phase_options, TrialPurpose::Throughput);
      final_phase = throughput;
      throughput->tuner->run();
      throughput->ended_s = run.elapsed_s();
    }
    if (to_target) {
      nlohmann::json tuned_base = base;
      TargetPhaseOptions plan_options;
      if (throughput && throughput->tuner->best()) {
        tuned_base.update(throughput->tuner->best()->point);
        plan_options.batches = larger_batches(space, throughput->tuner->best()->point, tunable.recipe_batch);
        if (!plan_options.batches.empty()) tuned_base["batch_size"] = tunable.recipe_batch;  // the grid's batch
      }
      TunerOptions target_options = options;
      target_options.strategy = "grid";  // a handful of full training runs: all of them
      target_options.objective = "time-to-target";
      // --trials and --budget are the whole run's: phase 2 has what phase 1 left (a trial at least).
      if (throughput && options.max_trials > 0) target_options.max_trials = std::max<int64_t>(1, options.max_trials - throughput->tuner->executed_trials());
      if (throughput && options.budget_s > 0) target_options.budget_s = std::max(1e-3, options.budget_s - throughput->tuner->spent_s());
      plan_options.cap_s = args.verify_cap_s;
      plan_options.seeds = args.verify_seeds;
      if (tunable.workload) {
        plan_options.recipe_epochs = tunable.workload->recipe.epochs;
        if (!tunable.lr_fixed) {
          plan_options.learning_rate = [base = config_from_json(tuned_base), workload = *tunable.workload](const nlohmann::json& point) {
            return std::optional<double>(resolve_config(config_from_json(point, base), workload).lr);
          };
        }
      }
      if (args.resume && throughput) set_aside_phase_started_elsewhere(args.out, trials.header(tuned_base));
      auto plan = std::make_shared<TargetPhase>(plan_options);
      Phase& phase = run.start_phase(args.out, tuned_base, tunable.convergence, target_options, TrialPurpose::ToTarget,
                                     [plan](const Tuner& tuner) { return plan->next_time_cap(tuner); });
      final_phase = &phase;
      phase.expected_trials = plan->expected_trials(tunable.convergence);
      plan->run(*phase.tuner);
    }
    const bool can_verify = (!program || !args.target.empty()) && tunable.target_reachable;
    // (A copy: the tuner's trials grow with every run below.)
    const std::optional<nlohmann::json> best_point =
        final_phase->tuner->best() ? std::optional<nlohmann::json>(final_phase->tuner->best()->point) : std::nullopt;
    if (best_point && !args.no_verify && can_verify) {
      // Verification: the winner and the default configuration, both trained to the target.
      const auto tuned_verifier = trials.executor(final_phase->base, final_phase->dir + "/trials", TrialPurpose::Verify);
      const auto default_verifier = trials.executor(base, final_phase->dir + "/trials", TrialPurpose::Verify);
      // (A workload's seed is its `seed` knob; a program's, the budget level's DYNO_SEED.)
      VerificationPlan plan;
      plan.seeds = args.verify_seeds;
      plan.base_seed = program ? static_cast<int64_t>(args.seed) : base.value("seed", int64_t{0});
      plan.seed_as_level = program;
      summary.verification = verify_against_default(*final_phase->tuner, *tuned_verifier, *default_verifier, *best_point, plan);
    }
    if (best_point && !program && !args.no_profile) {
      // What limits the default and the chosen configuration: each run once more, profiled.
      const auto tuned_profiler = trials.executor(final_phase->base, final_phase->dir + "/trials", TrialPurpose::Profile);
      const auto default_profiler = trials.executor(base, final_phase->dir + "/trials", TrialPurpose::Profile);
      const Trial tuned = final_phase->tuner->verify(*tuned_profiler, *best_point, "best", 1, kProfileStage);
      const Trial fallback = final_phase->tuner->verify(*default_profiler, nlohmann::json::object(), "default", 1, kProfileStage);
      summary.profiles = {{"best", profile_entry(tuned)}, {"default", profile_entry(fallback)}};
    }
  } catch (const TuningInterrupted&) {
    std::fprintf(stderr, "[tune] interrupted: the trials so far are journaled under %s; continue with --resume\n", args.out.c_str());
    status = 130;
  }
  if (!final_phase) return status;
  const Tuner& tuner = *final_phase->tuner;
  if (const Trial* best = tuner.best(); !program && best && !best->report_path.empty() && std::filesystem::exists(best->report_path))
    summary.environment = to_json(read_report(best->report_path))["environment"];
  summary.wall_time_s = run.elapsed_s();
  const bool two_phases = throughput && throughput != final_phase;
  if (two_phases) {
    TuneSummary phase_summary = summary;
    phase_summary.verification = phase_summary.profiles = nullptr;  // phase 2's runs
    phase_summary.wall_time_s = throughput->ended_s;
    write_outputs(*throughput, phase_summary, trials);
    const Trial* b = throughput->tuner->best();
    summary.throughput_phase = {{"report", throughput->dir + "/report.json"},
                                {"strategy", throughput->tuner->options().strategy},
                                {"trials", throughput->tuner->executed_trials()},
                                {"trial_time_s", throughput->tuner->spent_s()},
                                {"best_changes", b ? nlohmann::json(describe_changes(*throughput->tuner, b->point)) : nlohmann::json(nullptr)},
                                {"best_samples_per_second", b ? nlohmann::json(b->samples_per_second) : nlohmann::json(nullptr)},
                                {"best_estimate", b ? nlohmann::json(throughput->tuner->estimated_objective(b->point)) : nlohmann::json(nullptr)}};
  }
  const Trial* best = tuner.best();
  if (best) {
    // What the best sets otherwise than the untuned configuration, which the verification compares
    // it with: in time to target phase 1's knobs (under phase 2's base) with phase 2's.
    nlohmann::json tuned = final_phase->base;
    tuned.update(best->point);
    for (const auto& [knob, value] : tuned.items())
      if (base.value(knob, nlohmann::json()) != value)
        summary.best_changes += (summary.best_changes.empty() ? "" : " ") + knob + "=" + knob_value_text(value);
    if (summary.best_changes.empty()) summary.best_changes = "(default)";
  }
  write_outputs(*final_phase, summary, trials);

  if (!args.quiet) {
    if (two_phases) {
      std::cout << "phase 1 (throughput, " << throughput->tuner->options().strategy << "):\n" << trials_table(*throughput->tuner, tunable.subject.throughput_unit);
      std::cout << "\nphase 2 (time to target: grid over the convergence knobs, batch and LR refinement, a final race on the next seeds):\n";
    }
    std::cout << trials_table(tuner, tunable.subject.throughput_unit);
    const double estimate = best ? tuner.estimated_objective(best->point) : 0.0;
    const size_t processes = best ? tuner.evidence(best->point).processes() : 0;
    if (best && !tuner.options().throughput()) {  // (time to target interrupted in phase 1 ends on phase 1's tuner)
      std::printf("\nbest: trial %lld, %.1f s to target estimated over %zu seed%s (this one %.1f s), %s\n", static_cast<long long>(best->id),
                  1.0 / estimate, processes, processes == 1 ? "" : "s", best->time_to_target_s.value_or(0.0), summary.best_changes.c_str());
    } else if (best) {
      std::printf("\nbest: trial %lld, %.0f %s/s estimated over %zu process%s (this one %.0f [%.0f, %.0f]), %s\n", static_cast<long long>(best->id),
                  estimate, tunable.subject.throughput_unit.c_str(), processes, processes == 1 ? "" : "es", best->samples_per_second, best->ci_low,
                  best->ci_high, summary.best_changes.c_str());
    } else {
      // (A run to the target that missed it ran: it is rejected, not failed.)
      auto ran = [](const Tuner& t) {
        return std::any_of(t.trials().begin(), t.trials().end(), [](const Trial& x) { return (x.ok() || x.outcome == Outcome::Rejected) && !x.after_search(); });
      };
      const bool any_ok = ran(tuner) || (throughput && ran(*throughput->tuner));
      std::printf("\n%s; see the reasons above\n", !any_ok   ? "no trial succeeded"
                                                  : to_target ? "no configuration reached the target in phase 2 (its runs to the target)"
                                                              : "no point ran without a failed process (one failed process rules a point out)");
    }
    if (best) std::printf("%s\n", describe_noise(tuner.noise()).c_str());
    if (!summary.verification.is_null()) {
      const auto& v = summary.verification;
      auto seconds = [](const nlohmann::json& t) {
        if (!t["time_to_target_s"].is_number()) return std::string("not reached");
        const double s = t["time_to_target_s"].get<double>();
        return format_fixed(s, s < 10 ? 2 : 1) + " s";  // a tiny run's seconds still tell its speed-up
      };
      for (const auto& p : v["seeds"])
        std::printf("verification (train to target %s %.4g, seed %lld): tuned %s, default %s, speedup %s\n", tunable.metric.c_str(),
                    tunable.target, static_cast<long long>(p["seed"].get<int64_t>()), seconds(p["best"]).c_str(),
                    seconds(p["default"]).c_str(), p["speedup"].is_null() ? "n/a" : (format_fixed(p["speedup"].get<double>(), 2) + "x").c_str());
      if (v["seeds"].size() > 1)
        std::printf("verification over %zu seeds: speedup %s (total default time / total tuned time)\n", v["seeds"].size(),
                    v["speedup"].is_null() ? "n/a" : (format_fixed(v["speedup"].get<double>(), 2) + "x").c_str());
    }
    if (summary.profiles.is_object()) {
      // "bottleneck: default input-bound at batch_size 64; tuned compute-bound, 38% of ... at batch_size 512 with bf16"
      std::string line;
      for (const char* which : {"default", "best"}) {
        const auto& entry = summary.profiles[which];
        const std::string label = std::string(which) == "best" ? "tuned" : "default";
        line += (line.empty() ? "" : "; ") + label + " " +
                (entry["verdict"].is_object() ? entry["verdict"]["headline"].get<std::string>() + " at " + entry["at"].get<std::string>()
                                              : "not profiled (" + entry["outcome"].get<std::string>() + ")");
      }
      std::printf("bottleneck: %s (profiles: trials/profile-*/trace.json)\n", line.c_str());
    }
    int64_t trial_count = tuner.executed_trials();
    double spent = tuner.spent_s();
    if (two_phases) {
      trial_count += throughput->tuner->executed_trials();
      spent += throughput->tuner->spent_s();
    }
    const bool resumed = tuner.resumed_from_journal() || (two_phases && throughput->tuner->resumed_from_journal());
    std::printf(resumed ? "tuning cost: %lld trials, %s of trials (the journal's included), %s wall this session\n"
                                             : "tuning cost: %lld trials, %s of trials, %s wall\n",
                static_cast<long long>(trial_count), format_duration(spent).c_str(),
                format_duration(summary.wall_time_s).c_str());
    const std::string companion = program ? "best-config.sh" : "best-config.py";
    const std::string& dir = final_phase->dir;  // (phase 1's folder when time to target stopped there)
    std::printf("wrote %s/report.json%s\n", dir.c_str(), best ? (", " + dir + "/best-config.json, " + dir + "/" + companion).c_str() : "");
  }
  if (status) return status;
  return best ? 0 : 3;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "search a workload's knobs for the fastest configuration that still converges");
  cmd->add_option("--workload,-w", args->workload, "workload name (see `dyno workloads`); default fashion-mlp (a binary of one workload: that one)")->check(not_empty());
  add_model_file_options(cmd, args->model_file);
  cmd->add_option("--space", args->space_path, "search space JSON: {\"axes\": {knob: [values] | {min, max, step|factor}}}")->check(not_empty());
  cmd->add_option("--axis,-a", args->axes, "override an axis: knob=v1,v2 | knob=lo:hi:xF | knob=lo:hi:+S (repeatable; a value twice counts once)")->take_all();
  cmd->add_option("--set,-s", args->settings, "knob=value for every trial (device, size, ...), repeatable")->take_all();
  cmd->add_option("--strategy", args->strategy, "grid | random | staged | halving")->capture_default_str();
  cmd->add_option("--budget", args->budget, "stop after this much trial time: 90s, 10m, 1h, 1m30s")->check(not_empty());
  cmd->add_option("--trials", args->trials, "stop after this many trials")->check(whole_number_in(1, 1000000));
  cmd->add_option("--objective", args->objective, "throughput | time-to-target")->capture_default_str();
  cmd->add_option("--memory-limit", args->memory_limit, "a trial whose peak memory is above this is oom (bytes, or 512M, 2G, 2GB: binary units)")
      ->check(not_empty());
  cmd->add_flag("--resume", args->resume, "continue the journal in --out (after an interruption or kill)");
  cmd->add_option("--out,-o", args->out, "output folder (journal, trials, report.json, best-config.json/.py)")->required()->check(folder_to_write());
  cmd->add_option("--seed", args->seed, "seed for the random and halving strategies, and a --command program's base seed (DYNO_SEED); --resume checks it")
      ->capture_default_str()
      ->check(whole_number_in(0, INT64_MAX));
  cmd->add_option("--measure-steps", args->measure_steps, "measured steps per trial (after warm-up), at budget level 1")
      ->capture_default_str()
      ->check(whole_number_in(1, 10000000));
  cmd->add_option("--trial-cap", args->trial_cap_s, "seconds a throughput trial may measure")->capture_default_str()->check(number_in(0.1, 1e7));
  cmd->add_option("--trial-timeout", args->trial_timeout_s, "seconds after which a throughput trial is killed and recorded as timeout (a trial measuring several units at a higher budget level: that many times; a run to the target: 2x --verify-cap)")->capture_default_str()->check(number_in(1, 1e7));
  cmd->add_option("--verify-cap", args->verify_cap_s, "seconds a run to the target (time to target, verification) may take; it is killed as hung after twice that")->capture_default_str()->check(number_in(1, 1e7));
  cmd->add_option("--verify-seeds", args->verify_seeds, "verification pairs (tuned, default), one per seed; the speedup is over all of them")
      ->capture_default_str()
      ->check(whole_number_in(1, 100));
  cmd->add_flag("--no-verify", args->no_verify, "skip training the winner and the default to the target");
  cmd->add_flag("--no-profile", args->no_profile,
                "skip profiling the default and the chosen configuration (two short runs under LibTorch's profiler that give each a bottleneck verdict)");
  cmd->add_flag("--quiet,-q", args->quiet, "no progress lines, table or summary (notices and errors still go to stderr): the results are in --out");
  cmd->add_option("--max-ranks", args->max_ranks,
                  "allow data-parallel trials up to this many local ranks (above 1: adds the ddp.* axes); default: the visible GPUs on CUDA, else 1")
      ->check(whole_number_in(1, 1024));
  cmd->add_option("--launcher", args->launcher,
                  "put this in front of every trial, e.g. 'torchrun --nproc-per-node {ddp.world_size}' or 'srun -n {ddp.world_size}' ({knob} placeholders)")
      ->check(not_empty());
  auto* command = cmd->add_flag("--command", "tune an external program: everything after --command is its argument vector, with {knob} "
                                             "placeholders (the last option; README: Tune any training program)");
  const std::vector<CLI::Option*> program_options = {
      cmd->add_option("--target", args->target, "--command: the evaluation that ends a run to the target, METRIC>=VALUE or METRIC<=VALUE (needed by time-to-target, and to verify the pick)")
          ->check(not_empty()),
      cmd->add_option("--warmup-windows", args->warmup_windows, "--command: the program's first windows not measured (compilation, warm-up)")
          ->capture_default_str()
          ->check(whole_number_in(0, 1000000)),
      cmd->add_option("--measure-windows", args->measure_windows, "--command: measured windows per throughput trial, at budget level 1")
          ->capture_default_str()
          ->check(whole_number_in(1, 1000000))};
  // Everything after --command is the program's, options included.
  cmd->prefix_command();
  register_command_handler(cmd, [args, cmd, command, program_options] {
    args->command = cmd->remaining();
    for (const auto* option : program_options)
      if (option->count() > 0 && command->count() == 0)
        throw UserError("tune", option->get_name() + " is for a --command program" +
                                    (option->get_name() == "--target" ? "; a workload's target is --set target=VALUE" : ""));
    if (command->count() == 0 && !args->command.empty())
      throw UserError("tune", "unexpected argument '" + args->command.front() + "' (an external program goes after --command)");
    if (command->count() > 0 && args->command.empty()) throw UserError("tune", "--command needs the program to run after it");
    try {
      return run_tune(*args);
    } catch (const OutOfSpace& e) {
      std::string message = e.what();
      if (message.rfind("[", 0) == 0 && message.find("] ") != std::string::npos) message = message.substr(message.find("] ") + 2);
      throw OutOfSpace("tune", message + "; the trials finished so far are journaled under " + args->out +
                                   ": free space, then continue with the same command and --resume");
    }
  });
}

}  // namespace dyno
