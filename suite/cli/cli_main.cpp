#include "dyno/suite/cli/cli_main.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include "dyno/reports/user_error.h"
#include "dyno/reports/utf8_text.h"
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
      std::cerr << "dyno: '" << terminal_text(argv[1]) << "' is not a subcommand; one of " << names << " (dyno --help)\n";
      return 2;
    }
  }
  // `tune ... --command -- PROGRAM ...`, as dyno launch writes it: the "--" only ends dyno's options,
  // which --command does already.
  std::vector<char*> args(argv, argv + argc);
  const auto command = std::find_if(args.begin(), args.end(), [](const char* a) { return std::strcmp(a, "--command") == 0; });
  if (argc > 1 && std::strcmp(argv[1], "tune") == 0 && command != args.end() && command + 1 != args.end() && std::strcmp(*(command + 1), "--") == 0)
    args.erase(command + 1);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    std::ostringstream error;  // (--help's text goes to stdout as it is; an error can echo a value given)
    const int status = app.exit(e, std::cout, error);
    std::cerr << terminal_text(error.str());
    return status == 0 ? 0 : 2;
  }
  // The error line, on stderr and, for a rank `dyno launch` started, in the file it reads the
  // first failed rank's reason from; the values it echoes with their control characters written out.
  auto failed = [](const std::string& message, int status) {
    const std::string line = terminal_text(message);
    std::cerr << line << "\n";
    if (const char* path = std::getenv("DYNO_LAUNCH_REASON_FILE"); path && *path) std::ofstream(path) << line << "\n";
    return status;
  };
  auto one_line = [](std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  };
  try {
    all_workloads();  // a duplicate or incomplete DYNO_WORKLOAD stops every command before it runs
    return run_selected_command(app);
  } catch (const OutOfSpace& e) {
    return failed("dyno: " + std::string(e.what()), kExitOutOfSpace);
  } catch (const UserError& e) {
    return failed("dyno: " + std::string(e.what()), 2);
  } catch (const RankFailure& e) {
    return failed("dyno: " + std::string(e.what()), kExitRankFailed);
  } catch (const c10::DistError& e) {
    const auto what = one_line(e.what_without_backtrace());
    if (nccl_refused_usage(what)) return failed("dyno: [ddp] " + nccl_usage_failure(what), 2);
    return failed("dyno: [ddp] " + collective_failure(what), kExitRankFailed);
  } catch (const c10::Error& e) {
    // Most often a workload's parts that do not fit each other (a user's C++ workload is not
    // checked before training as a TorchScript model and its data are): its message, without
    // LibTorch's backtrace, on one line, the last of the log a trial's reason is read from.
    return failed("dyno: LibTorch stopped the run: " + one_line(e.what_without_backtrace()) +
                      " (check that the workload's model, data and loss fit: output shape, target type and range; if they do, this is a bug, "
                      "please report it)",
                  1);
  } catch (const std::exception& e) {
    return failed("dyno: internal error (this is a bug, please report it): " + one_line(e.what()), 1);
  }
}

}  // namespace dyno
