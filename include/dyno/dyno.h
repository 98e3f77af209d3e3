// dyno as a library. Define a workload (model, data, loss, metric, target, recipe), register it
// with DYNO_WORKLOAD, and DYNO_MAIN() makes your binary the whole dyno command line over it:
//
//   dyno::Workload my_model() { dyno::Workload w; w.name = "my-model"; ...; return w; }
//   DYNO_WORKLOAD(my_model);
//   DYNO_MAIN();
//
// then `my_tool tune -w my-model --out tuned`. Trials re-run the same binary, so the tuner, the
// convergence guard, DDP (`my_tool launch`) and the reports work unchanged (a main() of your own
// passes argv to run_cli unchanged: suite/cli/cli_main.h). Link dyno::cli.
// Includes <torch/torch.h>, for the model, and dyno::UserError, for load_data to refuse bad input:
// `throw dyno::UserError("data", "no file at " + path);` exits 2 printing "[data] no file at ...".
#pragma once

#include <torch/torch.h>

#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/cli_main.h"
#include "dyno/workloads/example_source.h"
#include "dyno/workloads/segmented_model.h"
#include "dyno/workloads/tensor_source.h"
#include "dyno/workloads/workload.h"
#include "dyno/workloads/workload_registry.h"

// A main() running the dyno command line; use once, at namespace scope, with a semicolon.
#define DYNO_MAIN()                                                         \
  int main(int argc, char** argv) { return ::dyno::run_cli(argc, argv); } \
  int main(int, char**)
