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

// How long a trial's process may run before it is killed as hung: `timeout_s` (--trial-timeout)
// for each of the units it measures (a budget level's cap grows with its units, and so does this).
inline double hang_limit_s(double timeout_s, int64_t units) { return timeout_s * static_cast<double>(units > 1 ? units : 1); }

}  // namespace dyno
