// Running test code as a user whom file permissions bind.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace dyno::testing {

inline constexpr int kCannotDropRoot = 125;

// Runs `body` in a forked child and returns its exit status (body's return value; 128 + the
// signal that killed it). As root, whom no file mode stops, the child first becomes the user and
// group 65534 (nobody), so that a file of mode 000 is unreadable there too; kCannotDropRoot when it
// cannot.
inline int exit_status_bound_by_permissions(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(kCannotDropRoot);
    ::_exit(body());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace dyno::testing
