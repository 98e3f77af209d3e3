// Running test code as a user whom file permissions bind.
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "dyno/reports/user_error.h"

namespace dyno::testing {

// Exit statuses of exit_status_bound_by_permissions's child other than its body's.
inline constexpr int kCannotDropRoot = 125;   // root could not become another user (a user namespace)
inline constexpr int kFolderUnreachable = 124;  // that user cannot search `folder` (a 0700 TMPDIR, umask 077)
inline constexpr int kBodyThrew = 123;

// Runs `body` in a forked child and returns its exit status (body's return value; 128 + the
// signal that killed it). As root, whom no file mode stops, the child first becomes the user and
// group 65534 (nobody), so that a file of mode 000 in `folder` is unreadable there too by its mode
// alone: the folder must be searchable by that user.
inline int exit_status_bound_by_permissions(const std::string& folder, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(kCannotDropRoot);
    if (::access(folder.c_str(), X_OK) != 0) ::_exit(kFolderUnreachable);
    try {
      ::_exit(body());
    } catch (...) {
      ::_exit(kBodyThrew);
    }
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// exit_status_bound_by_permissions of `call`, which is to throw a UserError saying `expected`: 0
// when it does, 1 when it does not (what it said, on stderr).
inline int status_of_error(const std::string& folder, const std::function<void()>& call, const std::string& expected) {
  return exit_status_bound_by_permissions(folder, [&] {
    try {
      call();
      std::fprintf(stderr, "no error\n");
    } catch (const UserError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return std::string(e.what()) == expected ? 0 : 1;
    }
    return 1;
  });
}

// Why a test that ran `exit_status_bound_by_permissions` cannot judge, or "" when it can.
inline std::string cannot_judge(int status) {
  if (status == kCannotDropRoot) return "root could not become another user here";
  if (status == kFolderUnreachable) return "the test's folder is not searchable by the user 65534 (TMPDIR or umask)";
  return "";
}

}  // namespace dyno::testing
