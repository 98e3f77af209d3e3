// The outcome of a trial whose child process did not end on its own, for both executors (a
// `dyno train` child and a user's program).
#pragma once

#include "dyno/reports/child_process.h"
#include "dyno/tuner/trial.h"

namespace dyno {

// Sets the trial's outcome when its process did not end on its own: "interrupted" (the tuner
// was), "timeout" (killed after `timeout_s`), or killed by a signal ("aborted" for SIGABRT, else
// "crashed"; a signal the caller sent to stop it, ChildResult::stopped, is not one). False when
// the process exited by itself (or was stopped), and the trial is untouched.
bool record_abnormal_end(Trial& trial, const ChildResult& child, double timeout_s);

// What a process killed by `signal` is (aborted for SIGABRT, else crashed), and its reason:
// "killed by signal N (name)", with the out-of-memory killer's hint for SIGKILL.
Outcome outcome_of_signal(int signal);
std::string signal_text(int signal);

// The signal an exit status of 128 + a killing signal (SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGKILL) stands for, as a shell reports what killed the program it ran (a wrapper script); 0 for
// another status.
int signal_of_shell_status(int exit_code);

// How long a trial's process may run before it is killed as hung: `timeout_s` (--trial-timeout)
// for each of the units it measures (a budget level's cap grows with its units, and so does this).
inline double hang_limit_s(double timeout_s, int64_t units) { return timeout_s * static_cast<double>(units > 1 ? units : 1); }

}  // namespace dyno
