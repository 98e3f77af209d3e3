#include "dyno/trials/child_outcome.h"

#include <signal.h>

#include <cstring>
#include <string>

namespace dyno {

Outcome outcome_of_signal(int signal) { return signal == SIGABRT ? Outcome::Aborted : Outcome::Crashed; }

std::string signal_text(int signal) {
  return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")" + (signal == SIGKILL ? "; often the kernel's out-of-memory killer" : "");
}

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
    trial.outcome = outcome_of_signal(child.signal);
    trial.reason = signal_text(child.signal);
  } else {
    return false;
  }
  return true;
}

}  // namespace dyno
