// The dyno command line as a library: run_cli parses argv and runs one subcommand (train, tune,
// check, compare, report, launch, workloads, knobs) over the workloads this binary registered.
// DYNO_MAIN() (dyno/dyno.h) is a main() that calls it; the `dyno` executable is exactly that.
// Exit status: 0 success; 1 internal error (a bug); 2 bad input (config, flags, files, a
// duplicate workload); 3 the run finished with an outcome other than ok (diverged, oom).
#pragma once

namespace dyno {

int run_cli(int argc, char** argv);

}  // namespace dyno
