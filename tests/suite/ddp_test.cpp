// Data parallelism with real processes on loopback (Gloo through c10d), launched the way users
// launch it: `dyno launch`, torchrun, or the environment variables set by hand.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/suite/distributed/distributed_context.h"
#include "dyno/suite/distributed/rank_failure.h"
#include "dyno/suite/process_settings.h"
#include "fixture_files.h"
#include "test_support.h"
#include "dyno/workloads/workload.h"

namespace dyno {
namespace {

const std::string kCommon = "-w fashion-mlp --no-progress --set size=tiny --set optimizer=sgd --set threads=1 --set max_steps=6 "
                            "--set warmup_steps=1 --set log_every_steps=2 --set final_eval=false --set stop_at_target=false";

std::vector<torch::Tensor> parameters_in(const std::string& path) { return testing::saved_parameters(path, "fashion-mlp"); }

double max_difference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

testing::CommandResult launch(int ranks, const std::string& args, const std::string& env = "") {
  return testing::run_dyno("launch --nproc " + std::to_string(ranks) + " -- dyno train " + args, env);
}

int busy_port(int& fd) {
  fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 1);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

TEST(Ddp, TwoRanksOfBatchBMatchOneRankOfBatchTwoB) {
  auto dir = testing::fresh_dir("ddp_equivalence");
  auto single = testing::run_dyno("train " + kCommon + " --set batch_size=64 final_eval=true --set save_state=" + (dir / "single.pt").string() +
                                  " --out " + (dir / "single.json").string());
  ASSERT_EQ(single.exit_code, 0) << single.output;
  auto pair = launch(2, kCommon + " --set batch_size=32 final_eval=true --set save_state=" + (dir / "ddp.pt").string() + " --out " +
                            (dir / "ddp.json").string());
  ASSERT_EQ(pair.exit_code, 0) << pair.output;
  // Same data (rank r reads positions r, r+2, ... of the same shuffle) and averaged gradients:
  // equal up to float summation order. Tolerance: 1e-5 absolute on the parameters after 6 steps.
  const double diff = max_difference(parameters_in((dir / "single.pt").string()), parameters_in((dir / "ddp.pt").string()));
  EXPECT_LT(diff, 1e-5) << "max parameter difference " << diff;
  auto report = nlohmann::json::parse(read_file((dir / "ddp.json").string()));
  // The ranks evaluate a share each of the whole set, summed: the single process's figure.
  const auto single_report = nlohmann::json::parse(read_file((dir / "single.json").string()));
  EXPECT_NEAR(report["summary"]["final_metric"]["value"].get<double>(), single_report["summary"]["final_metric"]["value"].get<double>(), 2.5e-3);
  // The loss curve is the job's (both ranks' halves of each batch), as the single process's.
  ASSERT_EQ(report["curves"]["loss"].size(), single_report["curves"]["loss"].size());
  for (size_t i = 0; i < report["curves"]["loss"].size(); ++i)
    EXPECT_NEAR(report["curves"]["loss"][i]["value"].get<double>(), single_report["curves"]["loss"][i]["value"].get<double>(), 1e-4) << i;
  EXPECT_EQ(report["world_size"], 2);
  EXPECT_EQ(report["ranks"].size(), 2u);
  EXPECT_EQ(report["config"]["ddp.world_size"], 2);
  testing::remove_tree(dir);
}

TEST(Ddp, BackendsBucketSizeAndBucketViewsDoNotChangeResultsAndHooksStayClose) {
  auto dir = testing::fresh_dir("ddp_knobs");
  auto run = [&](const std::string& name, const std::string& extra) {
    auto r = launch(2, kCommon + " --set batch_size=32 " + extra + " --set save_state=" + (dir / (name + ".pt")).string() + " --out " +
                           (dir / (name + ".json")).string());
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
    return parameters_in((dir / (name + ".pt")).string());
  };
  auto reference = run("default", "");  // ranks on one CPU machine: ddp.backend=shm
  EXPECT_LT(max_difference(reference, run("gloo", "--set ddp.backend=gloo")), 1e-6);
  EXPECT_LT(max_difference(reference, run("small_buckets", "--set ddp.bucket_cap_mb=0.05")), 1e-6);
  EXPECT_LT(max_difference(reference, run("bucket_view", "--set ddp.gradient_as_bucket_view=true")), 1e-6);
  EXPECT_LT(max_difference(reference, run("one_allreduce", "--set ddp.overlap=false")), 1e-6);
  // Compressed gradients: within 1e-3 of the fp32 all-reduce after 6 SGD steps (lr 1e-3 x grads).
  EXPECT_LT(max_difference(reference, run("fp16", "--set ddp.comm_hook=fp16")), 1e-3);
  EXPECT_LT(max_difference(reference, run("bf16", "--set ddp.comm_hook=bf16")), 1e-3);
  testing::remove_tree(dir);
}

TEST(Ddp, RanksOnOneMachineDivideItsCoresAndWarnWhenTheyOversubscribe) {
  const auto dir = testing::fresh_dir("ddp_threads");
  const std::string common = "-w fashion-mlp --no-progress --set size=tiny --set max_steps=4 --set warmup_steps=1 --set final_eval=false "
                             "--set stop_at_target=false";
  auto r = testing::run_dyno("launch --nproc 2 -- dyno train " + common + " --out " + (dir / "divided.json").string(), "env -u OMP_NUM_THREADS");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const int64_t cores = usable_cores();
  EXPECT_EQ(read_json_file((dir / "divided.json").string(), "t")["environment"]["threads"], std::max<int64_t>(1, cores / 2));
  EXPECT_EQ(r.output.find("oversubscribe"), std::string::npos) << r.output;
  r = testing::run_dyno("launch --nproc 2 -- dyno train " + common + " --set threads=" + std::to_string(cores) + " --out " +
                        (dir / "over.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[train] warning: " + std::to_string(cores) + " threads x 2 ranks on this machine"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Two gloo ranks training, rank 1 failing with `fault` at step 3.
std::string fault_on_rank_1(const std::string& fault, const std::filesystem::path& out) {
  return kCommon + " --set batch_size=32 --set max_steps=200 --set inject_fault=" + fault + " --set inject_fault_at_step=3 " +
         "--set inject_fault_rank=1 --set ddp.timeout_s=20 --set ddp.backend=gloo --out " + out.string();
}

TEST(Ddp, ARankThatDiesEndsTheJobWithNoProcessLeft) {
  auto dir = testing::fresh_dir("ddp_crash");
  // (gloo: rank 0 sees the connection close at once, and may end first.)
  auto r = launch(2, fault_on_rank_1("crash", dir / "r.json"));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1 failed"), std::string::npos) << r.output;
  // The crashed rank is the one blamed, on the log's last line, whichever rank's end was seen first;
  // the other's collective failed for it (exit 4), which is not "internal error".
  EXPECT_NE(r.output.find("[launch] error: rank 1 failed first (signal 11"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_NE(std::system(("pgrep -f '[d]yno train.*" + (dir / "r.json").string() + "' > /dev/null").c_str()), 0) << "a rank outlived the job";
  testing::remove_tree(dir);
}

// A rank out of memory ends not ok (3) and, under gloo, closes its connections at once: its peers'
// collectives fail for it (4), and the job ends as that rank did, naming it.
TEST(Ddp, ARankOutOfMemoryEndsTheJobAsOutOfMemoryNamingIt) {
  auto dir = testing::fresh_dir("ddp_oom");
  auto r = launch(2, fault_on_rank_1("oom", dir / "r.json"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("[launch] error: rank 1 failed first (exit status 3)"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Ctrl-C in a terminal reaches the launcher and every rank of its process group at once: a rank
// it ended is not a failure of that rank, and the job ends as interrupted (130).
TEST(Ddp, CtrlCInTheTerminalEndsTheJobAsInterruptedBlamingNoRank) {
  auto dir = testing::fresh_dir("ddp_ctrl_c");
  const std::string log = (dir / "log.txt").string(), report = (dir / "r.json").string();
  const std::string job = std::string(DYNO_BINARY) + " launch --nproc 2 -- dyno train " + kCommon + " --set max_steps=1000000 --set epochs=100000 --set ddp.backend=gloo --out " + report;
  // Its own process group (setsid), as a terminal's foreground job; the group is signalled once both ranks train.
  const std::string script = (dir / "ctrl_c.sh").string();
  write_file_atomically(script, "setsid " + job + " > " + log + " 2>&1 & pid=$!\n"
                                "for i in $(seq 600); do [ $(pgrep -fc '^[^ ]*/dyno train .*" + report + "') -ge 2 ] && break; sleep 0.05; done; sleep 1\n"
                                "kill -INT -$pid; wait $pid\n");
  EXPECT_EQ(WEXITSTATUS(std::system(("bash " + script).c_str())), 130) << read_file(log);
  EXPECT_EQ(read_file(log).find("failed first"), std::string::npos) << read_file(log);
  testing::remove_tree(dir);
}

// A SIGCHLD the launcher inherits as ignored would let the kernel reap the ranks before it reads
// their statuses: it sets it back, and the job ends with them.
TEST(Ddp, TheLaunchWaitsForItsRanksWhateverSigchldItInherits) {
  const auto started = std::chrono::steady_clock::now();
  // (timeout sets its own SIGCHLD handler, and a shell's trap keeps one for its jobs: the ignore is
  // set by a Python that then execs the launcher.)
  const std::string script = "timeout -k 5 30 python3 -c 'import signal, os, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
                             "os.execv(sys.argv[1], sys.argv[1:])' " + std::string(DYNO_BINARY) + " launch --nproc 2 -- /bin/true";
  EXPECT_EQ(WEXITSTATUS(std::system((script + " > /dev/null 2>&1").c_str())), 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 20);
}

TEST(Ddp, AHungRankFailsTheOthersWithinTheTimeout) {
  auto dir = testing::fresh_dir("ddp_hang");
  const auto start = std::chrono::steady_clock::now();
  auto r = launch(2, kCommon + " --set batch_size=32 --set max_steps=200 --set inject_fault=hang --set inject_fault_at_step=3 "
                               "--set inject_fault_rank=1 --set ddp.timeout_s=5 --out " + (dir / "r.json").string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_LT(seconds, 60) << r.output;
  // The hung rank did not fail: the launcher says so, and names it as still running.
  EXPECT_NE(r.output.find("[launch] error: no rank failed on its own; rank 0's collective failed first (exit status 4), while rank(s) 1 still ran: "
                          "dyno: [ddp] rank 0 waited 5 s"),
            std::string::npos)
      << r.output;
  EXPECT_NE(std::system(("pgrep -f '[d]yno train.*" + (dir / "r.json").string() + "' > /dev/null").c_str()), 0) << "a rank outlived the job";
  testing::remove_tree(dir);
}

// A rank that hangs before the first step's collectives are set up (the buckets are rebuilt after
// the first backward) fails its peers as one that hangs later does, not as a bug of dyno's.
TEST(Ddp, ARankHungAtTheFirstStepFailsTheOthersWithinTheTimeout) {
  auto dir = testing::fresh_dir("ddp_hang_first");
  auto r = launch(2, kCommon + " --set batch_size=32 --set inject_fault=hang --set inject_fault_at_step=1 --set inject_fault_rank=1 --set ddp.timeout_s=5 --out " +
                         (dir / "r.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("no rank failed on its own; rank 0's collective failed first (exit status 4), while rank(s) 1 still ran"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// time_limit_s holds between log points too: every rank stops before the step rank 0 expects the
// limit to fall in (planned at steps 1, 2, 4... and at log points).
TEST(Ddp, ATimeLimitStopsEveryRankBetweenLogPoints) {
  auto dir = testing::fresh_dir("ddp_time_limit");
  auto r = testing::run_dyno("launch --nproc 2 -- dyno train -w fashion-mlp --no-progress --set size=tiny threads=1 time_limit_s=1 data_delay_ms=100 "
                             "log_every_steps=1000 max_steps=60 --out " + (dir / "r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = nlohmann::json::parse(read_file((dir / "r.json").string()))["summary"];
  EXPECT_EQ(summary["stop_reason"], "time_limit");
  EXPECT_LT(summary["steps"].get<int64_t>(), 30);  // 60 steps take 6 s
  EXPECT_LT(summary["wall_time_s"].get<double>(), 2.5);
  testing::remove_tree(dir);
}

// A rank whose run ended not ok (exit 3) stops no other: rank 0 is still writing the report.
TEST(Ddp, ARankEndingNotOkStopsNoOtherRank) {
  auto r = testing::run_dyno("launch --nproc 2 -- sh -c 'if [ \"$RANK\" = 1 ]; then exit 3; fi; sleep 1; echo rank 0 wrote its report'");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("rank 0 wrote its report"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("failed"), std::string::npos) << r.output;
  // One whose peers wait on (for a rank that ran out of memory) has them stopped after --grace.
  const auto started = std::chrono::steady_clock::now();
  r = testing::run_dyno("launch --nproc 2 --grace 1 -- sh -c 'if [ \"$RANK\" = 1 ]; then exit 3; fi; exec sleep 30'");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 10) << r.output;
}

// Inside a torchrun job (dyno tune under one), its agent store is not this launcher's ranks'.
TEST(Ddp, ALaunchInsideATorchrunJobIgnoresItsAgentStore) {
  auto dir = testing::fresh_dir("ddp_in_torchrun");
  auto r = launch(2, kCommon + " --set batch_size=32 --set ddp.timeout_s=10 --out " + (dir / "r.json").string(),
                  "TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_RESTART_COUNT=0 GROUP_RANK=0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  testing::remove_tree(dir);
}

int free_port() {
  int fd = -1;
  const int port = busy_port(fd);
  ::close(fd);
  return port;
}

// The IPv4 addresses (dotted) listening on `port`, from /proc/net/tcp (addresses in hex, host order).
std::vector<std::string> listening_addresses(int port) {
  std::vector<std::string> found;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (state != "0A" || std::stoi(local.substr(local.find(':') + 1), nullptr, 16) != port) continue;
    in_addr a{};
    a.s_addr = static_cast<in_addr_t>(std::stoul(local.substr(0, local.find(':')), nullptr, 16));
    found.push_back(::inet_ntoa(a));
  }
  return found;
}

// Rank 0 of a two-rank job started alone serves its store until the join times out; meanwhile,
// the addresses its store listens on.
std::vector<std::string> store_addresses(const std::string& master_addr, std::string& output) {
  const int port = free_port();
  std::thread rank0([&] {
    output = testing::run_dyno("train " + kCommon + " --set ddp.timeout_s=3",
                               "RANK=0 WORLD_SIZE=2 MASTER_ADDR=" + master_addr + " MASTER_PORT=" + std::to_string(port)).output;
  });
  std::vector<std::string> addresses;
  for (int i = 0; i < 100 && addresses.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    addresses = listening_addresses(port);
  }
  rank0.join();
  return addresses;
}

// An IPv4 address of this machine other than loopback, as a multi-node job's MASTER_ADDR would be ("" when none).
std::string other_address() {
  ifaddrs* interfaces = nullptr;
  std::string other;
  if (::getifaddrs(&interfaces) != 0) return other;
  for (ifaddrs* i = interfaces; i && other.empty(); i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
      const std::string a = ::inet_ntoa(reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr);
      if (a.rfind("127.", 0) != 0) other = a;
    }
  ::freeifaddrs(interfaces);
  return other;
}

TEST(Ddp, TheStoreListensOnMasterAddrOnly) {
  std::string output;
  EXPECT_EQ(store_addresses("127.0.0.1", output), std::vector<std::string>{"127.0.0.1"}) << output;
  EXPECT_EQ(output.find("reachable from other machines"), std::string::npos) << output;
  // Another address of this machine, as a multi-node job would give: the store listens there, and says so.
  const std::string other = other_address();
  if (other.empty()) GTEST_SKIP() << "this machine has no address besides loopback";
  EXPECT_EQ(store_addresses(other, output), std::vector<std::string>{other}) << output;
  EXPECT_NE(output.find("[ddp] rank 0 serves the store on " + other + ":"), std::string::npos) << output;
}

TEST(Ddp, RanksAreKnownToShareAMachineFromTheLaunchersEnvironment) {
  auto all_local = [](const char* master_addr, const char* local_world_size) {
    ::setenv("RANK", "0", 1);
    ::setenv("WORLD_SIZE", "2", 1);
    ::setenv("MASTER_PORT", "1234", 1);
    ::setenv("MASTER_ADDR", master_addr, 1);
    if (local_world_size) ::setenv("LOCAL_WORLD_SIZE", local_world_size, 1);
    else ::unsetenv("LOCAL_WORLD_SIZE");
    const bool result = distributed_env_from_environment()->all_on_this_machine;
    for (const char* v : {"RANK", "WORLD_SIZE", "MASTER_PORT", "MASTER_ADDR", "LOCAL_WORLD_SIZE"}) ::unsetenv(v);
    return result;
  };
  EXPECT_TRUE(all_local("127.0.0.1", nullptr));    // dyno launch
  EXPECT_TRUE(all_local("10.0.0.5", "2"));         // single-node torchrun
  EXPECT_FALSE(all_local("10.0.0.5", "1"));        // two nodes of one rank each
  EXPECT_FALSE(all_local("10.0.0.5", nullptr));    // srun and other launchers: may span machines
}

// Without LOCAL_WORLD_SIZE, ranks that may span machines count those on their machine at the
// rendezvous, by host name and kernel boot id, and divide its cores among them only. Here rank 1
// runs under another host name (its own UTS namespace), then under this host name on what reads as
// another booted kernel (a boot id bound over the kernel's in its own mount namespace, as a clone
// of this machine would be): either way rank 0 is alone on its machine and takes every core.
TEST(Ddp, WithoutLocalWorldSizeTheRanksOnThisHostShareItsCores) {
  const std::string address = other_address();
  if (address.empty()) GTEST_SKIP() << "this machine has no address besides loopback";
  if (std::system("unshare --uts true > /dev/null 2>&1") != 0) GTEST_SKIP() << "no UTS namespace for another host name (unshare needs CAP_SYS_ADMIN)";
  if (usable_cores() < 2) GTEST_SKIP() << "one core: alone or not, a rank gets one thread";
  auto dir = testing::fresh_dir("ddp_hosts");
  // Rank 1's command is `rank1_shell` followed by "exec dyno train ...'".
  auto threads_of_rank0 = [&](const std::string& rank1_shell) {
    const std::string env = "WORLD_SIZE=2 MASTER_ADDR=" + address + " MASTER_PORT=" + std::to_string(free_port());
    const std::string train = std::string(DYNO_BINARY) + " train " + kCommon + " --set threads=0 --out " + (dir / "r.json").string();
    const std::string both = "(RANK=0 " + env + " " + train + " > " + (dir / "r0.txt").string() + " 2>&1 & RANK=1 " + env + " " + rank1_shell +
                             "exec " + train + "' > " + (dir / "r1.txt").string() + " 2>&1; wait)";
    std::system(both.c_str());
    const auto report = nlohmann::json::parse(read_file((dir / "r.json").string()));
    EXPECT_EQ(report["outcome"], "ok") << read_file((dir / "r0.txt").string()) << read_file((dir / "r1.txt").string());
    return report["environment"]["threads"].get<int64_t>();
  };
  EXPECT_EQ(threads_of_rank0("unshare --uts sh -c 'hostname dyno-other-host && "), usable_cores());
  if (std::system("unshare --mount --propagation private true > /dev/null 2>&1") == 0) {
    const std::string other_boot = (dir / "boot_id").string();
    write_file_atomically(other_boot, "00000000-0000-4000-8000-000000000001\n");
    EXPECT_EQ(threads_of_rank0("unshare --mount --propagation private sh -c 'mount --bind " + other_boot + " /proc/sys/kernel/random/boot_id && "),
              usable_cores());
  }
  EXPECT_EQ(threads_of_rank0("sh -c '"), std::max<int64_t>(1, usable_cores() / 2));
  testing::remove_tree(dir);
}

TEST(Ddp, RendezvousErrorsNameTheirCause) {
  int fd = -1;
  const int port = busy_port(fd);
  auto r = testing::run_dyno("train " + kCommon + " --set ddp.timeout_s=3",
                             "RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << r.output;
  ::close(fd);
  r = testing::run_dyno("train " + kCommon + " --set ddp.timeout_s=2", "RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot reach the store at 127.0.0.1:" + std::to_string(port)), std::string::npos) << r.output;
  r = testing::run_dyno("train " + kCommon, "RANK=3 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1234");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("RANK='3' is not an integer in [0, 1]"), std::string::npos) << r.output;
  r = testing::run_dyno("train " + kCommon + " --set ddp.world_size=2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("needs a launcher"), std::string::npos) << r.output;
}

// Rank 0, which serves the store, dies while the ranks join (both wait for a third that never
// starts): the rank left lost a peer, which is no error in its configuration, and exits as a rank
// failure (4), saying so, not as bad input (2) that did not join in time. (The test, a client of
// the store, kills rank 0 once rank 1 has stated its world size there.)
TEST(Ddp, ARankThatLosesTheStoreWhileTheRanksJoinExitsAsARankFailure) {
  auto dir = testing::fresh_dir("ddp_store_lost");
  const int port = free_port();
  const std::string env = "WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port);
  const std::string cmd = std::string(DYNO_BINARY) + " train " + kCommon + " --set ddp.timeout_s=60";
  const std::string zero = (dir / "zero.pid").string(), r1 = (dir / "r1.txt").string(), status = (dir / "r1.status").string();
  std::system(("(RANK=0 " + env + " " + cmd + " > " + (dir / "r0.txt").string() + " 2>&1 & echo $! > " + zero + "; RANK=1 " + env + " " + cmd +
               " > " + r1 + " 2>&1; echo $? > " + status + ".tmp; mv " + status + ".tmp " + status + ") &")
                  .c_str());
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(port);
  options.isServer = false;
  options.timeout = std::chrono::seconds(60);
  c10d::TCPStore store("127.0.0.1", options);
  store.wait({"dyno/world_size_of/1"});
  ::kill(std::stoi(read_file(zero)), SIGKILL);
  for (int i = 0; i < 600 && !std::filesystem::exists(status); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(read_file(status), "4\n") << read_file(r1);
  EXPECT_NE(read_file(r1).find("lost the store at 127.0.0.1:" + std::to_string(port) + " while the ranks joined"), std::string::npos) << read_file(r1);
  testing::remove_tree(dir);
}

TEST(Ddp, MismatchedWorldSizesAreAnError) {
  auto dir = testing::fresh_dir("ddp_world");
  int fd = -1;
  const int port = busy_port(fd);
  ::close(fd);  // a free port now
  const std::string env = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port);
  const std::string cmd = std::string(DYNO_BINARY) + " train " + kCommon + " --set ddp.timeout_s=10";
  const std::string both = "(RANK=0 WORLD_SIZE=2 " + env + " " + cmd + " > " + (dir / "r0.txt").string() + " 2>&1 & RANK=1 WORLD_SIZE=3 " + env +
                           " " + cmd + " > " + (dir / "r1.txt").string() + " 2>&1; wait)";
  std::system(both.c_str());
  const std::string out = read_file((dir / "r0.txt").string()) + read_file((dir / "r1.txt").string());
  EXPECT_NE(out.find("WORLD_SIZE differs across ranks"), std::string::npos) << out;
  testing::remove_tree(dir);
}

// A frozen parameter is not DDP's to reduce nor the optimizer's to step: it stays as it was.
TEST(Ddp, APartlyFrozenModelTrainsOnTwoRanks) {
  auto dir = testing::fresh_dir("ddp_frozen");
  const std::string state = (dir / "s.pt").string();
  auto r = launch(2, "--model " + testing::fixture("partly_frozen.pt") + " --data " + testing::fixture("data.pt") +
                         " --no-progress --set size=tiny threads=1 max_steps=4 warmup_steps=1 log_every_steps=2 final_eval=false stop_at_target=false "
                         "save_state=" + state + " --out " + (dir / "r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file((dir / "r.json").string()))["outcome"], "ok");
  testing::remove_tree(dir);
}

// A trainable parameter the loss never uses gets no gradient, so the overlapping all-reduce would
// never finish its bucket: the first step names it, on every rank, instead of a later LibTorch error.
TEST(Ddp, AParameterTheLossDoesNotUseIsNamed) {
  auto dir = testing::fresh_dir("ddp_unused");
  const std::string common = "--model " + testing::fixture("unused.pt") + " --data " + testing::fixture("data.pt") +
                             " --no-progress --set size=tiny threads=1 max_steps=4 warmup_steps=1 log_every_steps=2 final_eval=false stop_at_target=false";
  auto r = launch(2, common + " --out " + (dir / "r.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // On the launcher's last line too: a tuning trial's reason.
  EXPECT_NE(r.output.find("failed first (exit status 2): dyno: [ddp] the loss does not use model.0.spare.weight, model.0.spare.bias"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ddp.overlap=false"), std::string::npos) << r.output;
  // Without the overlapping all-reduce, it trains.
  r = launch(2, common + " --set ddp.overlap=false --out " + (dir / "r.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  testing::remove_tree(dir);
}

// A parameter some ranks' batches use and others' do not (a data-dependent branch): without the
// overlapping all-reduce every rank's gradients line up, a missing one counted as zeros, on every
// backend (gloo refused buffers of different lengths; shm averaged misaligned gradients).
TEST(Ddp, ABranchTheRanksTakeDifferentlyIsAveragedInLine) {
  auto dir = testing::fresh_dir("ddp_branchy");
  for (const char* backend : {"gloo", "shm"}) {
    auto r = launch(2, "--model " + testing::fixture("branchy.pt") + " --data " + testing::fixture("data.pt") +
                           " --no-progress --set size=tiny threads=1 max_steps=8 warmup_steps=1 log_every_steps=2 final_eval=false stop_at_target=false "
                           "ddp.overlap=false ddp.backend=" + backend + " --out " + (dir / "r.json").string());
    EXPECT_EQ(r.exit_code, 0) << backend << "\n" << r.output;
  }
  testing::remove_tree(dir);
}

// A /dev/shm with no room for the segment (a container's default 64 MiB, shared by others): the
// ranks ddp.backend=auto placed on shm average with gloo instead, together, saying so, and the
// report names the backend they used; an explicit ddp.backend=shm is the clean error, on every rank.
// The job runs in its own mount namespace over a 1 MiB /dev/shm.
TEST(Ddp, AutoFallsBackToGlooWhenSharedMemoryHasNoRoom) {
  const std::string small_shm = "unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm && exec \"$0\" \"$@\"'";
  if (std::system((small_shm + " true > /dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "no mount namespace with a tmpfs (unshare needs CAP_SYS_ADMIN)";
  const testing::TempDir dir("ddp_small_shm");
  const std::string out = dir.str() + "/r.json";
  auto r = launch(2, kCommon + " --out " + out, small_shm);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("No space left on device; ddp.backend=auto averages the gradients with gloo instead"), std::string::npos) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(out))["config"]["ddp.backend"], "gloo");
  r = launch(2, kCommon + " --set ddp.backend=shm --out " + out, small_shm);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("(8 MiB in /dev/shm): No space left on device; use ddp.backend=gloo"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("frame #"), std::string::npos) << r.output;  // no rank's stack trace
  // Whichever rank the launcher blames, the reason is rank 0's.
  EXPECT_NE(r.output.find("failed first (exit status 2): dyno: [ddp] rank 0 cannot create the shared-memory segment for ddp.backend=shm (8 MiB"),
            std::string::npos) << r.output;
}

// The port the launcher chose stays its own until rank 0's store binds it: no other process can
// take it (rank 1 tries, before rank 0 is up), and torch's own store binds it.
TEST(Ddp, TheLaunchHoldsThePortItChoseForRankZerosStore) {
  const testing::TempDir dir("ddp_port");
  const std::string script = dir.str() + "/ranks.py";
  write_file_atomically(script, R"(import os, socket, sys, time
rank = int(os.environ["RANK"])
if rank == 1:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])))
        print("rank 1 bound the port before rank 0", flush=True)
        sys.exit(1)
    except OSError as e:
        print("rank 1 could not bind it:", e.strerror, flush=True)
    s.close()
else:
    time.sleep(1)
import torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1) * (rank + 1)
dist.all_reduce(t)
print(f"rank {rank} sum {t.item():g}", flush=True)
dist.destroy_process_group()
)");
  const auto r = testing::run_dyno("launch --nproc 2 -- " + std::string(DYNO_PYTHON) + " " + script);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1 could not bind it: Address already in use"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0 sum 3"), std::string::npos) << r.output;
}

TEST(Ddp, TorchrunLaunchesTwoRanks) {
  if (std::string(DYNO_TORCHRUN).empty()) GTEST_SKIP() << "torchrun not found next to the configured Python";
  auto dir = testing::fresh_dir("ddp_torchrun");
  // (TMPDIR: torchrun's own log folders go with the test's.)
  const std::string command = "TMPDIR=" + dir.string() + " " + DYNO_TORCHRUN + " --nproc-per-node 2 --no-python " + DYNO_BINARY + " train " + kCommon +
                              " --set batch_size=32 --out " + (dir / "r.json").string() + " > " + (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file((dir / "log.txt").string());
  auto report = nlohmann::json::parse(read_file((dir / "r.json").string()));
  EXPECT_EQ(report["world_size"], 2);
  EXPECT_EQ(report["outcome"], "ok");
  testing::remove_tree(dir);
}

// The first message is NCCL 2.28's, from two ranks given one H200 through CUDA_VISIBLE_DEVICES=0; the
// others are its forms for another misuse and for a peer that is gone.
TEST(Ddp, NcclRefusingTwoRanksOnOneGpuIsTheJobsConfigurationNotAPeersFailure) {
  const std::string duplicate_gpu =
      "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL "
      "version 2.28.9 ncclInvalidUsage: This usually reflects invalid usage of NCCL library. Last error: Duplicate GPU detected : rank 1 "
      "and rank 0 both on CUDA device 60";
  EXPECT_TRUE(nccl_refused_usage(duplicate_gpu));
  EXPECT_NE(nccl_usage_failure(duplicate_gpu).find("Duplicate GPU detected"), std::string::npos);
  EXPECT_NE(nccl_usage_failure(duplicate_gpu).find("ddp.backend=gloo"), std::string::npos);
  const std::string other_misuse = "NCCL error in: ProcessGroupNCCL.cpp:1, invalid argument, NCCL version 2.28.9 ncclInvalidArgument: Invalid value";
  EXPECT_TRUE(nccl_refused_usage(other_misuse));
  EXPECT_EQ(nccl_usage_failure(other_misuse).find("a GPU of its own"), std::string::npos);
  const std::string peer_gone =
      "NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2001, remote process exited or there was a network "
      "error, NCCL version 2.28.9 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.";
  EXPECT_FALSE(nccl_refused_usage(peer_gone));
}

}  // namespace
}  // namespace dyno
