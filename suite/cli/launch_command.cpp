#include "dyno/suite/cli/launch_command.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "dyno/reports/child_process.h"
#include "dyno/reports/scratch_dir.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/cli_main.h"
#include "dyno/suite/cli/commands.h"
#include "dyno/suite/cli/option_checks.h"
#include "dyno/suite/distributed/rank_failure.h"
#include "dyno/suite/process_settings.h"

namespace dyno {
namespace {

struct LaunchArgs {
  int nproc = 2;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  double grace_s = 5;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_forward_signal = 0;
void remember_signal(int sig) { g_forward_signal = sig; }

// MASTER_ADDR's addresses (getaddrinfo's list, for `port`); throws UserError naming it when it does
// not resolve.
addrinfo* resolve_master_addr(const std::string& addr, const char* port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(addr.c_str(), port, &hints, &found); rc != 0)
    throw UserError("launch", "--master-addr '" + addr + "' does not resolve: " + gai_strerror(rc) + "; give rank 0's address, e.g. 127.0.0.1");
  return found;
}

// A port for rank 0's store on MASTER_ADDR (IPv4 or IPv6, as the address resolves), held for the
// job: a socket bound to it with address reuse, never listening, stays open in the launcher (the
// ranks' exec closes it), so no other process takes the port between this choice and rank 0's
// bind, which sets address reuse too (dyno's store and torch's do) and binds beside it.
class ReservedPort {
 public:
  explicit ReservedPort(const std::string& addr) {
    addrinfo* found = resolve_master_addr(addr, "0");
    std::string error = "no address";
    bool not_here = false;  // an address of another machine: no port of it is this launcher's to give
    for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      const int on = 1;
      sockaddr_storage bound{};
      socklen_t length = sizeof bound;
      if (fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 && ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
        fd_ = fd;
        port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      } else {
        not_here = not_here || errno == EADDRNOTAVAIL;
        error = std::strerror(errno);
        if (fd >= 0) ::close(fd);
      }
    }
    ::freeaddrinfo(found);
    if (fd_ < 0)
      throw UserError("launch", "cannot find a free port on " + addr + ": " + error +
                                    (not_here ? "; --master-addr must be an address of this machine, where rank 0 runs" : "; give --master-port"));
  }
  ~ReservedPort() { ::close(fd_); }
  ReservedPort(const ReservedPort&) = delete;
  ReservedPort& operator=(const ReservedPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
};

std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  // `dyno launch ... -- dyno train` works without dyno on PATH: "dyno" is this executable.
  if (program == "dyno") return std::filesystem::read_symlink("/proc/self/exe").string();
  return program;  // execvp searches PATH
}

int status_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

int run_launch(const LaunchArgs& a) {
  if (a.master_addr.empty()) throw UserError("launch", "--master-addr: empty; give rank 0's address, e.g. 127.0.0.1");
  if (a.command.empty()) throw UserError("launch", "no program given; usage: dyno launch --nproc N -- dyno train ...");
  std::optional<ReservedPort> reserved;
  if (a.master_port > 0) ::freeaddrinfo(resolve_master_addr(a.master_addr, nullptr));
  else reserved.emplace(a.master_addr);
  const int port = reserved ? reserved->port() : a.master_port;
  std::vector<std::string> args = a.command;
  args[0] = resolve_program(args[0]);
  if (find_executable(args[0]).empty())
    throw UserError("launch", "'" + a.command[0] + "' is not an executable file" + (a.command[0].find('/') == std::string::npos ? " on PATH" : ""));
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  // The ranks' exit statuses are read with waitpid: a SIGCHLD inherited as ignored would reap them
  // first (waitpid then fails, and the loop would wait for ranks already gone).
  ::signal(SIGCHLD, SIG_DFL);
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  if (!hangup_ignored()) sigaction(SIGHUP, &action, nullptr);  // a closed terminal or ssh session (nohup's stays ignored)
  // Each rank's intra-op threads: the cores divided among the ranks, unless the user chose (as
  // torchrun does; dyno train's threads knob still comes first).
  std::string omp_threads;
  if (!std::getenv("OMP_NUM_THREADS")) omp_threads = std::to_string(std::max<int64_t>(1, usable_cores() / a.nproc));
  const pid_t parent = ::getpid();
  // Each rank writes its error line in reasons/rank-<r> (DYNO_LAUNCH_REASON_FILE): the first
  // failed rank's goes on the launcher's last line.
  std::optional<ScratchDir> reasons;
  try {
    reasons.emplace("dyno-launch");
  } catch (const UserError&) {
    // No folder: no rank's own line on the last one.
  }
  auto reason_file = [&](int r) { return reasons ? reasons->path() + "/rank-" + std::to_string(r) : std::string(); };
  std::vector<pid_t> ranks;
  for (int r = 0; r < a.nproc; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphan if the launcher is killed
      if (::getppid() != parent) ::_exit(127);
      // A job's around this launcher (dyno tune inside torchrun) is not these ranks' job: its
      // agent store, restarts and group rank would send them to another rendezvous.
      leave_distributed_job();
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(a.nproc).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(a.nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", a.master_addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("DYNO_LAUNCH_REASON_FILE", reason_file(r).c_str(), 1);
      if (!omp_threads.empty()) ::setenv("OMP_NUM_THREADS", omp_threads.c_str(), 1);
      ::execvp(argv[0], argv.data());
      std::fprintf(stderr, "dyno launch: cannot execute %s: %s\n", argv[0], std::strerror(errno));
      ::_exit(127);
    }
    ranks.push_back(pid);
  }
  const pid_t ranks_pid0 = ranks.front();
  std::fprintf(stderr, "[launch] %d ranks on %s:%d%s\n", a.nproc, a.master_addr.c_str(), port,
               omp_threads.empty() ? "" : (", OMP_NUM_THREADS=" + omp_threads + " each (" + std::to_string(usable_cores()) + " cores)").c_str());

  int result = 0;
  bool ended_not_ok = false;  // a rank ended with exit 3: the others end likewise within --grace, or are stopped
  int not_ok_rank = -1;       // the first that did
  std::chrono::steady_clock::time_point not_ok_since{};
  int failed_rank = -1, failed_code = 0;
  std::chrono::steady_clock::time_point failed_since{};
  std::string how;           // how failed_rank ended
  std::string still_running;  // the ranks still running when the first failed
  std::set<int> sent;        // the signals this launcher sent its ranks
  size_t running = ranks.size();
  auto stop_all = [&](int sig) {
    sent.insert(sig);
    for (pid_t p : ranks)
      if (p > 0) ::kill(p, sig);
  };
  std::chrono::steady_clock::time_point kill_deadline{};
  bool stopping = false;
  while (running > 0) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      for (size_t r = 0; r < ranks.size(); ++r)
        if (ranks[r] == done) {
          ranks[r] = -1;
          --running;
          const int code = status_code(status);
          // A rank whose collective failed because a peer did (kExitRankFailed) is blamed only
          // until a rank that failed on its own is seen; one ended by a signal this launcher sent,
          // or by the one it was told to stop with (a terminal's Ctrl-C reaches every rank of its
          // process group too, maybe before the launcher forwards it), never is.
          const int told = g_forward_signal;
          const bool stopped_here = (WIFSIGNALED(status) && (sent.count(WTERMSIG(status)) || WTERMSIG(status) == told)) || (told && code == 128 + told);
          // A run that ended and was not ok (exit 3: diverged, a target missed) failed no peer: each
          // ends so on its own, and rank 0 is still writing the job's report.
          if (code == kExitRunNotOk && !stopped_here) {
            if (!ended_not_ok) {
              not_ok_since = std::chrono::steady_clock::now();
              not_ok_rank = static_cast<int>(r);
            }
            ended_not_ok = true;
            continue;
          }
          if (code != 0 && !stopped_here && (failed_rank < 0 || (failed_code == kExitRankFailed && code != kExitRankFailed))) {
            if (failed_rank < 0)
              for (size_t other = 0; other < ranks.size(); ++other)
                if (ranks[other] > 0) still_running += (still_running.empty() ? "" : ", ") + std::to_string(other);
            failed_rank = static_cast<int>(r);
            failed_code = code;
            failed_since = std::chrono::steady_clock::now();
            result = code;
            how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status)) +
                                                                                               " (" + strsignal(WTERMSIG(status)) + ")";
            std::fprintf(stderr, "[launch] rank %zu failed (%s)%s\n", r, how.c_str(),
                         stopping ? "" : code == kExitRankFailed ? "; the others have --grace to end" : "; stopping the other ranks");
          }
        }
      // (A rank whose collective failed for a peer's sake leaves that peer --grace to end on its own
      // first: a rank out of memory is still writing the job's report.)
      if (failed_rank >= 0 && failed_code != kExitRankFailed && !stopping && running > 0) {
        stopping = true;
        stop_all(SIGTERM);
        kill_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(a.grace_s * 1000));
      }
      continue;
    }
    if (g_forward_signal && !stopping) {
      stop_all(g_forward_signal);
      stopping = true;
      if (result == 0) result = 128 + g_forward_signal;
      kill_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(a.grace_s * 1000));
    }
    // A rank that ran out of memory ends with 3 too, and its peers wait for it in a collective.
    const auto grace = std::chrono::milliseconds(static_cast<int64_t>(a.grace_s * 1000));
    if (((ended_not_ok && std::chrono::steady_clock::now() > not_ok_since + grace) ||
         (failed_code == kExitRankFailed && std::chrono::steady_clock::now() > failed_since + grace)) && !stopping) {
      stopping = true;
      stop_all(SIGTERM);
      kill_deadline = std::chrono::steady_clock::now() + grace;
    }
    if (stopping && std::chrono::steady_clock::now() > kill_deadline) stop_all(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Told to stop (the ranks may all have ended before the loop saw the signal): interrupted.
  if (g_forward_signal && result == 0) result = 128 + g_forward_signal;
  if (ended_not_ok && result == 0) result = kExitRunNotOk;
  // A peer's collective that failed (exit 4) after a rank ended not ok (out of memory, which closes
  // its connections at once under gloo) failed for that rank: the job ends as that rank did.
  if (failed_code == kExitRankFailed && not_ok_rank >= 0) {
    failed_rank = not_ok_rank;
    failed_code = result = kExitRunNotOk;
    how = "exit status 3";
  }
  // A shared-memory all-reduce's segment is named after rank 0's process and removed by it; a rank 0
  // killed while it set the segment up leaves it behind: removed here, once every rank has ended.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ignored))
    if (entry.path().filename().string().rfind("dyno-all-reduce-" + std::to_string(ranks_pid0) + "-", 0) == 0) std::filesystem::remove(entry.path(), ignored);
  // The last line of the job's log, what a trial's reason is read from: the rank that failed
  // first and its own error line; when every failed rank's collective failed for a peer, the
  // ranks that were still running then (one of them hung or was lost).
  if (failed_rank >= 0) {
    const std::string reason = reasons ? last_line_of(reason_file(failed_rank)) : std::string();
    if (failed_code == kExitRankFailed)
      std::fprintf(stderr, "[launch] error: no rank failed on its own; rank %d's collective failed first (%s), while rank(s) %s still ran%s%s; "
                           "the job's exit status is %d\n",
                   failed_rank, how.c_str(), still_running.empty() ? "none" : still_running.c_str(), reason.empty() ? "" : ": ", reason.c_str(), result);
    else
      std::fprintf(stderr, "[launch] error: rank %d failed first (%s)%s%s; the job's exit status is %d\n", failed_rank, how.c_str(),
                   reason.empty() ? "" : ": ", reason.c_str(), result);
  }
  return result;
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto a = std::make_shared<LaunchArgs>();
  auto* cmd = app.add_subcommand("launch", "start N local ranks of a data-parallel job: dyno launch --nproc 2 -- dyno train ...");
  cmd->add_option("--nproc,-n", a->nproc, "ranks to start")->capture_default_str()->check(whole_number_in(1, 1024));
  cmd->add_option("--master-addr", a->master_addr, "address of rank 0's store")->capture_default_str();
  cmd->add_option("--master-port", a->master_port, "port of rank 0's store (0 = pick a free one)")->capture_default_str()->check(whole_number_in(0, 65535));
  cmd->add_option("--grace", a->grace_s, "seconds between SIGTERM and SIGKILL when stopping ranks")->capture_default_str()->check(number_in(0, 3600));
  cmd->add_option("command", a->command, "the program and its arguments, after --")->required();
  cmd->positionals_at_end(false);
  register_command_handler(cmd, [a] { return run_launch(*a); });
}

}  // namespace dyno
