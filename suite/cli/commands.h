// Subcommands of the `dyno` CLI. Each add_* registers its options; run_selected_command runs the
// one the user chose and returns the process exit status.
#pragma once

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace dyno {

std::string version_text();
void add_train_command(CLI::App& app);
void add_list_commands(CLI::App& app);
int run_selected_command(CLI::App& app);
// Subcommands defined elsewhere (the tuner's `tune`) register what runs when they are chosen.
void register_command_handler(const CLI::App* command, std::function<int()> handler);

}  // namespace dyno
