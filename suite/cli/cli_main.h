// The dyno command line as a library: run_cli parses argv and runs one subcommand (train, tune,
// check, compare, report, launch, workloads, knobs) over the workloads this binary registered.
// DYNO_MAIN() (dyno/dyno.h) is a main() that calls it; the `dyno` executable is exactly that.
// The binary runs itself again (/proc/self/exe): each tuner trial, check run and launched rank is
// `<binary> train --config ...`, and `train` may re-execute with its command line to set up the
// host allocator. A main() of one's own must therefore pass argv to run_cli unchanged and do
// nothing before it that may not happen twice.
// Exit status (the README's list): 0 success; 1 internal error (a bug), or a regression (compare,
// check); 2 bad input (config, flags, files, a duplicate workload) or an inconclusive comparison;
// 3 the run finished with an outcome other than ok (diverged, oom), or a tune found no
// configuration; 4 a data-parallel rank failed, or a baseline not comparable here; 75 out of
// space; 130 interrupted (dyno launch: 128 + the signal that stopped it).
#pragma once

namespace dyno {

// A run that finished with an outcome other than ok (dyno launch: a rank's, which stops no other).
constexpr int kExitRunNotOk = 3;

int run_cli(int argc, char** argv);

}  // namespace dyno
