#include "dyno/suite/cli/commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include <CLI/CLI.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/knob.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/option_checks.h"
#include "dyno/suite/distributed/distributed_context.h"
#include "dyno/suite/engine.h"
#include "dyno/suite/environment.h"
#include "dyno/suite/process_settings.h"
#include "dyno/workloads/scripted_workload.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

std::map<const CLI::App*, std::function<int()>>& handlers() {
  static std::map<const CLI::App*, std::function<int()>> table;
  return table;
}

struct TrainArgs {
  std::string workload;
  ModelFileArgs model_file;
  std::string config_path;
  std::vector<std::string> settings;
  std::string out;
  bool progress = false;
  bool no_progress = false;
  bool json = false;
  std::string profile;
  int64_t profile_steps = ProfileOptions{}.steps;
};

// runs/WORKLOAD-DATE-TIME.json, with -2, -3... where runs of one second would share it.
std::string default_out(const std::string& workload) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  std::string path = "runs/" + workload + "-" + stamp + ".json";
  for (int n = 2; std::filesystem::exists(path); ++n) path = "runs/" + workload + "-" + stamp + "-" + std::to_string(n) + ".json";
  return path;
}

RunConfig build_config(const std::string& config_path, const std::string& workload, const std::vector<std::string>& settings) {
  RunConfig config;
  config.workload = default_workload();
  if (!config_path.empty()) {
    nlohmann::json j = read_json_file(config_path, "config");
    // A run report or tuner best-config may be given directly: take its "config" block.
    if (j.contains("config") && j["config"].is_object() && j.contains("schema_version")) {
      check_schema_version(j, "'" + config_path + "'");  // another major's config may mean other things
      j = j["config"];
    }
    if (j.is_object() && j.value("kind", nlohmann::json()) == "tune")
      throw UserError("config", "'" + config_path + "' is a tuning report; give the best-config.json beside it");
    if (j.is_object() && j.contains("argv") && j.contains("point"))
      throw UserError("config", "'" + config_path + "' is a tuned program's best configuration (dyno tune --command); run it with the best-config.sh beside it");
    config = config_from_json(j, config);
  }
  if (!workload.empty()) config.workload = workload;
  for (const auto& s : settings) apply_setting(config, s);
  refuse_second_workload(workload, config);
  return config;
}

void print_summary(const RunReport& r, const std::string& path) {
  const auto& s = r.summary;
  std::printf("outcome           %s%s%s\n", to_string(r.outcome), r.outcome_reason.empty() ? "" : ": ", r.outcome_reason.c_str());
  if (r.throughput_windows.empty() && r.outcome != Outcome::Ok)
    std::printf("%-17s not measured: the run ended (%s) before a measurement window completed\n", (s.throughput_unit + "/s").c_str(), to_string(r.outcome));
  else if (r.throughput_windows.empty())
    std::printf("%-17s not measured: no window of log_every_steps %lld completed after the warm-up (warmup_steps %lld%s) in its %lld "
                "steps; raise max_steps or lower log_every_steps\n",
                (s.throughput_unit + "/s").c_str(), static_cast<long long>(r.config.value("log_every_steps", int64_t{0})),
                static_cast<long long>(r.config.value("warmup_steps", int64_t{0})), r.profile ? ", then the profiled steps" : "",
                static_cast<long long>(s.steps));
  else
    std::printf("%-17s %.1f (spread %.1f%%)\n", (s.throughput_unit + "/s").c_str(), s.samples_per_second, 100 * s.samples_per_second_spread);
  if (s.target > 0)
    std::printf("%-17s %.4f (target %.4f, %s)\n", s.metric_name.c_str(), s.final_metric, s.target, s.target_reached ? "reached" : "not reached");
  else
    std::printf("%-17s %.4f (no target: the workload sets none; --set target=VALUE)\n", s.metric_name.c_str(), s.final_metric);
  if (s.time_to_target_s) std::printf("time to target    %.1f s\n", *s.time_to_target_s);
  else std::printf("time to target    null\n");
  std::printf("steps             %lld (%.2f epochs, stop: %s)\n", static_cast<long long>(s.steps), s.epochs, s.stop_reason.c_str());
  if (s.skipped_steps > 0)
    std::printf("skipped steps     %lld: amp=fp16's gradient scaler found inf/NaN gradients and skipped their update\n", static_cast<long long>(s.skipped_steps));
  std::printf("wall time         %.1f s\n", s.wall_time_s);
  std::printf("peak memory       %.1f MiB (%s)\n", static_cast<double>(s.peak_memory_bytes) / (1 << 20), s.peak_memory_kind.c_str());
  for (const auto& [name, p] : r.phases)
    if (name != "eval") std::printf("  %-15s %8.3f ms/step %5.1f%%\n", name.c_str(), p.per_step_ms, 100 * p.fraction);
  if (r.verdict) std::printf("verdict           %s\n", r.verdict->sentence.c_str());
  if (r.profile) {
    const auto& p = *r.profile;
    std::printf("profile           %lld steps, %.3f ms/step; top ops by self time:\n", static_cast<long long>(p.steps),
                1000.0 * p.wall_s / static_cast<double>(std::max<int64_t>(p.steps, 1)));
    for (size_t i = 0; i < p.ops.size() && i < 8; ++i)
      std::printf("  %-40s %6.1f%% %6lld calls  %s\n", p.ops[i].name.substr(0, 40).c_str(), 100 * p.ops[i].self_s / p.wall_s,
                  static_cast<long long>(p.ops[i].calls), p.ops[i].input_shapes.substr(0, 60).c_str());
    std::printf("trace             %s (open in https://ui.perfetto.dev or chrome://tracing)\n", p.trace_path.c_str());
  }
  std::printf("report            %s\n", path.c_str());
}

}  // namespace

bool hangup_ignored() {
  struct sigaction current {};
  return ::sigaction(SIGHUP, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

std::string version_text() { return "dyno " + dyno_revision() + " (LibTorch " + libtorch_version() + ")"; }

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  auto* cmd = app.add_subcommand("train", "train one workload under one configuration and write its run report");
  cmd->add_option("--workload,-w", args->workload, "workload name (see `dyno workloads`); default: the --config's, else fashion-mlp (a binary of one workload: that one)")->check(not_empty());
  add_model_file_options(cmd, args->model_file);
  cmd->add_option("--config,-c", args->config_path, "JSON config (knob -> value); a run report or best-config.json also works")->check(not_empty());
  cmd->add_option("--set,-s", args->settings, "knob=value, repeatable (see `dyno knobs`)")->take_all();
  cmd->add_option("--out,-o", args->out, "report path (default runs/<workload>-<time>.json)")->check(file_to_write());
  auto* progress = cmd->add_flag("--progress", args->progress, "always show the progress line");
  cmd->add_flag("--no-progress", args->no_progress, "never show the progress line")->excludes(progress);
  cmd->add_flag("--json", args->json, "print the report JSON to stdout instead of the summary");
  auto* profile = cmd->add_option("--profile", args->profile,
                  "profile the steps right after warm-up with LibTorch's profiler: Chrome trace JSON to this path, op table and "
                  "bottleneck verdict in the report (the profiled steps are not part of the measured figures)")->check(file_to_write());
  cmd->add_option("--profile-steps", args->profile_steps, "steps to profile with --profile")->capture_default_str()->check(whole_number_in(1, 100000))->needs(profile);
  handlers()[cmd] = [args] {
    RunConfig config = build_config(args->config_path, args->workload, args->settings);
    apply_model_file_args(args->model_file, args->workload, config);
    // No file this run writes may be another it writes or one it reads (the model, the data).
    refuse_writing_over("train", {{"--out", args->out}, {"--profile", args->profile}, {"save_state", config.save_state}},
                        {{"the model (model_file)", config.model_file}, {"the data (data_file)", config.data_file},
                         {"the evaluation data (eval_data_file)", config.eval_data_file}, {"the config (--config)", args->config_path}});
    // (save_state may be the state the run resumes from: it is replaced by the newer state.)
    refuse_writing_over("train", {{"--out", args->out}, {"--profile", args->profile}}, {{"the training state (resume_state)", config.resume_state}});
    // Where the state goes is checked before training, not after it.
    if (!config.save_state.empty()) {
      if (names_a_folder(config.save_state))
        throw UserError("config", "save_state: '" + config.save_state + "' is a folder; give a file path");
      const std::filesystem::path parent = std::filesystem::path(config.save_state).parent_path();
      if (!parent.empty()) make_folder(parent.string());
      // The save's temporary file (beside the file a link names), made and removed now: a place it
      // cannot be written is said before the training. A device or FIFO is written in place.
      auto cannot_write = [&] { return UserError("config", "save_state: cannot write '" + config.save_state + "': " + std::strerror(errno)); };
      struct stat s {};
      if (::stat(config.save_state.c_str(), &s) == 0 && !S_ISREG(s.st_mode)) {
        if (::access(config.save_state.c_str(), W_OK) != 0) throw cannot_write();
      } else {
        const std::string probe = canonical_path(config.save_state) + ".tmp." + std::to_string(::getpid());
        const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) throw cannot_write();
        ::close(fd);
        ::unlink(probe.c_str());
      }
    }
    load_host_allocator(config.host_allocator);  // a preloaded malloc re-executes this command first
    EngineOptions options;
    options.progress = !args->no_progress && (args->progress || ::isatty(STDERR_FILENO)) && process_rank() == 0;
    options.profile = {args->profile, args->profile_steps};
    RunReport report = Engine(options).run(config);
    // Rank 0 writes the job's report; a rank that ran out of memory writes it instead, since the
    // launcher stops the others as soon as it exits.
    if (process_rank() != 0 && report.outcome != Outcome::Oom) return report.outcome == Outcome::Ok ? 0 : 3;
    const std::string out = args->out.empty() ? default_out(config.workload) : args->out;
    write_report(out, report);
    if (args->json) std::cout << to_json(report).dump(2) << "\n";
    else print_summary(report, out);
    return report.outcome == Outcome::Ok ? 0 : 3;
  };
}

void add_list_commands(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* workloads = app.add_subcommand("workloads", "list the workloads this binary defines (train and tune also take --model, a TorchScript file)");
  workloads->add_flag("--json", *json, "machine-readable output");
  handlers()[workloads] = [json] {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& w : all_workloads())
      list.push_back({{"name", w.name}, {"description", w.description}, {"data", w.data_description},
                      {"metric", w.metric_name}, {"higher_is_better", w.higher_is_better}, {"target", w.target},
                      {"target_note", w.target_note}, {"throughput_unit", w.throughput_unit},
                      {"recipe", {{"optimizer", w.recipe.optimizer}, {"lr", w.recipe.lr}, {"schedule", w.recipe.schedule},
                                  {"epochs", w.recipe.epochs}, {"weight_decay", w.recipe.weight_decay}}}});
    if (*json) {
      std::cout << list.dump(2) << "\n";
      return 0;
    }
    for (const auto& w : list)
      std::cout << std::left << std::setw(19) << w["name"].get<std::string>() << w["description"].get<std::string>() << "\n"
                << std::setw(19) << "" << "data: " << w["data"].get<std::string>() << "\n"
                << std::setw(19) << "" << "target: " << w["metric"].get<std::string>()
                << (w["higher_is_better"].get<bool>() ? " >= " : " <= ") << w["target"].get<double>() << " ("
                << w["target_note"].get<std::string>() << ")\n";
    return 0;
  };
  auto knobs_json = std::make_shared<bool>(false);
  auto* knobs = app.add_subcommand("knobs", "list every configuration knob with its default and valid values");
  knobs->add_flag("--json", *knobs_json, "machine-readable output");
  handlers()[knobs] = [knobs_json] {
    if (*knobs_json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& k : all_knobs())
        list.push_back({{"name", k.name}, {"type", to_string(k.type)}, {"default", k.default_value()}, {"valid", k.valid_text()},
                        {"tunable", k.tunable}, {"description", k.description}});
      std::cout << list.dump(2) << "\n";
      return 0;
    }
    size_t width = 0;  // the longest name, and a space
    for (const auto& k : all_knobs()) width = std::max(width, k.name.size() + 1);
    for (const auto& k : all_knobs())
      std::cout << std::left << std::setw(static_cast<int>(width)) << k.name << std::setw(15) << k.default_value().dump() << " " << k.description
                << " (" << k.valid_text() << ")\n";
    return 0;
  };
}

void add_model_file_options(CLI::App* command, ModelFileArgs& args) {
  command->add_option("--model", args.model, "a TorchScript model to train (torch.jit.script(model).save(path)); sets workload=torchscript")->check(not_empty());
  command->add_option("--data", args.data, "with --model: training data, torch.save({\"inputs\": X, \"targets\": Y}, path)")->check(not_empty());
  command->add_option("--eval-data", args.eval_data, "with --model: evaluation data in the same form (default: the data's last 10%)")->check(not_empty());
  command->add_option("--loss", args.loss, "with --model: cross_entropy (class targets, accuracy) or mse (float targets, val_loss)")->check(not_empty());
}

void refuse_second_workload(const std::string& workload_option, const RunConfig& config) {
  if (!workload_option.empty() && config.workload != workload_option)
    throw UserError("cli", "--workload " + workload_option + " and --set workload=" + config.workload + ": give the workload once");
}

void apply_model_file_args(const ModelFileArgs& args, const std::string& workload_option, RunConfig& config) {
  // The files as absolute paths, however given: a report or best config runs again from anywhere.
  auto absolute = [](const std::string& path) { return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string(); };
  for (std::string* file : {&config.model_file, &config.data_file, &config.eval_data_file}) *file = absolute(*file);
  if (!args.model.empty() && !workload_option.empty())
    throw UserError("cli", "--workload " + workload_option + " and --model: a --model is the workload (workload=torchscript); give one of them");
  if (args.model.empty()) {
    if (!args.data.empty() || !args.eval_data.empty() || !args.loss.empty())
      throw UserError("cli", "--data, --eval-data and --loss go with --model (a TorchScript model); built-in workloads bring their own data");
    return;
  }
  if (config.workload != RunConfig{}.workload && config.workload != kTorchScriptWorkload)
    throw UserError("cli", "workload=" + config.workload + " (--set or --config) and --model: a --model is the workload (workload=torchscript); give one of them");
  config.workload = kTorchScriptWorkload;
  // A file given both ways must be the same file.
  for (const auto& [option, given, knob, file] : {std::tuple{"--model", &args.model, "model_file", &config.model_file},
                                                  std::tuple{"--data", &args.data, "data_file", &config.data_file},
                                                  std::tuple{"--eval-data", &args.eval_data, "eval_data_file", &config.eval_data_file}}) {
    if (given->empty()) continue;
    if (!file->empty() && *file != absolute(*given))
      throw UserError("cli", std::string(option) + " '" + *given + "' and " + knob + "='" + *file + "' (--set or --config) name two files; give it once");
    *file = absolute(*given);
  }
  if (!args.loss.empty()) set_knob(config, "model_loss", args.loss);
}

void register_command_handler(const CLI::App* command, std::function<int()> handler) { handlers()[command] = std::move(handler); }

int run_selected_command(CLI::App& app) {
  for (auto* sub : app.get_subcommands()) {
    auto it = handlers().find(sub);
    if (it != handlers().end()) return it->second();
  }
  throw UserError("cli", "no subcommand given; see dyno --help");
}

}  // namespace dyno
