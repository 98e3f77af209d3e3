// The `dyno` command line: train one configuration, list workloads and knobs (and, from the
// tuner and reports issues, tune / compare / check / report).
// Exit status: 0 success; 1 internal error (a bug); 2 bad input (config, flags, files);
// 3 the run finished with an outcome other than ok (diverged, oom).
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "reports/user_error.h"
#include "suite/cli/commands.h"
#include "suite/cli/compare_commands.h"
#include "suite/cli/launch_command.h"
#include "suite/cli/report_command.h"
#include "tuner/tune_command.h"

int main(int argc, char** argv) {
  CLI::App app{"dyno: benchmark and auto-tune LibTorch training loops"};
  app.require_subcommand(1);
  app.set_version_flag("--version", dyno::version_text());
  dyno::add_train_command(app);
  dyno::add_list_commands(app);
  dyno::add_tune_command(app);
  dyno::add_compare_commands(app);
  dyno::add_report_command(app);
  dyno::add_launch_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return dyno::run_selected_command(app);
  } catch (const dyno::UserError& e) {
    std::cerr << "dyno: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dyno: internal error (this is a bug, please report it): " << e.what() << "\n";
    return 1;
  }
}
