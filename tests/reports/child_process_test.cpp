#include "reports/child_process.h"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "reports/atomic_file.h"

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
}

TEST(ChildProcess, KillsAChildThatOutlivesItsTimeout) {
  const std::string log = log_path("timeout");
  const ChildResult r = run_child({"/bin/sleep", "30"}, log, 0.3);
  EXPECT_TRUE(r.timed_out);
  EXPECT_TRUE(r.signaled);
  EXPECT_LT(r.wall_time_s, 10);
  std::remove(log.c_str());
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
