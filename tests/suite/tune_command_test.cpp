// `dyno tune` end to end: a real tuning run killed with SIGKILL mid-way resumes with no trial
// lost or repeated, and writes its report, best config (JSON and Python).
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixture_files.h"
#include "dyno/reports/atomic_file.h"
#include "test_support.h"

namespace dyno {
namespace {

std::vector<nlohmann::json> journal_trials(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    try {
      auto j = nlohmann::json::parse(line);
      if (j["kind"] == "trial") out.push_back(j["trial"]);
    } catch (...) {
    }
  }
  return out;
}

// A fresh folder `dir` holding space.json (`axes`), and the start of a time-to-target grid tuning of
// fashion-mlp over it on tiny data; the caller adds its target and options.
std::string time_to_target_tune(const std::string& dir, const std::string& axes) {
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": )" + axes + "}");
  return std::string(DYNO_BINARY) + " tune -w fashion-mlp --objective time-to-target --strategy grid --space " + dir +
         "/space.json --set size=tiny --set threads=1 --set warmup_steps=1 ";
}

pid_t spawn(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Starts `args` (a dyno tune), kills it with SIGKILL as soon as two trials are journaled (mid-way
// through the third), and returns the trials journaled by then.
std::vector<nlohmann::json> kill_after_two_trials(const std::vector<std::string>& args, const std::string& journal) {
  pid_t tuner = spawn(args);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (journal_trials(journal).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(tuner, SIGKILL);
  wait_for(tuner);
  return journal_trials(journal);
}

TEST(TuneCommand, KillNineThenResumeLosesAndRepeatsNothing) {
  const std::string dir = "/tmp/dyno_tune_resume_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir).c_str());
  std::system(("mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": {"batch_size": [32, 64, 128], "num_workers": [0, 1], "lr_scaling": ["sqrt"]}})");
  std::vector<std::string> args = {DYNO_BINARY, "tune", "-w", "fashion-mlp", "--strategy", "grid", "--space", dir + "/space.json",
                                   "--set", "size=tiny", "--set", "threads=1", "--set", "warmup_steps=1", "--measure-steps", "10",
                                   "--no-verify", "--out", dir + "/run"};
  const auto before = kill_after_two_trials(args, dir + "/run/journal.jsonl");
  ASSERT_GE(before.size(), 2u);
  ASSERT_LT(before.size(), 6u) << "the run finished before it could be killed";

  args.push_back("--resume");
  ASSERT_EQ(wait_for(spawn(args)), 0);
  const auto after = journal_trials(dir + "/run/journal.jsonl");
  std::set<std::string> keys;
  for (const auto& t : after) EXPECT_TRUE(keys.insert(t["key"].get<std::string>()).second) << "trial run twice: " << t["key"];
  EXPECT_EQ(after.size(), 8u);  // the grid's 6, then the chosen and the default configuration profiled
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);  // nothing lost or rewritten

  auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  EXPECT_EQ(report["kind"], "tune");
  EXPECT_EQ(report["trials"].size(), 8u);
  EXPECT_EQ(report["cost"]["trials"], 6);  // profiles are not part of the search's cost
  for (const char* which : {"best", "default"}) {
    const auto& profile = report["profiles"][which];
    EXPECT_EQ(profile["outcome"], "ok") << which;
    EXPECT_TRUE(profile["verdict"]["headline"].is_string()) << which;
    EXPECT_TRUE(std::filesystem::exists(profile["trace"].get<std::string>())) << which;
  }
  EXPECT_EQ(report["profiles"]["best"]["at"], "batch_size " + report["best"]["point"]["batch_size"].dump());
  EXPECT_FALSE(report["best"].is_null());
  // The best's changes are from the untuned configuration the verification compares it with (the
  // recipe's LR unscaled), a trial's from the search's start (every trial's LR scaled).
  EXPECT_NE(report["best"]["changes"].get<std::string>().find("lr_scaling=sqrt"), std::string::npos) << report["best"]["changes"];
  for (const auto& t : report["trials"]) EXPECT_EQ(t["changes"].get<std::string>().find("lr_scaling"), std::string::npos) << t["changes"];
  EXPECT_FALSE(report["pareto_front"].empty());
  auto best = nlohmann::json::parse(read_file(dir + "/run/best-config.json"));
  EXPECT_EQ(best["workload"], "fashion-mlp");
  EXPECT_EQ(best["batch_size"], report["best"]["point"]["batch_size"]);
  const std::string python = read_file(dir + "/run/best-config.py");
  EXPECT_NE(python.find("zero_grad(set_to_none="), std::string::npos);
  EXPECT_NE(python.find("batch_size=" + best["batch_size"].dump()), std::string::npos);
  // The learning rate it trains with: the recipe's (AdamW, 1e-3 at batch 64 for fashion-mlp, scaled
  // to the chosen batch), not "lr=0".
  EXPECT_NE(python.find("optimizer_class = torch.optim.AdamW"), std::string::npos) << python;
  EXPECT_NE(python.find("lr = 0.00"), std::string::npos) << python;

  // Resuming with another measurement is refused: the journal's figures were measured over 10 steps.
  std::string longer;
  for (size_t i = 0; i < args.size(); ++i) longer += (i > 0 && args[i - 1] == "--measure-steps" ? std::string("20") : args[i]) + " ";
  EXPECT_EQ(WEXITSTATUS(std::system((longer + "> " + dir + "/refused.txt 2>&1").c_str())), 2);
  EXPECT_NE(read_file(dir + "/refused.txt").find("was made with --measure-steps 10, not 20"), std::string::npos) << read_file(dir + "/refused.txt");

  // The best config is loadable by `dyno train --config`.
  const std::string train = std::string(DYNO_BINARY) + " train --config " + dir + "/run/best-config.json --set max_steps=2 --no-progress --out " +
                            dir + "/check.json > /dev/null 2>&1";
  EXPECT_EQ(std::system(train.c_str()), 0);

  // The folder moved: its HTML report still finds each trial's run report, under the folder.
  ASSERT_EQ(std::rename((dir + "/run").c_str(), (dir + "/moved").c_str()), 0);
  ASSERT_EQ(std::system((std::string(DYNO_BINARY) + " report " + dir + "/moved --html > /dev/null 2>&1").c_str()), 0);
  const std::string html = read_file(dir + "/moved/report.html");
  EXPECT_NE(html.find("Phase breakdown of the best configuration</h2><svg"), std::string::npos) << html;
  EXPECT_EQ(html.find("not available"), std::string::npos) << html;
  std::system(("rm -rf " + dir).c_str());
}

// The order of the axes is the order a search asks for its points: a resume with the axes given
// in another order would ask for others, and is refused.
TEST(TuneCommand, ResumingWithTheAxesInAnotherOrderIsRefused) {
  auto dir = testing::fresh_dir("tune_axis_order");
  const std::string common = "tune -w fashion-mlp --set size=tiny --set max_steps=12 --strategy random --trials 2 --no-verify --no-profile -q --out " +
                             (dir / "run").string();
  testing::run_dyno(common + " --axis prefetch=1,2 --axis grad_accum_steps=1,2");
  const auto r = testing::run_dyno(common + " --axis grad_accum_steps=1,2 --axis prefetch=1,2 --resume");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("was made with axis order ["), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"prefetch\",\"grad_accum_steps\"], not ["), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(TuneCommand, AFullDiskStopsTuningWithAClearErrorAndResumeFinishesIt) {
  const std::string dir = "/tmp/dyno_tune_full_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": {"batch_size": [32, 64, 128], "num_workers": [0, 1]}})");
  const std::vector<std::string> args = {DYNO_BINARY, "tune", "-w", "fashion-mlp", "--strategy", "grid", "--space", dir + "/space.json",
                                         "--set", "size=tiny", "--set", "threads=1", "--set", "warmup_steps=1", "--measure-steps", "10",
                                         "--no-verify", "--no-profile", "--out", dir + "/run"};
  // A 9000-byte file size limit, as a disk that fills up: the journal and the trials' reports fit,
  // the tuning report does not.
  std::vector<std::string> limited = {"/usr/bin/prlimit", "--fsize=9000"};
  limited.insert(limited.end(), args.begin(), args.end());
  const std::string log = dir + "/limited.log";
  const std::string command = [&] {
    std::string c;
    for (const auto& a : limited) c += a + " ";
    return c + "> " + log + " 2>&1";
  }();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 75) << read_file(log);
  EXPECT_NE(read_file(log).find("cannot write '" + dir + "/run/report.json.tmp."), std::string::npos) << read_file(log);
  EXPECT_NE(read_file(log).find("free space, then continue with the same command and --resume"), std::string::npos) << read_file(log);
  const auto before = journal_trials(dir + "/run/journal.jsonl");
  EXPECT_EQ(before.size(), 6u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/run/report.json"));
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();

  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  ASSERT_EQ(wait_for(spawn(resume)), 0);
  EXPECT_EQ(journal_trials(dir + "/run/journal.jsonl"), before);  // nothing measured again
  EXPECT_EQ(nlohmann::json::parse(read_file(dir + "/run/report.json"))["trials"].size(), 6u);
  std::system(("rm -rf " + dir).c_str());
}

TEST(TuneCommand, RefusesToOverwriteAJournalAndAMismatchedResume) {
  const std::string dir = "/tmp/dyno_tune_refuse_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/run").c_str());
  write_file_atomically(dir + "/run/journal.jsonl", R"({"kind":"header","strategy":"grid"})" "\n");
  const std::string base = std::string(DYNO_BINARY) + " tune -w fashion-mlp --set size=tiny --no-verify --out " + dir + "/run ";
  EXPECT_EQ(WEXITSTATUS(std::system((base + "> " + dir + "/out.txt 2>&1").c_str())), 2);
  EXPECT_NE(read_file(dir + "/out.txt").find("already holds a tuning journal; pass --resume"), std::string::npos);
  EXPECT_EQ(WEXITSTATUS(std::system((base + "--resume > " + dir + "/out.txt 2>&1").c_str())), 2);
  EXPECT_NE(read_file(dir + "/out.txt").find("was made with base_config null, not {"), std::string::npos);
  EXPECT_EQ(WEXITSTATUS(std::system((std::string(DYNO_BINARY) + " tune -w fashion-mlp --strategy bogus --out " + dir +
                                     "/x > " + dir + "/out.txt 2>&1").c_str())), 2);
  EXPECT_NE(read_file(dir + "/out.txt").find("--strategy: 'bogus' is not one of grid, random, staged, halving"), std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

// --trials is the whole run's: phase 1 leaves phase 2 up to half of it, and phase 2 has what phase 1 left.
TEST(TuneCommand, TimeToTargetsTrialBudgetCoversBothPhases) {
  const std::string dir = "/tmp/dyno_tune_ttt_budget_" + std::to_string(::getpid());
  const std::string cmd = time_to_target_tune(dir, R"({"batch_size": [32, 64, 128], "epochs": [1, 2]})") +
                          "--set target=0.5 --measure-steps 10 --trials 4 --no-verify --no-profile --out " + dir + "/run > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << read_file(dir + "/out.txt");
  auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  EXPECT_EQ(report["throughput_phase"]["trials"], 2);  // of its grid's 3
  EXPECT_EQ(report["cost"]["trials"], 2);
  EXPECT_NE(read_file(dir + "/out.txt").find("tuning cost: 4 trials"), std::string::npos) << read_file(dir + "/out.txt");
  std::system(("rm -rf " + dir).c_str());
}

// Resumed, phase 2's next trial runs under the cap its replayed trials set (the best so far), as
// it did in the first run, not under --verify-cap.
TEST(TuneCommand, ResumingTimeToTargetKeepsItsCapsSetsAsideAStalePhaseTwoAndRefusesAnotherObjective) {
  const std::string dir = "/tmp/dyno_tune_ttt_cap_" + std::to_string(::getpid());
  const std::string cmd = time_to_target_tune(dir, R"({"batch_size": [64], "epochs": [1, 2, 3]})") +
                          "--set target=0.5 --set lr=0.001 --no-verify --no-profile --out " + dir + "/run";
  ASSERT_EQ(WEXITSTATUS(std::system((cmd + " > " + dir + "/out.txt 2>&1").c_str())), 0) << read_file(dir + "/out.txt");
  const auto journal = read_file(dir + "/run/journal.jsonl");
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = journal.find('\n', start)) != std::string::npos; start = end + 1) lines.push_back(journal.substr(start, end - start));
  ASSERT_GE(lines.size(), 4u);  // the header and three trials
  const auto third = nlohmann::json::parse(lines[3])["trial"];
  const double first_cap = nlohmann::json::parse(read_file(third["report_path"].get<std::string>()))["config"]["time_limit_s"];
  EXPECT_LT(first_cap, 900);  // the best so far's time sets it
  std::string kept;
  for (size_t i = 0; i < 3; ++i) kept += lines[i] + "\n";
  write_file_atomically(dir + "/run/journal.jsonl", kept);
  std::system(("rm -rf " + dir + "/run/trials/" + std::filesystem::path(third["report_path"].get<std::string>()).parent_path().filename().string()).c_str());
  ASSERT_EQ(WEXITSTATUS(std::system((cmd + " --resume > " + dir + "/resumed.txt 2>&1").c_str())), 0) << read_file(dir + "/resumed.txt");
  const auto rerun = nlohmann::json::parse(read_file(third["report_path"].get<std::string>()));
  EXPECT_DOUBLE_EQ(rerun["config"]["time_limit_s"].get<double>(), first_cap);

  // A phase 2 that started from another phase-1 winner (phase 1 ran on with a larger budget) is
  // set aside, kept, and phase 2 starts afresh.
  auto header = nlohmann::json::parse(lines[0]);
  header["base_config"]["seed"] = 99;
  std::string moved = header.dump() + "\n";
  for (size_t i = 1; i < lines.size(); ++i) moved += lines[i] + "\n";
  write_file_atomically(dir + "/run/journal.jsonl", moved);
  ASSERT_EQ(WEXITSTATUS(std::system((cmd + " --resume > " + dir + "/again.txt 2>&1").c_str())), 0) << read_file(dir + "/again.txt");
  EXPECT_NE(read_file(dir + "/again.txt").find("started from another phase-1 winner (base_config/seed 99, not 0)"), std::string::npos)
      << read_file(dir + "/again.txt");
  // The journal set aside names its trials' reports where they now are.
  auto set_aside_reports = [&](int n) {
    std::vector<std::string> paths;
    for (const auto& t : journal_trials(dir + "/run/journal-set-aside-" + std::to_string(n) + ".jsonl")) {
      paths.push_back(t["report_path"].get<std::string>());
      EXPECT_EQ(paths.back().rfind(dir + "/run/trials-set-aside-" + std::to_string(n) + "/", 0), 0u) << paths.back();
      EXPECT_TRUE(std::filesystem::exists(paths.back())) << paths.back();
    }
    return paths;
  };
  EXPECT_EQ(set_aside_reports(1).size(), lines.size() - 1);
  // A kill between its two renames (the trials folder set aside, the journal not): the next resume
  // completes it under the same number.
  const auto afresh = read_file(dir + "/run/journal.jsonl");
  header = nlohmann::json::parse(afresh.substr(0, afresh.find('\n')));
  header["base_config"]["seed"] = 98;
  write_file_atomically(dir + "/run/journal.jsonl", header.dump() + afresh.substr(afresh.find('\n')));
  std::filesystem::rename(dir + "/run/trials", dir + "/run/trials-set-aside-2");
  ASSERT_EQ(WEXITSTATUS(std::system((cmd + " --resume > " + dir + "/again.txt 2>&1").c_str())), 0) << read_file(dir + "/again.txt");
  EXPECT_FALSE(set_aside_reports(2).empty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/run/trials-set-aside-3"));

  // Resumed as another objective: refused before any trial runs.
  const auto r = std::system((std::string(DYNO_BINARY) + " tune -w fashion-mlp --space " + dir + "/space.json --resume --out " + dir + "/run > " +
                              dir + "/objective.txt 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(r), 2);
  EXPECT_NE(read_file(dir + "/objective.txt").find("was made with objective \"time-to-target\", not \"throughput\""), std::string::npos)
      << read_file(dir + "/objective.txt");
  // ... also when it was interrupted in phase 1, which has only its own journal (throughput/).
  std::filesystem::remove(dir + "/run/journal.jsonl");
  const auto r1 = std::system((std::string(DYNO_BINARY) + " tune -w fashion-mlp --space " + dir + "/space.json --resume --out " + dir + "/run > " +
                               dir + "/objective.txt 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(r1), 2);
  EXPECT_NE(read_file(dir + "/objective.txt").find("was made with --objective time-to-target (its phase 1"), std::string::npos)
      << read_file(dir + "/objective.txt");
  std::system(("rm -rf " + dir).c_str());
}

TEST(TuneCommand, TimeToTargetSearchesThroughputThenConvergence) {
  const std::string dir = "/tmp/dyno_tune_ttt_" + std::to_string(::getpid());
  // Tiny data and a reachable target: phase 1 measures throughput over batch_size, phase 2 trains
  // its winner to the target for each epochs value, at the recipe's batch (64; 128 is a refinement).
  const std::string cmd = time_to_target_tune(dir, R"({"batch_size": [64, 128], "epochs": [0, 1, 2]})") +
                          "--set target=0.55 --measure-steps 10 --verify-seeds 2 --out " + dir + "/run > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << read_file(dir + "/out.txt");
  auto phase1 = nlohmann::json::parse(read_file(dir + "/run/throughput/report.json"));
  EXPECT_EQ(phase1["objective"], "throughput");
  EXPECT_EQ(phase1["trials"].size(), 2u);
  EXPECT_TRUE(phase1["space"]["axes"].contains("batch_size"));
  EXPECT_FALSE(phase1["space"]["axes"].contains("epochs"));
  EXPECT_TRUE(phase1["profiles"].is_null());  // the profiles are of phase 2's pick, in its report
  EXPECT_EQ(phase1["throughput_unit"], "samples");
  auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  EXPECT_EQ(report["objective"], "time-to-target");
  EXPECT_FALSE(report["space"]["axes"].contains("batch_size"));
  EXPECT_EQ(report["space"]["axes"]["label_smoothing"], nlohmann::json::parse("[0.0, 0.1]"));  // default axis for accuracy targets
  EXPECT_EQ(report["throughput_phase"]["trials"], 2);
  ASSERT_FALSE(report["best"].is_null()) << read_file(dir + "/out.txt");
  // After the grid: the grid's best with its LR doubled and halved (one that reaches the target
  // also with the other values of the other axes but epochs), then the final race of the three
  // fastest points, each trained again with the next seed; the winner is chosen on both seeds.
  std::vector<double> refined_lrs;
  for (const auto& t : report["trials"])
    if (t["stage"] == "refine-lr" && std::find(refined_lrs.begin(), refined_lrs.end(), t["point"]["lr"].get<double>()) == refined_lrs.end())
      refined_lrs.push_back(t["point"]["lr"].get<double>());
  ASSERT_EQ(refined_lrs.size(), 2u);
  EXPECT_NEAR(refined_lrs[0] / refined_lrs[1], 4.0, 1e-9);  // x2, then x0.5
  const auto& winner = report["best"];
  EXPECT_EQ(winner["stage"], "race");
  EXPECT_EQ(winner["budget_level"], 2);
  EXPECT_EQ(nlohmann::json::parse(read_file(winner["report_path"].get<std::string>()))["config"]["seed"], 1);  // the next seed
  EXPECT_NEAR(winner["objective"].get<double>(), 1.0 / winner["time_to_target_s"].get<double>(), 1e-9);  // its own seed's
  // The race's winner: the leader (the highest estimate under the noise model, as the report ranks
  // the points), or a point shown equivalent to it, whose estimate is within the 2% margin.
  std::map<std::string, double> estimate;
  for (const auto& r : report["ranking"]) estimate[r["point"].dump()] = std::log(r["estimate"].get<double>());
  for (size_t i = 1; i < report["ranking"].size(); ++i)  // the highest estimate first
    EXPECT_GE(report["ranking"][i - 1]["estimate"].get<double>(), report["ranking"][i]["estimate"].get<double>());
  // The winner is chosen on both seeds: its estimate is over both processes.
  EXPECT_NEAR(std::log(winner["estimate"].get<double>()), estimate.at(winner["point"].dump()), 1e-9);
  for (const auto& r : report["ranking"])
    if (r["point"] == winner["point"]) {
      EXPECT_EQ(r["processes"], 2);
    }
  int raced = 0;
  for (const auto& t : report["trials"])
    if (t["stage"] == "race") {
      ++raced;
      EXPECT_GE(estimate.at(winner["point"].dump()), estimate.at(t["point"].dump()) - 0.02) << t["point"].dump();
    }
  EXPECT_EQ(raced, 3);  // --verify-seeds 2: one round
  for (const auto& t : report["trials"])
    if (t["stage"] == "grid") {
      EXPECT_EQ(nlohmann::json::parse(read_file(t["report_path"].get<std::string>()))["config"]["batch_size"], 64);
    }
  // The best's changes are the run's, from the untuned configuration: phase 1's (here its batch, when
  // phase 2 kept it) with phase 2's.
  const std::string changes = report["best"]["changes"];
  EXPECT_NE(read_file(dir + "/out.txt").find("s to target estimated over 2 seeds (this one "), std::string::npos) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find(" s), " + changes + "\n"), std::string::npos) << changes;
  const int64_t best_batch = report["best"]["point"].value("batch_size", int64_t{64});
  EXPECT_EQ(changes.find("batch_size=128") != std::string::npos, best_batch == 128) << changes;
  // The best config carries phase 2's batch (the grid's or a refinement's) and horizon.
  auto best = nlohmann::json::parse(read_file(dir + "/run/best-config.json"));
  EXPECT_EQ(best["batch_size"], best_batch);
  EXPECT_EQ(best["epochs"], report["best"]["point"]["epochs"]);
  EXPECT_EQ(best["target"], 0.55);
  // Verification: one (tuned, default) pair per seed; the speedup is total default over total tuned time.
  const auto& v = report["verification"];
  ASSERT_EQ(v["seeds"].size(), 2u) << v.dump();
  EXPECT_EQ(v["seeds"][1]["seed"], 1);
  double tuned = 0, fallback = 0;
  for (const auto& p : v["seeds"]) {
    tuned += p["best"]["time_to_target_s"].get<double>();
    fallback += p["default"]["time_to_target_s"].get<double>();
  }
  EXPECT_NEAR(v["speedup"].get<double>(), fallback / tuned, 1e-9);
  EXPECT_EQ(v["best"], v["seeds"][0]["best"]);
  EXPECT_NE(read_file(dir + "/out.txt").find("verification over 2 seeds: speedup"), std::string::npos);
  EXPECT_NE(read_file(dir + "/out.txt").find("phase 2 (time to target"), std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace dyno

namespace dyno {
namespace {

// A fake training program: acknowledges its knobs, writes 12 windows (throughput set by
// batch_size and mode) in about 0.6 s, and is done.
const char* kFakeProgram = R"(b=$DYNO_KNOB_BATCH_SIZE
rate=$((b * 10)); [ "$DYNO_KNOB_MODE" = fast ] && rate=$((rate * 2))
printf '{"event": "knobs", "applied": {"batch_size": %s, "mode": "%s"}}\n' $b "$DYNO_KNOB_MODE" >> "$DYNO_REPORT"
i=0
while [ $i -lt 12 ]; do
  sleep 0.05
  printf '{"event": "window", "items": %s, "seconds": 1, "loss": %s}\n' $rate $((20 - i)) >> "$DYNO_REPORT"
  i=$((i + 1))
done
printf '{"event": "done"}\n' >> "$DYNO_REPORT"
)";

TEST(TuneCommand, AProgramIsTunedThroughItsReportAndResumesAfterAKill) {
  const std::string dir = "/tmp/dyno_tune_program_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/program.sh", kFakeProgram);
  write_file_atomically(dir + "/space.json", R"({"axes": {"batch_size": [16, 32, 64], "mode": ["slow", "fast"]},
                                                 "knobs": {"mode": {"type": "choice", "choices": ["slow", "fast"]}}})");
  std::vector<std::string> args = {DYNO_BINARY, "tune", "--strategy", "grid", "--space", dir + "/space.json", "--warmup-windows", "2",
                                   "--out", dir + "/run", "--command", "/bin/sh", dir + "/program.sh", "--not-an-option-of-dyno"};
  const auto before = kill_after_two_trials(args, dir + "/run/journal.jsonl");
  ASSERT_GE(before.size(), 2u);
  ASSERT_LT(before.size(), 6u) << "the run finished before it could be killed";

  args.insert(args.begin() + 2, "--resume");
  ASSERT_EQ(wait_for(spawn(args)), 0);
  const auto after = journal_trials(dir + "/run/journal.jsonl");
  std::set<std::string> keys;
  for (const auto& t : after) EXPECT_TRUE(keys.insert(t["key"].get<std::string>()).second) << "trial run twice: " << t["key"];
  EXPECT_EQ(after.size(), 6u);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]);

  auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  EXPECT_EQ(report["best"]["point"], nlohmann::json::parse(R"({"batch_size": 64, "mode": "fast"})"));
  EXPECT_DOUBLE_EQ(report["best"]["samples_per_second"].get<double>(), 1280);
  EXPECT_EQ(report["base_config"]["command"][0], "/bin/sh");
  auto best = nlohmann::json::parse(read_file(dir + "/run/best-config.json"));
  EXPECT_EQ(best["environment"]["DYNO_KNOB_MODE"], "fast");
  EXPECT_EQ(best["argv"].back(), "--not-an-option-of-dyno");
  EXPECT_NE(read_file(dir + "/run/best-config.sh").find("DYNO_KNOB_BATCH_SIZE=64 DYNO_KNOB_MODE=fast DYNO_SEED=0 /bin/sh"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir + "/run/best-config.json"))["working_directory"], std::filesystem::current_path().string());
  // The point as the trials had it at DYNO_POINT, beside the script, from wherever it runs.
  EXPECT_EQ(nlohmann::json::parse(read_file(dir + "/run/best-point.json")), report["best"]["point"]);
  // Its HTML report charts the losses the program reported, over the items it reported.
  ASSERT_EQ(std::system((std::string(DYNO_BINARY) + " report " + dir + "/run --html > /dev/null 2>&1").c_str()), 0);
  const std::string html = read_file(dir + "/run/report.html");
  EXPECT_EQ(html.find("No loss curves recorded"), std::string::npos) << html;
  EXPECT_NE(html.find(">" + report["throughput_unit"].get<std::string>() + " seen</text>"), std::string::npos) << html;
  const std::string point_lines = "point=\"$(CDPATH= cd -- \"$(dirname -- \"$0\")\" && pwd)/best-point.json\"\n"
                                  "if [ -f \"$point\" ]; then DYNO_POINT=\"$point\"; export DYNO_POINT; fi\n";
  EXPECT_NE(read_file(dir + "/run/best-config.sh").find(point_lines), std::string::npos);
  ASSERT_EQ(std::system(("cd / && sh -c '" + std::string("eval \"$(sed -n 3,4p " + dir + "/run/best-config.sh)\"; cmp \"$DYNO_POINT\" " + dir +
                         "/run/best-point.json'") + " " + dir + "/run/best-config.sh").c_str()),
            0);
  std::system(("rm -rf " + dir).c_str());
}

// A tune killed outright leaves what its trial's program started running (the kill reaches only
// the trial's own process); --resume ends it, found by the tune's folder it inherited, and nothing
// of another tune's, even one whose --out lies inside this one's.
TEST(TuneCommand, ResumeEndsWhatAKilledTunesTrialLeftRunning) {
  const std::string dir = "/tmp/dyno_tune_leftovers_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": {"x": [1, 2]}, "knobs": {"x": {"type": "integer"}}})");
  // A program that starts a process of a command line of this test's own (`marker`) and reports
  // windows that vary, 0.5 s apart (a trial of some seconds, which the checks below fall inside),
  // or nothing (a trial that runs until its tune ends).
  auto tune_starting = [&](const std::string& marker, const std::string& out, bool reports) {
    const std::string program = dir + "/" + marker.substr(marker.size() - 5) + ".sh";
    const std::string report = reports ? "  printf '{\"event\": \"window\", \"items\": %s, \"seconds\": 0.1}\\n' $((8 + i % 5)) >> \"$DYNO_REPORT\"\n" : "";
    write_file_atomically(program, marker + " &\ni=0\nwhile true; do\n  i=$((i + 1))\n" + report + "  sleep 0.5\ndone\n");
    return std::vector<std::string>{DYNO_BINARY, "tune", "--strategy", "grid", "--space", dir + "/space.json", "--no-verify",
                                    "--out", out, "--command", "/bin/sh", program, "{x}"};
  };
  auto running = [](const std::string& marker) {  // ([s] keeps the shell out)
    return std::system(("pgrep -f '[" + marker.substr(0, 1) + "]" + marker.substr(1) + "' > /dev/null").c_str()) == 0;
  };
  auto started = [&](const std::string& marker) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!running(marker) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return running(marker);
  };
  const std::string marker = "sleep 3" + std::to_string(::getpid() % 1000 + 1000), inner_marker = "sleep 4" + std::to_string(::getpid() % 1000 + 1000);
  std::vector<std::string> args = tune_starting(marker, dir + "/run", true);
  const pid_t tuner = spawn(args);
  if (!started(marker)) {
    ::kill(tuner, SIGKILL);
    wait_for(tuner);
    FAIL() << "the trial's program did not start within 60 s";
  }
  // While it runs, no other tune may take its folder (a resume would end its trials).
  std::vector<std::string> resume = args;
  resume.insert(resume.begin() + 2, "--resume");
  EXPECT_EQ(wait_for(spawn(resume)), 2);
  EXPECT_TRUE(running(marker)) << "the running tune's trial was ended";
  ::kill(tuner, SIGKILL);
  wait_for(tuner);
  ASSERT_TRUE(running(marker)) << "the trial left nothing running to end";
  // Another tune, in a folder inside this one's, runs a trial.
  const pid_t inner = spawn(tune_starting(inner_marker, dir + "/run/inner", false));
  const bool inner_started = started(inner_marker);
  // --out spelled otherwise than the first run's.
  resume[resume.size() - 5] = dir + "/./run/";
  EXPECT_EQ(wait_for(spawn(resume)), 0);
  EXPECT_FALSE(running(marker)) << "left running after --resume";
  EXPECT_TRUE(inner_started) << "the inner tune's program did not start within 60 s";
  EXPECT_TRUE(running(inner_marker)) << "the resume ended the trial of a tune inside its folder";
  ::kill(inner, SIGKILL);
  wait_for(inner);
  std::system(("pkill -f '[" + marker.substr(0, 1) + "]" + marker.substr(1) + "'; pkill -f '[" + inner_marker.substr(0, 1) + "]" + inner_marker.substr(1) +
               "'; rm -rf " + dir).c_str());
}

// A knob whose price is paid before the measured windows (declared warmup_cost, as compiling) would
// win on throughput that leaves its price out, and one whose role is convergence (a learning rate)
// would win on noise: the throughput objective keeps both at their defaults.
TEST(TuneCommand, TheThroughputObjectiveLeavesWarmupCostAndConvergenceKnobsAtTheirDefaults) {
  const std::string dir = "/tmp/dyno_tune_warmup_cost_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  // The fake program, acknowledging its rate too.
  write_file_atomically(dir + "/program.sh", "printf '{\"event\": \"knobs\", \"applied\": {\"rate\": %s}}\\n' $DYNO_KNOB_RATE >> \"$DYNO_REPORT\"\n" +
                                                 std::string(kFakeProgram));
  write_file_atomically(dir + "/space.json", R"({"axes": {"batch_size": [16, 32], "mode": ["slow", "fast"], "rate": [0.5, 0.1]},
                                                 "knobs": {"mode": {"type": "choice", "choices": ["slow", "fast"], "warmup_cost": true},
                                                           "rate": {"type": "real", "default": 0.1, "role": "convergence"}}})");
  const std::string cmd = std::string(DYNO_BINARY) + " tune --strategy grid --space " + dir + "/space.json --out " + dir +
                          "/run --command /bin/sh " + dir + "/program.sh > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("mode stays \"slow\": it is declared warmup_cost"), std::string::npos) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("rate stays 0.1: its role is convergence"), std::string::npos) << read_file(dir + "/out.txt");
  // Without --target there is nothing to verify the pick against: the tune says so.
  EXPECT_NE(read_file(dir + "/out.txt").find("[tune] no verification: a --command program is trained to --target"), std::string::npos);
  // The best's figure is its point's estimate, over the one process that measured it here.
  EXPECT_NE(read_file(dir + "/out.txt").find("estimated over 1 process (this one "), std::string::npos) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("outcome             items/s  95% interval"), std::string::npos) << read_file(dir + "/out.txt");  // a program's unit
  const auto trials = journal_trials(dir + "/run/journal.jsonl");
  EXPECT_EQ(trials.size(), 2u);
  for (const auto& t : trials) EXPECT_FALSE(t["point"].contains("mode") || t["point"].contains("rate")) << t.dump();
  auto best = nlohmann::json::parse(read_file(dir + "/run/best-config.json"));
  EXPECT_EQ(best["environment"]["DYNO_KNOB_MODE"], "slow");
  EXPECT_EQ(best["environment"]["DYNO_KNOB_RATE"], "0.1");
  EXPECT_EQ(best["environment"]["DYNO_KNOB_BATCH_SIZE"], "32");
  // Time to target searches it (phase 2), even when it is all the space has.
  write_file_atomically(dir + "/to-target.sh", R"(printf '{"event": "knobs", "applied": {"mode": "%s"}}\n' "$DYNO_KNOB_MODE" >> "$DYNO_REPORT"
printf '{"event": "eval", "metric": "accuracy", "value": 0.9}\n{"event": "done"}\n' >> "$DYNO_REPORT"
)");
  write_file_atomically(dir + "/space.json", R"({"axes": {"mode": ["slow", "fast"]},
                                                 "knobs": {"mode": {"type": "choice", "choices": ["slow", "fast"], "warmup_cost": true}}})");
  const std::string to_target = std::string(DYNO_BINARY) + " tune --objective time-to-target --target 'accuracy>=0.85' --verify-seeds 1 --space " + dir +
                                "/space.json --out " + dir + "/run-to-target --command /bin/sh " + dir + "/to-target.sh > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(to_target.c_str())), 0) << read_file(dir + "/out.txt");
  std::set<std::string> modes;
  for (const auto& t : journal_trials(dir + "/run-to-target/journal.jsonl"))
    if (t["point"].contains("mode")) modes.insert(t["point"]["mode"].get<std::string>());
  EXPECT_EQ(modes, (std::set<std::string>{"slow", "fast"}));
  std::system(("rm -rf " + dir).c_str());
}

TEST(TuneCommand, SpacesSettingsAndCommandsAreCheckedBeforeAnyTrial) {
  const std::string dir = "/tmp/dyno_tune_program_errors_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  auto fails_with = [&](const std::string& options, const std::string& message) {
    const std::string cmd = std::string(DYNO_BINARY) + " tune --out " + dir + "/run " + options + " > " + dir + "/out.txt 2>&1";
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2) << options;
    EXPECT_NE(read_file(dir + "/out.txt").find(message), std::string::npos) << read_file(dir + "/out.txt");
  };
  fails_with("--axis compile=true,false --command /bin/true", "axis 'compile' is not a knob");
  write_file_atomically(dir + "/space.json", R"({"axes": {"compile": [true, 3]}, "knobs": {"compile": {"type": "bool"}}})");
  fails_with("--space " + dir + "/space.json --command /bin/true", "[space] '" + dir + "/space.json': axis compile: value 3 is not true or false");
  write_file_atomically(dir + "/space.json", R"({"axes": {"compile": [true]}, "knobs": {"compile": {"type": "flag"}}})");
  fails_with("--space " + dir + "/space.json --command /bin/true", "[space] '" + dir + "/space.json': knob compile: type 'flag' is not one of bool, integer, real, choice, text");
  fails_with("--axis batch_size=8 --command /bin/echo {batch}", "[command] placeholder {batch} names no knob of the search space");
  fails_with("--command /bin/true", "--command needs a search space");
  write_file_atomically(dir + "/space.json", R"({"axes": {"compile": [false, true]}, "knobs": {"compile": {"type": "bool", "warmup_cost": true}}})");
  fails_with("--space " + dir + "/space.json --command /bin/true", "every axis is a knob whose role is convergence or that is declared warmup_cost");
  fails_with("--axis batch_size=8 --objective time-to-target --command /bin/true", "needs --target METRIC>=VALUE");
  fails_with("--axis batch_size=8 --command no-such-program-dyno", "'no-such-program-dyno' is not an executable file on PATH");
  fails_with("--axis batch_size=8 --command -- no-such-program-dyno", "'no-such-program-dyno' is not an executable file on PATH");  // as dyno launch's "--"
  fails_with("--strategy grid /bin/true", "unexpected argument '/bin/true' (an external program goes after --command)");
  // A workload's space, as a new user writes it: the wrong type names the axis and the value.
  write_file_atomically(dir + "/space.json", R"({"axes": {"threads": {"min": 1, "max": 2, "step": "x"}}})");
  fails_with("-w fashion-mlp --space " + dir + "/space.json", "[space] '" + dir + "/space.json': axis threads: field 'step' is \"x\"; expected a number");
  fails_with("-w fashion-mlp --axis amp=off,bf16 --set lr=nan", "[config] lr: 'nan' is not a number in [0, 100]");
  std::system(("rm -rf " + dir).c_str());
}

// Checkpointing recomputes every segment but the last: on a model of one segment (a TorchScript
// model that is not a chain) train says it changes nothing and tune does not search it.
TEST(TuneCommand, CheckpointingIsNotSearchedOnAModelOfOneSegment) {
  const std::string dir = "/tmp/dyno_tune_one_segment_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  const std::string model = " --model " + testing::fixture("tree.pt") + " --data " + testing::fixture("data.pt");
  const std::string train = std::string(DYNO_BINARY) + " train" + model + " --set size=tiny max_steps=2 checkpointing=true --no-progress -o " + dir +
                            "/r.json > " + dir + "/train.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(train.c_str())), 0) << read_file(dir + "/train.txt");
  EXPECT_NE(read_file(dir + "/train.txt").find("[train] warning: checkpointing=true changes nothing here: the model is one segment"), std::string::npos)
      << read_file(dir + "/train.txt");
  const std::string tune = std::string(DYNO_BINARY) + " tune" + model + " --set size=tiny --trials 1 --measure-steps 4 --no-verify --no-profile -q --out " +
                           dir + "/run > " + dir + "/tune.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(tune.c_str())), 0) << read_file(dir + "/tune.txt");
  EXPECT_NE(read_file(dir + "/tune.txt").find("[tune] checkpointing is not searched: the model is one segment"), std::string::npos)
      << read_file(dir + "/tune.txt");
  const std::string journal = read_file(dir + "/run/journal.jsonl");
  EXPECT_FALSE(nlohmann::json::parse(journal.substr(0, journal.find('\n')))["space"]["axes"].contains("checkpointing"));
  std::system(("rm -rf " + dir).c_str());
}

// A knob given with --set is fixed: the default space's axis for it is left out, and said so.
TEST(TuneCommand, ASettingTakesItsKnobOutOfTheDefaultSpace) {
  const std::string dir = "/tmp/dyno_tune_set_fixes_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  const std::string cmd = std::string(DYNO_BINARY) + " tune -w fashion-mlp --set size=tiny --set threads=1 --set amp=bf16 --trials 1 "
                          "--measure-steps 4 --no-verify --no-profile -q --out " + dir + "/run > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("[tune] amp stays bf16 (--set): the default space's amp axis is left out"), std::string::npos)
      << read_file(dir + "/out.txt");
  const auto header = nlohmann::json::parse(read_file(dir + "/run/journal.jsonl").substr(0, read_file(dir + "/run/journal.jsonl").find('\n')));
  const auto axes = header["space"]["axes"];
  EXPECT_FALSE(axes.contains("threads")) << axes;
  EXPECT_FALSE(axes.contains("amp")) << axes;
  EXPECT_TRUE(axes.contains("batch_size")) << axes;
  EXPECT_EQ(header["base_config"]["amp"], "bf16");
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace dyno

namespace dyno {
namespace {

TEST(TuneCommand, ALauncherTemplateStartsEachTrialsRanks) {
  if (std::string(DYNO_TORCHRUN).empty()) GTEST_SKIP() << "no torchrun next to DYNO_PYTHON";
  const std::string dir = "/tmp/dyno_tune_launcher_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": {"ddp.world_size": [1, 2]}})");
  const std::string port = std::to_string(20000 + ::getpid() % 20000);
  // (TMPDIR: torchrun's own log folders go with the test's.)
  const std::string cmd = "TMPDIR=" + dir + " " + DYNO_BINARY + " tune -w fashion-mlp --strategy grid --space " + dir +
                          "/space.json --set size=tiny --set threads=1 --set warmup_steps=1 --measure-steps 10 --no-verify --no-profile --launcher \"/bin/sh -c 'echo {ddp.world_size} >> " +
                          dir + "/launched; exec \\\"\\$@\\\"' launcher " + DYNO_TORCHRUN + " --no-python --nproc-per-node {ddp.world_size} --master-port " +
                          port + "\" --out " + dir + "/run > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0) << cmd << "\n" << read_file(dir + "/out.txt");
  EXPECT_EQ(read_file(dir + "/launched"), "1\n2\n");  // the template, filled from each trial, ran in front of it
  const auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  ASSERT_EQ(report["trials"].size(), 2u);
  for (const auto& t : report["trials"]) {
    ASSERT_EQ(t["outcome"], "ok") << t["reason"];
    // torchrun started the point's number of ranks; rank 0's report records the world size.
    const auto run = nlohmann::json::parse(read_file(t["report_path"].get<std::string>()));
    EXPECT_NE(run.dump().find("\"world_size\":" + t["point"]["ddp.world_size"].dump()), std::string::npos) << t["point"];
  }
  std::system(("rm -rf " + dir).c_str());
}

// A launcher that starts its own number of ranks, not the point's: that point is recorded as an
// invalid config, not measured as what it asked for.
TEST(TuneCommand, ALauncherThatStartsAnotherNumberOfRanksIsAnInvalidConfig) {
  if (std::string(DYNO_TORCHRUN).empty()) GTEST_SKIP() << "no torchrun next to DYNO_PYTHON";
  const std::string dir = "/tmp/dyno_tune_fixed_launcher_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  write_file_atomically(dir + "/space.json", R"({"axes": {"ddp.world_size": [1, 2]}})");
  const std::string port = std::to_string(20000 + (::getpid() + 7) % 20000);
  const std::string cmd = "TMPDIR=" + dir + " " + DYNO_BINARY + " tune -w fashion-mlp --strategy grid --space " + dir +
                          "/space.json --set size=tiny --set threads=1 --set warmup_steps=1 --measure-steps 10 --no-verify --no-profile --launcher \"" +
                          DYNO_TORCHRUN + " --no-python --nproc-per-node 2 --master-port " + port + "\" --out " + dir + "/run > " + dir + "/out.txt 2>&1";
  std::system(cmd.c_str());
  const auto report = nlohmann::json::parse(read_file(dir + "/run/report.json"));
  ASSERT_EQ(report["trials"].size(), 2u) << read_file(dir + "/out.txt");
  for (const auto& t : report["trials"]) {
    if (t["point"]["ddp.world_size"] == 2) {
      EXPECT_EQ(t["outcome"], "ok") << t["reason"];
    } else {
      EXPECT_EQ(t["outcome"], "invalid_config");
      EXPECT_EQ(t["reason"], "ddp.world_size: the point's is 1 and the launcher started 2 ranks; give the launcher {ddp.world_size}");
    }
  }
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace dyno
