// Subcommands of the `dyno` CLI. Each add_* registers its options; run_selected_command runs the
// one the user chose and returns the process exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dyno {

struct RunConfig;

// --model / --data / --eval-data / --loss: a scripted model on tensor files (workload torchscript).
struct ModelFileArgs {
  std::string model;
  std::string data;
  std::string eval_data;
  std::string loss;
};
void add_model_file_options(CLI::App* command, ModelFileArgs& args);
// Sets workload=torchscript and the file knobs (as absolute paths, so that trials and saved
// configs find them from any folder) when --model is given; refuses --data without --model, and
// --model with a --workload (`workload_option`, empty when not given).
void apply_model_file_args(const ModelFileArgs& args, const std::string& workload_option, RunConfig& config);
// A --set workload= that names another workload than -w (--workload) is refused.
void refuse_second_workload(const std::string& workload_option, const RunConfig& config);

std::string version_text();

// Whether SIGHUP is ignored in this process (nohup, or a parent's `trap '' HUP`): a command that
// stops its children on a closed terminal leaves that choice as it is.
bool hangup_ignored();
void add_train_command(CLI::App& app);
void add_list_commands(CLI::App& app);
int run_selected_command(CLI::App& app);
// Subcommands defined elsewhere (the tuner's `tune`) register what runs when they are chosen.
void register_command_handler(const CLI::App* command, std::function<int()> handler);

}  // namespace dyno
