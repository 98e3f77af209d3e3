#include "dyno/trials/child_outcome.h"

#include <signal.h>

#include <cstring>
#include <string>

namespace dyno {

namespace {

// An exit status of 128 + a signal that kills (SIGABRT, SIGSEGV, SIGKILL...): a shell's report of
// the program it ran.
bool shell_signal(const ChildResult& child) {
  const int sig = child.exit_code - 128;
  return !child.signaled && (sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGKILL);
}

}  // namespace

bool record_abnormal_end(Trial& trial, const ChildResult& child, double timeout_s) {
  if (child.interrupted) {
    trial.outcome = Outcome::Interrupted;
    trial.reason = "the tuner was interrupted";
  } else if (child.timed_out) {
    trial.outcome = Outcome::Timeout;
    trial.reason = "no result within " + std::to_string(static_cast<int>(timeout_s)) + " s; killed";
  } else if ((child.signaled || shell_signal(child)) && !child.stopped) {
    // A shell that ran the program (a wrapper script) exits 128 + the signal that killed it.
    const int sig = child.signaled ? child.signal : child.exit_code - 128;
    trial.outcome = sig == SIGABRT ? Outcome::Aborted : Outcome::Crashed;
    trial.reason = std::string(child.signaled ? "killed by signal " : "exit status " + std::to_string(child.exit_code) + ": a process it ran was killed by signal ") +
                   std::to_string(sig) + " (" + ::strsignal(sig) + ")" + (sig == SIGKILL ? "; often the kernel's out-of-memory killer" : "");
  } else {
    return false;
  }
  return true;
}

}  // namespace dyno
