// Runs a program as a child process from an argument vector (fork + execv, never a shell), in
// its own process group, killed with its parent (PR_SET_PDEATHSIG) and after a timeout, with
// stdin from /dev/null and stdout and stderr sent to a log file. When it ends, whatever it left
// running in its process group is killed. Used wherever dyno measures something in a fresh process.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dyno {

struct ChildResult {
  bool timed_out = false;
  bool interrupted = false;  // `stop` became true and the child was killed
  bool stopped = false;      // ChildOptions::should_stop returned true and the child was killed
  bool signaled = false;
  int signal = 0;
  int exit_code = -1;
  double wall_time_s = 0;
  // The child's peak memory: with ChildOptions::measure_memory, the most its process group held at
  // once (sampled) or its own peak since it executed, whichever is larger (0 for a child that ended
  // before the first sample, 10 ms after its exec); otherwise the kernel's figure for it and its
  // waited-for descendants, which counts what the tuner itself held when it forked.
  int64_t peak_rss_bytes = 0;
};

// Leaves the distributed job this process inherited, if any: unsets the variables that make a
// process one of its ranks (c10d's, torchrun's agent and restarts, an srun task's rank and step
// size, an MPI launcher's rank and size: what the Python helper reads). For a process dyno starts as one rank of its own, or as a
// launcher of its own ranks (`dyno tune` run under a scheduler that sets WORLD_SIZE). MASTER_ADDR
// and MASTER_PORT stay: without WORLD_SIZE nothing joins a job by them, and a launcher template
// (srun) may need them.
void leave_distributed_job();

// What a caller adds to a child's start and watch.
struct ChildOptions {
  std::vector<std::string> environment;  // "NAME=value" entries added to (or replacing in) the inherited environment
  bool own_job = false;                  // the child leaves the distributed job this process is in (leave_distributed_job)
  // Asked about every 50 ms while the child runs, with its seconds since start: true kills it
  // (its process group) and sets ChildResult::stopped; for a caller that has seen what it needs.
  std::function<bool(double)> should_stop;
  // The CPUs the child (and what it starts) may run on, set before it executes; empty: any.
  std::vector<int> cpus;
  // Samples the memory of the child's process group (every 10 ms for its first half second, then
  // every half second): the sum of its processes' proportional set sizes (a page shared by forked
  // workers counted once), and the child's own peak since it executed. (A process that left the
  // group, as a new session, is not counted.)
  bool measure_memory = false;
  // Makes this process its descendants' subreaper: what the child started in a session or group of
  // its own (torchrun's ranks) and left running is killed and reaped once the child has ended, as
  // its group is. For a caller with one child at a time (another child's descendants would go too).
  bool reap_descendants = false;
  // The most the log may hold: past it, the log keeps its first eighth and last sixty-fourth with a
  // line between saying how much was cut (checked every half second and at the end; a chatty child
  // would otherwise fill the disk, while an error is in the tail and what the run was in the head).
  int64_t log_limit_bytes = int64_t{64} << 20;
};

ChildResult run_child(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s,
                      const std::atomic<bool>* stop = nullptr, const ChildOptions& options = {});

// Kills (SIGKILL) every process but this one whose environment holds `entry` ("NAME=value", the
// whole entry), as far as /proc lets this user read it; returns how many. What a killed tuner's
// trials left running (a kill -9 reaches only the trial's own process) is found by the tune's
// folder every process a trial started inherits.
int kill_processes_with_environment(const std::string& entry);

// A "Name:   123 kB" line of a /proc file (status, smaps_rollup), in bytes; 0 when the file or the line is missing.
int64_t proc_kib_field_bytes(const std::string& path, const std::string& name);

// The executable a program name stands for: the name itself when it contains a '/', else the
// first executable file of that name on PATH, as a shell would find it; empty when none.
std::string find_executable(const std::string& name);

// The last line of a (log) file with a letter or digit in it (a banner of '=' or a blank line says
// nothing), at most 400 characters; empty when unreadable.
std::string last_line_of(const std::string& path);
// The line of a (log) file that most likely says why its process failed: the last of its final 200
// lines that names an error ("Error", "Exception", "error:", "out of memory", dyno's "dyno: "; a
// launcher's footer may follow it), else last_line_of. At most 400 characters.
std::string error_line_of(const std::string& path);

}  // namespace dyno
