#include "dyno/reports/child_process.h"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

std::string log_path(const char* name) { return ::testing::TempDir() + "/child_process_" + name + "_" + std::to_string(::getpid()) + ".log"; }

TEST(ChildProcess, ReportsTheExitCodeAndSendsOutputToTheLog) {
  const std::string log = log_path("exit");
  const ChildResult r = run_child({"/bin/sh", "-c", "echo hello; exit 3"}, log, 30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(last_line_of(log), "hello");
  std::remove(log.c_str());
  run_child({"/bin/sh", "-c", "echo 'Error: the cause'; echo '===='; echo; echo '  '"}, log, 30);
  EXPECT_EQ(last_line_of(log), "Error: the cause");  // the last line that says something
  run_child({"/bin/sh", "-c", "echo 'RuntimeError: the cause'; echo 'see https://x for a traceback'"}, log, 30);
  EXPECT_EQ(error_line_of(log), "RuntimeError: the cause");  // the error, not the footer after it
  EXPECT_EQ(last_line_of(log), "see https://x for a traceback");
  std::remove(log.c_str());
}

// A log past its limit keeps what says what happened: its head (what the run was) and its tail
// (how it ended), with a line saying how much went between.
TEST(ChildProcess, ALogPastItsLimitKeepsItsHeadAndTail) {
  const std::string log = log_path("limit");
  ChildOptions options;
  options.log_limit_bytes = 1 << 20;
  const ChildResult r = run_child({"/bin/sh", "-c", "echo 'the run'; head -c 3000000 /dev/zero | tr '\\0' x; echo; sleep 0.7; "
                                                    "head -c 3000000 /dev/zero | tr '\\0' y; echo; echo 'Error: the cause'; exit 1"},
                                  log, 30, nullptr, options);
  EXPECT_EQ(r.exit_code, 1);
  const std::string text = read_file(log);
  EXPECT_LE(text.size(), size_t{1} << 20);
  EXPECT_EQ(text.rfind("the run\n", 0), 0u);
  // What went is counted (over both cuts: one while the child slept, one after it ended), and what
  // the child wrote after the first cut follows it, in order.
  const size_t written = 8 + 3000001 + 3000001 + 17, kept = (1 << 20) / 8 + (1 << 20) / 64;
  EXPECT_NE(text.find("[dyno] ... " + std::to_string(written - kept) + " bytes of output cut here"), std::string::npos) << text.substr(131000, 300);
  EXPECT_EQ(text.find('x', text.find("[dyno] ... ")), std::string::npos);  // after the cut line only the later y's
  EXPECT_EQ(error_line_of(log), "Error: the cause");
  std::remove(log.c_str());
}

// A child started as a job of its own (a trial) does not see it is a rank of the job dyno runs in,
// whichever launcher started that; where the job's store is stays, for a launcher of its own.
TEST(ChildProcess, AChildOfItsOwnJobLeavesTheJobDynoRunsIn) {
  const std::vector<const char*> ranks = {"RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE"};
  for (const char* name : ranks) ::setenv(name, "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  const std::string log = log_path("job");
  ChildOptions options;
  options.own_job = true;
  run_child({"/usr/bin/env"}, log, 30, nullptr, options);
  const std::string seen = "\n" + read_file(log);
  for (const char* name : ranks) {
    EXPECT_EQ(seen.find("\n" + std::string(name) + "="), std::string::npos) << name;
    EXPECT_EQ(std::getenv(name), std::string("1"));  // dyno's own environment is kept
    ::unsetenv(name);
  }
  EXPECT_NE(seen.find("\nMASTER_ADDR=127.0.0.1\n"), std::string::npos);
  ::unsetenv("MASTER_ADDR");
  std::remove(log.c_str());
}

TEST(ChildProcess, KillsAChildThatOutlivesItsTimeout) {
  const std::string log = log_path("timeout");
  const ChildResult r = run_child({"/bin/sleep", "30"}, log, 0.3);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.signaled);
  EXPECT_LT(r.wall_time_s, 10);
  std::remove(log.c_str());
}

// Its stdin is /dev/null, not the parent's (a terminal would stop a background group that reads).
TEST(ChildProcess, ReadsEndOfFileFromStdin) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);  // the parent's stdin: a pipe nobody writes to or closes
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(pipe_fds[0], STDIN_FILENO);
  const std::string log = log_path("stdin");
  const ChildResult r = run_child({"/bin/sh", "-c", "read line; echo \"read [$line]\""}, log, 5);
  ::dup2(saved, STDIN_FILENO);
  for (int fd : {saved, pipe_fds[0], pipe_fds[1]}) ::close(fd);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(last_line_of(log), "read []");
  std::remove(log.c_str());
}

// What a child started in its process group and left running ends with it.
TEST(ChildProcess, WhatTheChildLeftRunningEndsWithIt) {
  const std::string log = log_path("left"), pid_file = log + ".pid";
  const ChildResult r = run_child({"/bin/sh", "-c", "sleep 30 & echo $! > " + pid_file + "; exit 0"}, log, 10);
  EXPECT_EQ(r.exit_code, 0);
  const std::string pid = read_file(pid_file);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // killed: gone, or a zombie until its new parent reaps it
    std::string stat;
    try {
      stat = read_file("/proc/" + pid.substr(0, pid.find('\n')) + "/stat");
    } catch (const UserError&) {
    }
    gone = stat.empty() || stat.find(") Z ") != std::string::npos;
    if (!gone) ::usleep(10000);
  }
  EXPECT_TRUE(gone) << "sleep " << pid << " outlived the child";
  std::remove(log.c_str());
  std::remove(pid_file.c_str());
}

TEST(ChildProcess, RunsTheChildOnlyOnTheCpusAskedFor) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mine)) last = cpu;
  ASSERT_GE(last, 0);
  const std::string log = log_path("cpus");
  ChildOptions options;
  options.cpus = {last};
  const ChildResult r = run_child({"/bin/grep", "Cpus_allowed_list", "/proc/self/status"}, log, 30, nullptr, options);
  ASSERT_EQ(r.exit_code, 0) << read_file(log);
  EXPECT_EQ(last_line_of(log), "Cpus_allowed_list:\t" + std::to_string(last));
  std::remove(log.c_str());
}

TEST(ChildProcess, ACpuThatCannotBeUsedFailsTheChildWithAMessage) {
  const std::string log = log_path("nocpu");
  ChildOptions options;
  options.cpus = {CPU_SETSIZE - 1};
  const ChildResult r = run_child({"/bin/true"}, log, 30, nullptr, options);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(read_file(log).find("cannot run on the CPUs asked for"), std::string::npos);
  std::remove(log.c_str());
}

}  // namespace
}  // namespace dyno
