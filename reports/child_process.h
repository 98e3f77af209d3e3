// Runs a program as a child process from an argument vector (fork + execv, never a shell), in
// its own process group, killed with its parent (PR_SET_PDEATHSIG) and after a timeout, with
// stdout and stderr sent to a log file. Used wherever dyno measures something in a fresh process.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace dyno {

struct ChildResult {
  bool timed_out = false;
  bool interrupted = false;  // `stop` became true and the child was killed
  bool signaled = false;
  int signal = 0;
  int exit_code = -1;
  double wall_time_s = 0;
};

ChildResult run_child(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                      const std::atomic<bool>* stop = nullptr);

// The last line of a (log) file, at most 400 characters; empty when unreadable.
std::string last_line_of(const std::string& path);

}  // namespace dyno
