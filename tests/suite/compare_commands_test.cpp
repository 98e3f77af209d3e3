// `dyno compare` and `dyno check` verdicts and exit codes on fixed inputs, through the real CLI.
#include <sched.h>

#include <sstream>

#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/suite/environment.h"
#include "test_support.h"

namespace dyno {
namespace {

// The environment names the device and this machine's CPU, and no other field a machine
// fingerprint compares: the baseline is comparable here whatever the rest of the machine.
nlohmann::json this_cpu() { return {{"device", "cpu"}, {"cpu_model", cpu_model()}, {"device_name", cpu_model("unknown cpu")}}; }

std::string baseline_file(const std::filesystem::path& dir, const std::string& name, const std::vector<double>& runs,
                          const std::string& kind = "baseline", const std::string& figure = "window_p90",
                          const nlohmann::json& environment = this_cpu()) {
  nlohmann::json config = {{"workload", "fashion-mlp"}, {"size", "tiny"}, {"max_steps", 16}, {"warmup_steps", 2},
                           {"log_every_steps", 2}, {"threads", 1}, {"stop_at_target", false}, {"final_eval", false}};
  const auto path = (dir / name).string();
  write_file_atomically(path, nlohmann::json{{"schema_version", "1.0"}, {"kind", kind}, {"config", config}, {"figure", figure}, {"runs", runs},
                                             {"environment", environment}}.dump());
  return path;
}

// Google Benchmark results: a benchmark of the baseline that errored in the candidate fails the
// comparison; one that is gone leaves it inconclusive; neither passes silently.
TEST(CompareCommand, ABenchmarkThatErroredOrWentMissingIsNoPass) {
  auto dir = testing::fresh_dir("compare_missing");
  // `errored`'s repetitions from `first_error` on errored.
  auto results = [&](const std::string& name, const std::vector<std::string>& benchmarks, const std::string& errored, int first_error = 0) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& b : benchmarks)
      for (int i = 0; i < 8; ++i)
        list.push_back(b == errored && i >= first_error ? nlohmann::json{{"name", b}, {"run_type", "iteration"}, {"error_occurred", true}, {"error_message", "boom"}}
                                    : nlohmann::json{{"name", b}, {"run_type", "iteration"}, {"real_time", 100 + 0.1 * i}, {"time_unit", "ns"}});
    const auto path = (dir / name).string();
    write_file_atomically(path, nlohmann::json{{"context", nlohmann::json::object()}, {"benchmarks", list}}.dump());
    return path;
  };
  const auto base = results("base.json", {"a", "b"}, ""), errored = results("errored.json", {"a", "b"}, "b"), gone = results("gone.json", {"a"}, "");
  auto r = testing::run_dyno("compare " + base + " " + errored);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("> b real_time: errored in the candidate (boom): FAIL"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + gone);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("> b real_time: not in the candidate: INCONCLUSIVE"), std::string::npos) << r.output;
  // Errors in some of the candidate's repetitions fail it too: the others do not make it a pass.
  r = testing::run_dyno("compare " + base + " " + results("partly.json", {"a", "b"}, "b", 5));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("> b real_time: errored in the candidate (boom): FAIL"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Times are compared in one unit whatever each file's time_unit: 1000 us against 1.5 ms is a 50%
// slowdown, 1 ms against 1000 us none.
TEST(CompareCommand, BenchmarkTimesAreComparedInOneUnit) {
  auto dir = testing::fresh_dir("compare_units");
  auto results = [&](const std::string& name, double time, const std::string& unit) {
    nlohmann::json list = nlohmann::json::array();
    for (int i = 0; i < 8; ++i) list.push_back({{"name", "a"}, {"run_type", "iteration"}, {"real_time", time * (1 + 0.001 * i)}, {"time_unit", unit}});
    const auto path = (dir / name).string();
    write_file_atomically(path, nlohmann::json{{"context", nlohmann::json::object()}, {"benchmarks", list}}.dump());
    return path;
  };
  auto r = testing::run_dyno("compare " + results("us.json", 1000, "us") + " " + results("ms.json", 1.5, "ms"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("+50."), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + results("ms1.json", 1, "ms") + " " + results("us1.json", 1000, "us"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_dyno("compare " + results("ms1.json", 1, "ms") + " " + results("weeks.json", 1, "weeks"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("time_unit 'weeks'"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// A benchmark file's metrics share --alpha (Holm): with too few repetitions for any of them to
// reach its level, even a 50% slowdown of every one is INCONCLUSIVE, and the summary says why.
TEST(CompareCommand, ManyMetricsShareAlphaAndTooFewRepetitionsAreSaid) {
  auto dir = testing::fresh_dir("compare_holm");
  auto results = [&](const std::string& name, double time, int repetitions) {
    nlohmann::json list = nlohmann::json::array();
    for (const char* b : {"a", "b", "c", "d"})
      for (int i = 0; i < repetitions; ++i) list.push_back({{"name", b}, {"run_type", "iteration"}, {"real_time", time * (1 + 0.001 * i)}, {"time_unit", "ns"}});
    const auto path = (dir / name).string();
    write_file_atomically(path, nlohmann::json{{"context", nlohmann::json::object()}, {"benchmarks", list}}.dump());
    return path;
  };
  auto r = testing::run_dyno("compare " + results("base6.json", 100, 6) + " " + results("slow6.json", 150, 6));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("6 and 6 repetitions can give p no smaller than"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + results("base10.json", 100, 10) + " " + results("slow10.json", 150, 10));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("4 metrics: a FAIL needs Holm's step-down level"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(CompareCommand, VerdictsAndExitCodes) {
  auto dir = testing::fresh_dir("compare");
  auto base = baseline_file(dir, "base.json", {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8});
  auto same = baseline_file(dir, "same.json", {100.3, 99.6, 100.4, 99.7, 100.05, 99.95, 100.6, 99.4});
  auto slow = baseline_file(dir, "slow.json", {90, 91, 89, 90.5, 89.5, 90, 90.2, 89.8});
  auto noisy = baseline_file(dir, "noisy.json", {50, 150, 70, 130});
  auto r = testing::run_dyno("compare " + base + " " + same);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("**PASS**"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + slow);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("**FAIL**"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+11.1"), std::string::npos) << r.output;  // 100 -> 90 samples/s = +11.1% time per sample
  r = testing::run_dyno("compare " + base + " " + noisy);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("**INCONCLUSIVE**"), std::string::npos) << r.output;
  r = testing::run_dyno("compare --strict " + base + " " + noisy);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = testing::run_dyno("compare --threshold 15% " + base + " " + slow);
  EXPECT_EQ(r.exit_code, 0) << r.output;  // a 10% shift is below a 15% threshold
  auto crawl = baseline_file(dir, "crawl.json", {1e-6, 1.01e-6, 0.99e-6, 1.005e-6, 0.995e-6, 1e-6, 1.002e-6, 0.998e-6});
  r = testing::run_dyno("compare " + base + " " + crawl);  // 1e8 times slower: a figure in a few characters, not 13 digits
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("e+10% |"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Two run reports: their figures are windows of one process each, and the summary says what that
// verdict can and cannot tell.
TEST(CompareCommand, RunReportsAreComparedWindowByWindowAndSaySo) {
  auto dir = testing::fresh_dir("compare_runs");
  for (const char* name : {"a.json", "b.json"}) {
    auto r = testing::run_dyno("train -w fashion-mlp --no-progress --set size=tiny threads=1 max_steps=60 warmup_steps=5 log_every_steps=5 -o " +
                               (dir / name).string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  auto r = testing::run_dyno("compare " + (dir / "a.json").string() + " " + (dir / "b.json").string());
  EXPECT_LE(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("| samples_per_second |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the windows of one process"), std::string::npos) << r.output;
  // A run's windows against runs' own figures (a baseline's 90th percentiles) measure different things.
  r = testing::run_dyno("compare " + baseline_file(dir, "base.json", {100, 101, 99, 100}) + " " + (dir / "b.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("of kind \"window_p90\" and '" + (dir / "b.json").string() + "' of kind \"window\": they measure different things"),
            std::string::npos) << r.output;
  // A run that ended within its warm-up has no window to compare: the error names it and the fix.
  r = testing::run_dyno("train -w fashion-mlp --no-progress --set size=tiny threads=1 max_steps=8 warmup_steps=10 -o " + (dir / "short.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_dyno("compare " + (dir / "a.json").string() + " " + (dir / "short.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("samples_per_second: the candidate '" + (dir / "short.json").string() +
                          "' holds 0 figures; a comparison needs at least 2 on each side (a run report's windows: raise max_steps above warmup_steps"),
            std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Two configs' figures are compared, saying in which settings they differ; two workloads' are not
// one measurement's and are refused.
TEST(CompareCommand, NamesTheSettingsThatDifferAndRefusesTwoWorkloads) {
  auto dir = testing::fresh_dir("compare_configs");
  const auto base = baseline_file(dir, "base.json", {100, 101, 99, 100});
  auto with_config = [&](const std::string& name, const nlohmann::json& changes) {
    nlohmann::json j = nlohmann::json::parse(read_file(base));
    j["config"].update(changes);
    write_file_atomically((dir / name).string(), j.dump());
    return (dir / name).string();
  };
  auto r = testing::run_dyno("compare " + base + " " + with_config("threads.json", {{"threads", 2}}));
  EXPECT_NE(r.output.find("| **INCONCLUSIVE** |"), std::string::npos) << r.output;  // (4 figures a side)
  EXPECT_NE(r.output.find("> settings differ: threads: 1 vs 2"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("settings differ: size"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + with_config("cnn.json", {{"workload", "fashion-cnn"}}));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("[compare] the workloads differ (\"fashion-mlp\" vs \"fashion-cnn\")"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// A check whose candidate failed is a FAIL as a candidate, and no baseline; a NOT_COMPARABLE one
// measured nothing.
TEST(CompareCommand, ACheckThatFailedOrWasNotComparableIsReadAsSuch) {
  auto dir = testing::fresh_dir("compare_failed_check");
  const auto base = baseline_file(dir, "base.json", {100, 101, 99, 100});
  const auto failed = (dir / "failed.json").string(), not_comparable = (dir / "nc.json").string();
  write_file_atomically(failed, R"({"schema_version": "1.0", "kind": "check", "verdict": "FAIL", "failure": "measurement run 0 failed: signal 6"})");
  write_file_atomically(not_comparable, R"({"schema_version": "1.0", "kind": "check", "verdict": "NOT_COMPARABLE", "differences": []})");
  auto r = testing::run_dyno("compare " + base + " " + failed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("samples_per_second: errored in the candidate (the check's candidate failed: measurement run 0 failed: signal 6): FAIL"),
            std::string::npos) << r.output;
  r = testing::run_dyno("compare " + failed + " " + base);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("holds no figures to compare against: the check's candidate failed"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + not_comparable);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a NOT_COMPARABLE check: it measured nothing"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(CompareCommand, MalformedAndMismatchedInputs) {
  auto dir = testing::fresh_dir("compare_bad");
  auto base = baseline_file(dir, "base.json", {100, 101, 99});
  write_file_atomically((dir / "broken.json").string(), "{\"schema_version\": ");
  auto r = testing::run_dyno("compare " + base + " " + (dir / "broken.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("is not valid JSON"), std::string::npos) << r.output;
  write_file_atomically((dir / "future.json").string(), R"({"schema_version": "2.0", "kind": "baseline", "runs": [1, 2]})");
  r = testing::run_dyno("compare " + base + " " + (dir / "future.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("major version 2"), std::string::npos) << r.output;
  write_file_atomically((dir / "gbench.json").string(),
                        R"({"benchmarks": [{"name": "BM_x", "run_name": "BM_x", "run_type": "iteration", "real_time": 1.0}]})");
  r = testing::run_dyno("compare " + base + " " + (dir / "gbench.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("share no metric"), std::string::npos) << r.output;
  r = testing::run_dyno("compare --threshold lots " + base + " " + base);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--threshold: 'lots' is not a fraction"), std::string::npos) << r.output;
  // Figures in another unit, or that are no throughput, are not compared.
  auto edit = [&](const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = nlohmann::json::parse(read_file(base));
    change(j);
    write_file_atomically((dir / name).string(), j.dump());
    return (dir / name).string();
  };
  r = testing::run_dyno("compare " + base + " " + edit("ms.json", [](nlohmann::json& j) { j["unit"] = "ms"; }));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unit 'ms' is not a throughput"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + edit("tokens.json", [](nlohmann::json& j) { j["unit"] = "tokens/s"; }));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("is in samples/s in '" + base + "' and in tokens/s in"), std::string::npos) << r.output;
  r = testing::run_dyno("compare " + base + " " + edit("negative.json", [](nlohmann::json& j) { j["runs"] = {-1, -2, -3}; }));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("field 'runs' is [-1,-2,-3]; expected an array of 1 or more throughputs"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(CompareCommand, WarnsWhenEnvironmentsDiffer) {
  auto dir = testing::fresh_dir("compare_env");
  auto base = baseline_file(dir, "base.json", {100, 101, 99, 100}, "baseline", "window_p90", {{"cores", 2}, {"device", "cpu"}});
  auto other = (dir / "other.json").string();
  write_file_atomically(other, R"({"schema_version": "1.0", "kind": "baseline", "figure": "window_p90", "runs": [100, 101, 99, 100], "environment": {"cores": 16, "device": "cpu"}})");
  auto r = testing::run_dyno("compare " + base + " " + other);
  EXPECT_NE(r.output.find("warning: environments differ: cores: 2 vs 16"), std::string::npos) << r.output;
  // Per-run figures of two kinds (an older baseline's medians) measure different things: refused.
  auto medians = (dir / "medians.json").string();
  write_file_atomically(medians, R"({"schema_version": "1.0", "kind": "baseline", "runs": [100, 101, 99, 100], "environment": {"cores": 2, "device": "cpu"}})");
  r = testing::run_dyno("compare " + base + " " + medians);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("of kind \"window_p90\" and '" + medians + "' of kind \"median\""), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(CheckCommand, ExitCodesAgainstFixedBaselines) {
  auto dir = testing::fresh_dir("check");
  // A baseline no machine can reach: the re-measurement is a large, certain regression.
  auto unreachable = baseline_file(dir, "unreachable.json", {1e12, 1.01e12, 0.99e12, 1e12, 1e12});
  auto r = testing::run_dyno("check --baseline " + unreachable + " --runs 3 --out " + (dir / "result.json").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("**FAIL**"), std::string::npos) << r.output;
  auto result = nlohmann::json::parse(read_file((dir / "result.json").string()));
  EXPECT_EQ(result["verdict"], "FAIL");
  // What compare and the history need to tell it from another machine's or another figure's.
  EXPECT_EQ(result["figure"], "window_p90");
  EXPECT_EQ(result["environment"]["device"], "cpu");
  EXPECT_TRUE(result["environment"].contains("cpu_model")) << result["environment"].dump();
  // The baseline's environment names only the device and the CPU: every other field went uncompared, and says so.
  EXPECT_NE(r.output.find("not compared, absent from the baseline's environment (so assumed equal): cores, memory_gib"), std::string::npos) << r.output;
  EXPECT_EQ(result["not_compared"].at(0), "cores");
  // The re-run may look up to 5 times (3 runs, then 2 more at a time up to 11): each look's FAIL
  // needs a p below --alpha's share, so that alpha bounds the false alarms over all of them.
  EXPECT_EQ(result["looks"], 5);
  EXPECT_LT(result["alpha_per_look"].get<double>(), result["alpha"].get<double>());
  EXPECT_GT(result["alpha_per_look"].get<double>(), result["alpha"].get<double>() / 5);
  EXPECT_LT(result["p_value"].get<double>(), result["alpha_per_look"].get<double>());
  EXPECT_NE(r.output.find("up to 5 looks, so a FAIL needs p < "), std::string::npos) << r.output;
  // ... and each look's PASS a wider interval, so that passing a regression stays as rare as one 99% interval makes it.
  EXPECT_GT(result["confidence_per_look"].get<double>(), 0.99);
  EXPECT_LT(result["confidence_per_look"].get<double>(), 1 - 0.01 / 5);
  EXPECT_NE(r.output.find("and a PASS a 99."), std::string::npos) << r.output;
  // A baseline every machine beats: pass.
  auto trivial = baseline_file(dir, "trivial.json", {1, 1.01, 0.99, 1, 1});
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --set threads=1");  // (a --set the baseline's config has)
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // ... unless the candidate cannot train it: a crash fails the gate.
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --candidate-set inject_fault=crash --candidate-set inject_fault_at_step=5 --out " +
                        (dir / "result.json").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("**FAIL**: the candidate measurement run 0 of "), std::string::npos) << r.output;
  result = nlohmann::json::parse(read_file((dir / "result.json").string()));
  EXPECT_EQ(result["verdict"], "FAIL");
  EXPECT_NE(result["failure"].get<std::string>().find("signal 11"), std::string::npos) << result.dump();
  // A --set the stored runs were not measured with would change the candidate only: refused.
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --set batch_size=4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set batch_size=4: the baseline's runs in '" + trivial + "' were measured with batch_size=64"), std::string::npos) << r.output;
  // ... judged as the runs train: the recipe's own learning rate named by hand (the baseline stores
  // 0, "the recipe's": fashion-mlp's 0.001 at its batch) is no change; another one is refused.
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --set lr=0.001");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --set lr=0.003");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set lr=0.003: the baseline's runs in '" + trivial + "' were measured with lr=0.0 (the recipe's, 0.001)"), std::string::npos)
      << r.output;
  // ... and the refusal names the knob that changed what trained, not one naming the recipe's own value.
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --set lr=0.001 --set batch_size=4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set batch_size=4: the baseline's runs"), std::string::npos) << r.output;
  // A baseline too spread to judge: inconclusive even after the automatic re-run; --strict fails.
  auto spread = baseline_file(dir, "spread.json", {1, 1e12, 1, 1e12});
  r = testing::run_dyno("check --baseline " + spread + " --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("after an automatic re-run of 4 blocks"), std::string::npos) << r.output;  // capped at twice the first round
  r = testing::run_dyno("check --strict --no-rerun --baseline " + spread + " --runs 3");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // A significance level outside (0, 0.5] is bad input, named with what is valid.
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --alpha 1.5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--alpha"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  // Not a baseline.
  auto wrong = baseline_file(dir, "wrong.json", {1, 2}, "check");
  r = testing::run_dyno("check --baseline " + wrong);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a dyno baseline"), std::string::npos) << r.output;
  // Per-run figures of another definition (an older dyno's medians) are not compared with today's.
  auto other_figure = baseline_file(dir, "median.json", {1, 1, 1}, "baseline", "window_median");
  r = testing::run_dyno("check --baseline " + other_figure + " --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("holds per-run figures of kind \"window_median\", this dyno measures window_p90"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// The base revision of a same-machine check may predate knobs this one added: it is given the
// baseline's own keys and the --set ones, never a complete serialisation of this revision's config.
// A measurement run saves no training state, even where the config names the baseline's own file;
// a data-parallel config is refused before any run (check measures one process).
TEST(CheckCommand, MeasurementRunsWriteNothingOfTheConfigsAndRunOneProcess) {
  auto dir = testing::fresh_dir("check_outputs");
  auto trivial = baseline_file(dir, "trivial.json", {1, 1.01, 0.99, 1, 1});
  const std::string before = read_file(trivial);
  auto r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --candidate-set save_state=" + trivial);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_file(trivial), before);
  r = testing::run_dyno("check --baseline " + trivial + " --runs 3 --candidate-set ddp.world_size=2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("ddp.world_size (in '" + trivial + "' or set) is 2: check measures one process a run"), std::string::npos) << r.output;
  r = testing::run_dyno("check --record " + (dir / "two.json").string() + " -w fashion-mlp --set ddp.world_size=2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set ddp.world_size is 2"), std::string::npos) << r.output;
}

TEST(CheckCommand, ABaseRevisionIsGivenOnlyTheKnobsTheBaselineAndTheSettingsName) {
  auto dir = testing::fresh_dir("check_older_base");
  const auto baseline = baseline_file(dir, "baseline.json", {1, 1.01, 0.99});
  const auto older = (dir / "older-dyno").string();  // refuses a knob it does not know, as an older dyno would
  write_file_atomically(older, std::string("#!/bin/sh\nif grep -q data_delay_ms \"$3\"; then echo \"dyno: [config] unknown knob 'data_delay_ms'\" >&2; exit 2; fi\nexec ") +
                                   DYNO_BINARY + " \"$@\"\n");
  std::filesystem::permissions(older, std::filesystem::perms::owner_all);
  const auto out = (dir / "result.json").string();
  const auto r = testing::run_dyno("check --baseline " + baseline + " --against " + older + " --runs 3 --no-rerun --set batch_size=32 --out " + out);
  EXPECT_EQ(r.output.find("failed"), std::string::npos) << r.output;
  const auto result = nlohmann::json::parse(read_file(out));
  EXPECT_TRUE(result["verdict"] == "PASS" || result["verdict"] == "FAIL" || result["verdict"] == "INCONCLUSIVE") << result.dump();
  EXPECT_EQ(result["config"]["batch_size"], 32);
  EXPECT_FALSE(result["config"].contains("data_delay_ms"));
  testing::remove_tree(dir);
}

// Against another build, a pair is by default a duet: both builds at once, each on its own CPUs,
// the sides swapping CPUs every pair; ABBA (one run at a time) on request or when the machine has
// too few CPUs for two runs of the config's threads.
TEST(CheckCommand, SameMachinePairsAreDuetsOnTheirOwnCpusSwappedEveryPair) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  if (CPU_COUNT(&mine) < 2) GTEST_SKIP() << "a duet needs two CPUs";
  auto dir = testing::fresh_dir("check_duet");
  const auto baseline = baseline_file(dir, "baseline.json", {1, 1.01, 0.99});  // threads 1
  const auto cpus_log = (dir / "base-cpus.txt").string(), base = (dir / "base-dyno").string();
  write_file_atomically(base, "#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status >> " + cpus_log + "\nexec " + DYNO_BINARY + " \"$@\"\n");
  std::filesystem::permissions(base, std::filesystem::perms::owner_all);
  const auto out = (dir / "result.json").string();
  auto r = testing::run_dyno("check --baseline " + baseline + " --against " + base + " --runs 3 --no-rerun --out " + out);
  auto result = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(result["pairing"], "duet") << r.output;
  EXPECT_NE(r.output.find("(duet: base and candidate at once on CPUs "), std::string::npos) << r.output;
  EXPECT_EQ(result["baseline_runs"].size(), 4u);  // two blocks of two pairs
  std::istringstream lines(read_file(cpus_log));
  std::vector<std::string> cpus;
  for (std::string line; std::getline(lines, line);) cpus.push_back(line);
  ASSERT_EQ(cpus.size(), 4u) << read_file(cpus_log);
  EXPECT_NE(cpus[0], cpus[1]);
  EXPECT_EQ(cpus[0], cpus[2]);
  EXPECT_EQ(cpus[1], cpus[3]);

  r = testing::run_dyno("check --baseline " + baseline + " --against " + DYNO_BINARY + " --pairing abba --runs 3 --no-rerun --out " + out);
  result = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(result["pairing"], "abba") << r.output;
  EXPECT_NE(r.output.find("(ABBA, one run at a time)"), std::string::npos) << r.output;

  r = testing::run_dyno("check --baseline " + baseline + " --against " + DYNO_BINARY + " --pairing duet --set threads=0 --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--pairing duet: each side needs its own"), std::string::npos) << r.output;
  r = testing::run_dyno("check --baseline " + baseline + " --against " + DYNO_BINARY + " --pairing sideways --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--pairing: 'sideways' is not one of auto, duet, abba"), std::string::npos) << r.output;
  r = testing::run_dyno("check --baseline " + baseline + " --pairing duet --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("it needs --against"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// A stored figure is judged only on the machine fingerprint that recorded it: elsewhere the
// verdict is NOT COMPARABLE (exit 4), before anything is measured; a folder of baselines, one per
// fingerprint, yields the one recorded here.
TEST(CheckCommand, ABaselineFromAnotherMachineIsNotComparable) {
  auto dir = testing::fresh_dir("check_fingerprint");
  auto elsewhere = baseline_file(dir, "elsewhere.json", {1e12, 1e12, 1e12}, "baseline", "window_p90",
                                 {{"device", "cpu"}, {"cpu_model", "A CPU no machine has"}, {"cores", 2}});
  auto r = testing::run_dyno("check --baseline " + elsewhere + " --runs 3 --out " + (dir / "result.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("**NOT COMPARABLE**"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("- cpu_model: \"A CPU no machine has\" recorded, \""), std::string::npos) << r.output;
  auto result = nlohmann::json::parse(read_file((dir / "result.json").string()));
  EXPECT_EQ(result["verdict"], "NOT_COMPARABLE");
  EXPECT_EQ(result.value("runs", nlohmann::json::array()).size(), 0u);  // nothing was measured

  auto side_by_side = dir / "baselines";
  std::filesystem::create_directories(side_by_side);
  baseline_file(side_by_side, "a-elsewhere.json", {1e12, 1e12, 1e12}, "baseline", "window_p90", {{"device", "cpu"}, {"cpu_model", "A CPU no machine has"}});
  baseline_file(side_by_side, "b-here.json", {1, 1.01, 0.99, 1, 1});
  r = testing::run_dyno("check --baseline " + side_by_side.string() + " --runs 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("b-here.json"), std::string::npos) << r.output;

  // A record that does not name its machine could be any machine's: not comparable either.
  const auto anywhere = baseline_file(dir, "anywhere.json", {1e12, 1e12, 1e12}, "baseline", "window_p90", {{"device", "cpu"}, {"cores", 2}});
  r = testing::run_dyno("check --baseline " + anywhere + " --runs 3");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("- cpu_model: not recorded, \"" + cpu_model() + "\" here"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("- device_name: not recorded, "), std::string::npos) << r.output;

  // Without the machine it was measured on, no fingerprint could tell another machine's figures.
  const auto nowhere = baseline_file(dir, "nowhere.json", {1, 1, 1}, "baseline", "window_p90", nlohmann::json::object());
  r = testing::run_dyno("check --baseline " + nowhere + " --runs 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nowhere.json' has no 'environment': its runs cannot be compared"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// --against a program that is not dyno: its runs write no report, and the error says so.
TEST(CheckCommand, AnAgainstThatIsNotDynoIsNamed) {
  auto dir = testing::fresh_dir("check_not_dyno");
  const auto baseline = baseline_file(dir, "b.json", {100, 101, 99});
  auto r = testing::run_dyno("check --baseline " + baseline + " --against /bin/true --pairing abba --runs 3 --no-rerun");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("measurement run 0 of '/bin/true' exited 0 without writing its report; is it a dyno binary?"), std::string::npos) << r.output;
  // One that fails saying nothing: its exit status is the reason.
  r = testing::run_dyno("check --baseline " + baseline + " --against /bin/false --pairing abba --runs 3 --no-rerun");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("measurement run 0 of '/bin/false' failed: exit status 1"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// --record into a folder names the baseline by its fingerprint, which it stores.
TEST(CheckCommand, RecordsIntoAFolderByFingerprint) {
  auto dir = testing::fresh_dir("check_record");
  const std::string folder = (dir / "baselines").string() + "/";
  auto r = testing::run_dyno("check --record " + folder + " -w fashion-mlp --set size=tiny max_steps=8 warmup_steps=2 log_every_steps=2 threads=1 --runs 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(folder)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  auto baseline = nlohmann::json::parse(read_file(files[0].string()));
  EXPECT_EQ(files[0].filename().string(), baseline["fingerprint_id"].get<std::string>() + ".json");
  for (const char* key : {"cpu_model", "cores", "memory_gib", "device", "libtorch_version", "threads"})
    EXPECT_TRUE(baseline["fingerprint"].contains(key)) << key;
  EXPECT_EQ(baseline["fingerprint"]["threads"], 1);
  testing::remove_tree(dir);
}

// A baseline and a check result carry the workload's unit: tokens/s for text.
TEST(CheckCommand, FiguresCarryTheWorkloadsUnit) {
  auto dir = testing::fresh_dir("check_unit");
  const std::string baseline = (dir / "text.json").string(), result = (dir / "check.json").string();
  auto r = testing::run_dyno("check --record " + baseline +
                             " -w text-transformer --set size=tiny max_steps=8 warmup_steps=2 log_every_steps=2 threads=1 --runs 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(baseline))["unit"], "tokens/s");
  // (A hand-written baseline may nest its ddp knobs; a setting of one is then that knob, given once.)
  nlohmann::json nested = nlohmann::json::parse(read_file(baseline));
  for (const char* knob : {"world_size", "bucket_cap_mb"}) {
    nested["config"]["ddp"][knob] = nested["config"]["ddp." + std::string(knob)];
    nested["config"].erase("ddp." + std::string(knob));
  }
  write_file_atomically(baseline, nested.dump());
  r = testing::run_dyno("check --baseline " + baseline + " --candidate-set ddp.bucket_cap_mb=1 --runs 3 --no-rerun --out " + result);
  ASSERT_TRUE(std::filesystem::exists(result)) << r.output;  // whatever the verdict
  EXPECT_EQ(nlohmann::json::parse(read_file(result))["unit"], "tokens/s");
  testing::remove_tree(dir);
}

// The measurement runs' files live in a scratch folder under TMPDIR that goes with the command:
// after a recording, after bad input, and after Ctrl-C in the middle of a run, which records nothing.
TEST(CheckCommand, LeavesNoScratchFolderBehind) {
  auto dir = testing::fresh_dir("check_scratch");
  const auto tmp = dir / "tmp";
  std::filesystem::create_directories(tmp);
  const std::string tmpdir = "TMPDIR=" + tmp.string();
  const std::string record = "check --record " + (dir / "baseline.json").string() + " -w fashion-mlp --runs 3 --set size=tiny threads=1 ";
  auto r = testing::run_dyno(record + "max_steps=8 warmup_steps=2 log_every_steps=2", tmpdir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(tmp));

  r = testing::run_dyno("check --baseline " + (dir / "baseline.json").string() + " --pairing abba", tmpdir);  // refused once the folder exists
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--pairing abba: pairs are runs of two builds"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::is_empty(tmp));

  // Interrupted once the first run's config is written (Ctrl-C, or a closed terminal's SIGHUP): its
  // process is stopped, nothing is recorded.
  for (const char* signal : {"INT", "HUP"}) {
    const std::string log = (dir / "interrupted.txt").string(), interrupted = (dir / "interrupted.json").string();
    const std::string script = tmpdir + " " + DYNO_BINARY + " check --record " + interrupted +
                               " -w fashion-mlp --runs 3 --set size=tiny threads=1 max_steps=1000000 > " + log + " 2>&1 & pid=$!; " +
                               "for i in $(seq 600); do ls " + tmp.string() + "/dyno-check-*/run-0.config.json > /dev/null 2>&1 && break; sleep 0.05; done; " +
                               "kill -" + signal + " $pid; wait $pid";
    EXPECT_EQ(WEXITSTATUS(std::system(("bash -c '" + script + "'").c_str())), 130) << signal << read_file(log);
    EXPECT_NE(read_file(log).find("[check] interrupted: nothing was recorded or judged"), std::string::npos) << read_file(log);
    EXPECT_FALSE(std::filesystem::exists(interrupted));
    EXPECT_TRUE(std::filesystem::is_empty(tmp));
  }
  testing::remove_tree(dir);
}

}  // namespace
}  // namespace dyno
