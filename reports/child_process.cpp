#include "dyno/reports/child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"
#include "dyno/reports/utf8_text.h"

namespace dyno {

namespace {

// A process's parent and group (/proc/PID/stat's fourth and fifth fields, after the command's parentheses).
bool parent_and_group_of(const char* pid, pid_t& parent, pid_t& group) {
  std::FILE* file = std::fopen((std::string("/proc/") + pid + "/stat").c_str(), "re");
  if (!file) return false;
  char text[512];
  const size_t n = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[n] = '\0';
  const char* after = std::strrchr(text, ')');
  int p = -1, g = -1;
  if (!after || std::sscanf(after + 1, " %*c %d %d", &p, &g) != 2) return false;
  parent = p;
  group = g;
  return true;
}

// The memory a child and what it started hold now (ChildOptions::measure_memory): its process group
// and every descendant of it outside the group (torchrun's ranks, each in a session of its own).
int64_t group_memory_bytes(pid_t group) {
  std::map<pid_t, pid_t> parent_of;
  std::set<pid_t> counted;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      pid_t parent = -1, its_group = -1;
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0])) || !parent_and_group_of(e->d_name, parent, its_group)) continue;
      const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
      parent_of[pid] = parent;
      if (its_group == group) counted.insert(pid);
    }
    ::closedir(proc);
  }
  for (const auto& [pid, parent] : parent_of) {  // descendants: a chain of parents that reaches the child
    pid_t up = parent;
    for (int depth = 0; depth < 64 && up > 1 && !counted.count(pid); ++depth) {
      if (up == group) counted.insert(pid);
      const auto next = parent_of.find(up);
      up = next == parent_of.end() ? 0 : next->second;
    }
  }
  int64_t total = 0;
  for (const pid_t pid : counted) total += proc_kib_field_bytes("/proc/" + std::to_string(pid) + "/smaps_rollup", "Pss");
  return std::max(total, proc_kib_field_bytes("/proc/" + std::to_string(group) + "/status", "VmHWM"));
}

// This process's children, from /proc/PID/stat's fourth field.
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> children;
  const pid_t self = ::getpid();
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      pid_t parent = -1, group = -1;
      if (std::isdigit(static_cast<unsigned char>(e->d_name[0])) && parent_and_group_of(e->d_name, parent, group) && parent == self)
        children.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    }
    ::closedir(proc);
  }
  return children;
}

// What a child left running outside its group, re-parented here (the subreaper): killed and
// reaped, round by round (a killed process's own children come here next).
void reap_leftovers() {
  for (int round = 0; round < 100; ++round) {
    const auto left = children_of_this_process();
    if (left.empty()) return;
    for (const pid_t p : left) ::kill(p, SIGKILL);
    for (const pid_t p : left) ::waitpid(p, nullptr, 0);
  }
}

// Closes the descriptors first..last (close_range, or one by one below 1024 where it is missing).
void close_descriptors(unsigned first, unsigned last) {
  if (::close_range(first, last, 0) != 0)
    for (unsigned fd = first; fd <= std::min(last, 1023u); ++fd) ::close(static_cast<int>(fd));
}

// What keep_log_bounded has cut from a log: the child's bytes, and the line it wrote saying so
// (after the head, so the next cut takes it too).
struct LogCut {
  int64_t output = 0, line = 0;
};

// Cuts the log to its head and a line saying how much of the child's output went (over the whole
// run) once it holds more than `limit` bytes. While the child runs, what it writes next follows
// that line (a write racing the cut may go uncounted); once it has ended, the log's tail is kept after it.
void keep_log_bounded(const std::string& path, int64_t limit, LogCut& cut, bool ended) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  struct stat info {};
  const int64_t head = limit / 8, tail = ended ? limit / 64 : 0;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > limit) {
    std::string last(static_cast<size_t>(tail), '\0');
    const ssize_t got = ::pread(fd, last.data(), last.size(), info.st_size - tail);
    if (got >= 0 && ::ftruncate(fd, head) == 0) {
      cut.output += info.st_size - head - got - cut.line;
      const std::string line = "\n[dyno] ... " + std::to_string(cut.output) + " bytes of output cut here: a log past " +
                               std::to_string(limit >> 20) + " MiB keeps its head and its tail ...\n";
      cut.line = static_cast<int64_t>(line.size());
      const std::string text = line + last.substr(0, static_cast<size_t>(got));
      for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
    }
  }
  ::close(fd);
}

}  // namespace

void leave_distributed_job() {
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT",
                           "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK", "ROLE_WORLD_SIZE",
                           "ROLE_NAME", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                           "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE"})
    ::unsetenv(name);
}

int kill_processes_with_environment(const std::string& wanted) {
  int killed = 0;
  const pid_t self = ::getpid();
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0])) || std::atoi(e->d_name) == self) continue;
      std::ifstream in(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
      for (std::string entry; std::getline(in, entry, '\0');)
        if (entry == wanted) {
          killed += ::kill(static_cast<pid_t>(std::atoi(e->d_name)), SIGKILL) == 0;
          break;
        }
    }
    ::closedir(proc);
  }
  return killed;
}

int64_t proc_kib_field_bytes(const std::string& path, const std::string& name) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (!file) return 0;
  char line[256];
  int64_t kib = 0;
  const std::string field = name + ":";
  while (std::fgets(line, sizeof line, file))
    if (std::strncmp(line, field.c_str(), field.size()) == 0) {
      kib = std::strtoll(line + field.size(), nullptr, 10);
      break;
    }
  std::fclose(file);
  return kib * 1024;
}

ChildResult run_child(const std::vector<std::string>& args, const std::string& log_path, double timeout_s,
                      const std::atomic<bool>* stop, const ChildOptions& options) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> owned = args;
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Closed by the child's exec (close-on-exec): memory is sampled once it has read end of file, for
  // until then the child's memory is the tuner's, forked.
  if (options.reap_descendants) ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  int exec_pipe[2] = {-1, -1};
  if (options.measure_memory && ::pipe2(exec_pipe, O_CLOEXEC) != 0) exec_pipe[0] = exec_pipe[1] = -1;
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    for (const int fd : exec_pipe)
      if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Not the terminal: a read from it would stop a background process group (SIGTTIN) until the timeout.
    if (const int null = ::open("/dev/null", O_RDONLY); null >= 0) {
      ::dup2(null, STDIN_FILENO);
      if (null != STDIN_FILENO) ::close(null);
    }
    int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    if (options.own_job) leave_distributed_job();
    for (const auto& entry : options.environment) {
      const auto eq = entry.find('=');
      ::setenv(entry.substr(0, eq).c_str(), eq == std::string::npos ? "" : entry.c_str() + eq + 1, 1);
    }
    if (!options.cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int cpu : options.cpus) CPU_SET(cpu, &set);
      if (::sched_setaffinity(0, sizeof set, &set) != 0) {
        std::fprintf(stderr, "cannot run on the CPUs asked for: %s\n", std::strerror(errno));
        ::_exit(127);
      }
    }
    // Only the standard streams go on: a descriptor the tuner inherited (a CI job's output pipe)
    // held open by a trial's leftover process would keep whoever waits on it waiting.
    const unsigned keep = exec_pipe[1] >= 3 ? static_cast<unsigned>(exec_pipe[1]) : 2;  // (the exec closes it)
    if (keep > 3) close_descriptors(3, keep - 1);
    close_descriptors(keep + 1, ~0U);
    ::execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  if (exec_pipe[1] >= 0) {
    ::close(exec_pipe[1]);
    ::fcntl(exec_pipe[0], F_SETFL, O_NONBLOCK);
  }
  ChildResult result;
  int status = 0;
  struct rusage usage {};
  double asked_at = 0, memory_at = -1, log_checked_at = 0;
  int64_t peak_memory = 0;
  LogCut log_cut;
  for (;;) {
    // Ended (not yet reaped, so its process group still exists): what it started and left running
    // goes with it, rather than run on into the next measurement.
    siginfo_t ended {};
    const int waited = ::waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOHANG | WNOWAIT);
    if (waited == 0 && ended.si_pid == pid) {
      ::kill(-pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    if (waited != 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): its status is lost
      ::kill(-pid, SIGKILL);  // what it left running still goes
      if (exec_pipe[0] >= 0) ::close(exec_pipe[0]);
      result.wall_time_s = std::chrono::duration<double>(Clock::now() - start).count();
      if (options.reap_descendants) reap_leftovers();
      return result;  // exit_code -1
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (exec_pipe[0] >= 0) {  // end of file once the child executed (or ended)
      char byte;
      if (::read(exec_pipe[0], &byte, 1) == 0) {
        ::close(exec_pipe[0]);
        exec_pipe[0] = -1;
      }
    }
    // Every 10 ms for its first half second (a short program's peak), then every half second.
    if (options.measure_memory && exec_pipe[0] < 0 && (memory_at < 0 || elapsed < 0.5 || elapsed - memory_at >= 0.5)) {
      memory_at = elapsed;
      peak_memory = std::max(peak_memory, group_memory_bytes(pid));
    }
    if (elapsed - log_checked_at >= 0.5) {
      log_checked_at = elapsed;
      keep_log_bounded(log_path, options.log_limit_bytes, log_cut, false);
    }
    if (!result.timed_out && !result.interrupted && !result.stopped) {
      if (stop && *stop) {
        result.interrupted = true;
        ::kill(-pid, SIGKILL);
      } else if (timeout_s > 0 && elapsed > timeout_s) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
      } else if (options.should_stop && elapsed - asked_at >= 0.05) {
        asked_at = elapsed;
        if (options.should_stop(elapsed)) {
          result.stopped = true;
          ::kill(-pid, SIGKILL);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (exec_pipe[0] >= 0) ::close(exec_pipe[0]);
  result.wall_time_s = std::chrono::duration<double>(Clock::now() - start).count();  // (what the child left is not its time)
  keep_log_bounded(log_path, options.log_limit_bytes, log_cut, true);
  if (options.reap_descendants) reap_leftovers();
  result.peak_rss_bytes = options.measure_memory ? peak_memory : static_cast<int64_t>(usage.ru_maxrss) * 1024;
  if (WIFSIGNALED(status)) {
    result.signaled = true;
    result.signal = WTERMSIG(status);
  } else {
    result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  auto runnable = [](const std::string& path) {  // a folder has the execute bit too
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string dir = colon == start ? "." : dirs.substr(start, colon - start);
    if (const std::string candidate = dir + "/" + name; runnable(candidate)) return candidate;
    start = colon + 1;
  }
  return "";
}

namespace {

// The last line of `text` among its final `most` lines for which `wanted` holds (a '\r' before its
// newline dropped), at most 400 bytes of UTF-8 (utf8_text: a log's bytes are the program's); empty
// when none does.
std::string last_line_where(const std::string& text, size_t most, const std::function<bool(const std::string&)>& wanted) {
  size_t end = text.size();
  for (size_t lines = 0; end > 0 && lines < most; ++lines) {
    const size_t nl = text.find_last_of('\n', end - 1);
    const size_t start = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (wanted(line)) return utf8_text(line, 400);
    if (nl == std::string::npos) break;
    end = nl;
  }
  return "";
}

bool says_something(const std::string& line) {
  return std::any_of(line.begin(), line.end(), [](unsigned char c) { return std::isalnum(c); });
}

// A log's last 256 KiB: what says why a process ended is at its end, and a chatty program's whole
// log may be gigabytes.
std::string log_text(const std::string& path) {
  constexpr off_t kTail = 256 * 1024;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat info {};
  std::string text;
  if (::fstat(fd, &info) == 0) {
    const off_t from = std::max<off_t>(0, info.st_size - kTail);
    text.resize(static_cast<size_t>(info.st_size - from));
    const ssize_t n = ::pread(fd, text.data(), text.size(), from);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (from > 0 && text.find('\n') != std::string::npos) text.erase(0, text.find('\n') + 1);  // a line cut at the start says nothing whole
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string error_line_of(const std::string& path) {
  const std::string text = log_text(path);
  const std::string error = last_line_where(text, 200, [](const std::string& line) {
    for (const char* mark : {"Error", "Exception", "error:", "out of memory", "dyno: "})
      if (line.find(mark) != std::string::npos) return true;
    return false;
  });
  return !error.empty() ? error : last_line_where(text, SIZE_MAX, says_something);
}

std::string last_line_of(const std::string& path) { return last_line_where(log_text(path), SIZE_MAX, says_something); }

}  // namespace dyno
