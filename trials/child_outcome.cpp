#include "dyno/trials/child_outcome.h"

#include <signal.h>

#include <cstring>
#include <string>

namespace dyno {

int signal_of_shell_status(int exit_code) {
  const int sig = exit_code - 128;
  return sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGKILL ? sig : 0;
}

bool record_abnormal_end(Trial& trial, const ChildResult& child, double timeout_s) {
  if (child.interrupted) {
    trial.outcome = Outcome::Interrupted;
    trial.reason = "the tuner was interrupted";
  } else if (child.timed_out) {
    trial.outcome = Outcome::Timeout;
    trial.reason = "no result within " + std::to_string(static_cast<int>(timeout_s)) + " s; killed";
  } else if (child.signaled && !child.stopped) {
    const int sig = child.signal;
    trial.outcome = sig == SIGABRT ? Outcome::Aborted : Outcome::Crashed;
    trial.reason = std::string("killed by signal ") + std::to_string(sig) + " (" + ::strsignal(sig) + ")" +
                   (sig == SIGKILL ? "; often the kernel's out-of-memory killer" : "");
  } else {
    return false;
  }
  return true;
}

}  // namespace dyno
