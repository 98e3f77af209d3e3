#include "dyno/suite/cli/cli_main.h"

#include <algorithm>
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/commands.h"
#include "dyno/suite/cli/compare_commands.h"
#include "dyno/suite/cli/launch_command.h"
#include "dyno/suite/cli/report_command.h"
#include "dyno/suite/cli/tune_command.h"
#include "dyno/suite/distributed/rank_failure.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {

int run_cli(int argc, char** argv) {
  // A file size limit (ulimit -f) then fails a write with EFBIG, reported like a full disk,
  // instead of killing the process mid-write. Ignored signals stay ignored in child processes.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"dyno: benchmark and auto-tune LibTorch training loops"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  add_train_command(app);
  add_list_commands(app);
  add_tune_command(app);
  add_compare_commands(app);
  add_report_command(app);
  add_launch_command(app);
  // CLI11 reads an unknown first word as a stray argument and asks for "a subcommand".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + command->get_name();
      known = known || command->get_name() == argv[1];
    }
    if (!known) {
      std::cerr << "dyno: '" << argv[1] << "' is not a subcommand; one of " << names << " (dyno --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    all_workloads();  // a duplicate or incomplete DYNO_WORKLOAD stops every command before it runs
    return run_selected_command(app);
  } catch (const OutOfSpace& e) {
    std::cerr << "dyno: " << e.what() << "\n";
    return kExitOutOfSpace;
  } catch (const UserError& e) {
    std::cerr << "dyno: " << e.what() << "\n";
    return 2;
  } catch (const RankFailure& e) {
    std::cerr << "dyno: " << e.what() << " (the launcher's last line names the rank that failed first)\n";
    return kExitRankFailed;
  } catch (const c10::DistError& e) {
    std::string message = e.what_without_backtrace();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << "dyno: [ddp] a collective with the other ranks failed: " << message
              << " (another rank failed or the connection to it was lost; the launcher's last line names the rank that failed first)\n";
    return kExitRankFailed;
  } catch (const c10::Error& e) {
    // Most often a workload's parts that do not fit each other (a user's C++ workload is not
    // checked before training as a TorchScript model and its data are): its message, without
    // LibTorch's backtrace, on one line, the last of the log a trial's reason is read from.
    std::string message = e.what_without_backtrace();
    std::replace(message.begin(), message.end(), '\n', ' ');
    std::cerr << "dyno: LibTorch stopped the run: " << message
              << " (check that the workload's model, data and loss fit: output shape, target type and range; if they do, this is a bug, "
                 "please report it)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "dyno: internal error (this is a bug, please report it): " << e.what() << "\n";
    return 1;
  }
}

}  // namespace dyno
