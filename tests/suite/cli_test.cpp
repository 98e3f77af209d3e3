// The `dyno` CLI as a user runs it: real process, real files, exit codes and error texts.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fixture_files.h"
#include "dyno/reports/atomic_file.h"
#include "test_support.h"

namespace dyno {
namespace {

TEST(Cli, ReportConfigIsLoadableAgain) {
  auto dir = testing::fresh_dir("cli_roundtrip");
  const auto first = (dir / "first.json").string(), second = (dir / "second.json").string();
  auto r1 = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=3 batch_size=32 lr_scaling=sqrt --no-progress --out " + first);
  ASSERT_EQ(r1.exit_code, 0) << r1.output;
  auto report = nlohmann::json::parse(read_file(first));
  EXPECT_EQ(report["schema_version"], "1.6");
  for (const char* key : {"samples_per_second", "time_to_target_s", "final_metric", "peak_memory_bytes"})
    EXPECT_TRUE(report["summary"].contains(key)) << key;
  for (const char* key : {"dyno_revision", "libtorch_version", "cuda_version", "cudnn_version", "device_name", "cpu_model", "cores", "threads", "host"})
    EXPECT_TRUE(report["environment"].contains(key)) << key;
  EXPECT_EQ(report["environment"]["libtorch_version"].get<std::string>().substr(0, 2), "2.");
  // --config accepts the report itself; the resolved config (lr already scaled) round-trips.
  auto r2 = testing::run_dyno("train --config " + first + " --no-progress --out " + second);
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(second))["config"], report["config"]);
  testing::remove_tree(dir);
}

// dyno train re-executes itself with tcmalloc preloaded (the engine refuses the value otherwise);
// the report records the setting, and a broken preload is a clear error, not a crash.
TEST(Cli, TrainPreloadsTcmallocForItsRun) {
  auto dir = testing::fresh_dir("cli_tcmalloc");
  const auto out = (dir / "run.json").string();
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=3 host_allocator=tcmalloc --no-progress --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file(out))["config"]["host_allocator"], "tcmalloc");
  r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=3 host_allocator=tcmalloc --no-progress --out " + out,
                        "DYNO_HOST_ALLOCATOR_PRELOADED=tcmalloc");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("host_allocator: tcmalloc is not loaded in this process"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// hugepages (the default) puts the process's heap in transparent huge pages where the kernel gives
// them only on request (THP "madvise"): dyno train re-executes itself with glibc's tunable set.
TEST(Cli, TrainRunsTheHugepagesAllocatorInHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  if (mode.find("[madvise]") == std::string::npos) GTEST_SKIP() << "THP mode '" << mode << "': huge pages are not on request here";
  auto dir = testing::fresh_dir("cli_hugepages");
  const auto out = (dir / "run.json").string();
  for (const char* allocator : {"hugepages", "retain"}) {
    auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=3 --no-progress --out " + out + " --set host_allocator=" + allocator);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto summary = nlohmann::json::parse(read_file(out))["summary"];
    if (std::string(allocator) == "hugepages") EXPECT_GT(summary["host_huge_page_bytes"].get<int64_t>(), 0) << summary;
    else EXPECT_EQ(summary["host_huge_page_bytes"], 0) << summary;
  }
  testing::remove_tree(dir);
}

// `dyno train --model --data` trains a user's scripted model without any C++; its report's config
// names the files (absolute), so that --config runs it again from anywhere.
TEST(Cli, TrainsAScriptedModelFromPythonFiles) {
  auto dir = testing::fresh_dir("cli_scripted");
  const auto out = (dir / "run.json").string();
  auto r = testing::run_dyno("train --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") +
                             " --set size=tiny max_steps=4 --no-progress --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto config = nlohmann::json::parse(read_file(out))["config"];
  EXPECT_EQ(config["workload"], "torchscript");
  EXPECT_EQ(config["model_file"], testing::fixture("model.pt"));
  r = testing::run_dyno("train --config " + out + " --no-progress --out " + (dir / "again.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Files named relative to where dyno runs, with --set, are stored as absolute paths too.
  const std::string fixtures = std::filesystem::path(testing::fixture("model.pt")).parent_path().string();
  r = testing::run_dyno("train -w torchscript --set model_file=model.pt data_file=./data.pt size=tiny max_steps=4 --no-progress --out " + out,
                        "cd " + fixtures + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  config = nlohmann::json::parse(read_file(out))["config"];
  EXPECT_EQ(config["model_file"], testing::fixture("model.pt"));
  EXPECT_EQ(config["data_file"], testing::fixture("data.pt"));
  testing::remove_tree(dir);
}

// A training state to a device (/dev/null, here through a descriptor's link, where no temporary
// file can be made beside it) is written in place, as a report is.
TEST(Cli, ASaveStateToADeviceIsWrittenInPlace) {
  auto dir = testing::fresh_dir("cli_state_device");
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=2 threads=1 save_state=/proc/self/fd/3 --no-progress --out " +
                             (dir / "r.json").string() + " 3>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  testing::remove_tree(dir);
}

// Each bad file a user may bring is exit status 2 and a message naming it and the fix.
TEST(Cli, BadModelAndDataFilesExitWithStatusTwo) {
  const std::string model = " --model " + testing::fixture("model.pt"), data = " --data " + testing::fixture("data.pt");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {model + " --data /nonexistent/data.pt", "[data] '/nonexistent/data.pt' does not exist"},
      {model + " --data " + testing::fixture("legacy.pt"), "legacy.pt' is not a torch.save file (zip format)"},
      {model + " --data " + testing::fixture("no_targets.pt"), "no_targets.pt' has no key 'targets' (it has 'inputs', 'labels')"},
      {" --model " + testing::fixture("no_grad.pt") + data, "no_grad.pt' has no parameter that requires grad"},
      {" --model " + testing::fixture("frozen.pt") + data, "frozen.pt' was frozen (torch.jit.freeze"},
      {" --model /nonexistent/model.pt" + data, "[model] '/nonexistent/model.pt' does not exist"},
      {model, "[config] data_file: empty; workload=torchscript needs --data data.pt"},
      {data, "--data, --eval-data and --loss go with --model"},
      {model + " --data " + testing::fixture("flat.pt"),
       "flat.pt' (inputs [58, 784], targets [58]) does not fit the model '" + testing::fixture("model.pt") + "': its forward on 3 examples failed: "},
      {model + " --data " + testing::fixture("class_ids.pt"), "class ids range from 10 to 19; the model has 10 outputs, so they must lie in 0..9"},
      {" --model " + testing::fixture("custom_op.pt") + data, "custom_op.pt' cannot be loaded by this LibTorch (an operator it uses"},
      {model + data + " --eval-data " + testing::fixture("float_targets.pt"),
       "float_targets.pt' (inputs [64, 1, 28, 28], targets [64]): the targets are floating point; cross-entropy needs integer class ids from 0 "
       "to 9 (the model's 10 outputs), or use --loss mse for regression"},
      {model + data + " --loss mse", "--loss mse compares each example's 10 outputs (shape [3, 10] for 3) with as many target values; the targets have 1"},
      {" --model " + testing::fixture("grid_out.pt") + " --data " + testing::fixture("grid_targets.pt") + " --loss mse",
       "--loss mse compares outputs and targets value for value: an example's outputs have shape [2, 3], its targets [3, 2]"},
      {" --model " + testing::fixture("transposed.pt") + data, "transposed.pt' returns [2, 3] for 3 examples"},
  };
  for (const auto& [args, message] : cases) {
    auto r = testing::run_dyno("train" + args + " --set size=tiny max_steps=2 --no-progress --out /tmp/dyno_never_written.json");
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  // Data saved with requires_grad trains as data, with loader workers too.
  auto g = testing::run_dyno("train" + model + " --data " + testing::fixture("requires_grad.pt") +
                             " --set size=tiny max_steps=30 num_workers=2 --no-progress --out /tmp/dyno_requires_grad.json");
  EXPECT_EQ(g.exit_code, 0) << g.output;
  std::remove("/tmp/dyno_requires_grad.json");
  // Targets cross-entropy ignores (-100) fit: they are not class ids.
  auto r = testing::run_dyno("train" + model + " --data " + testing::fixture("ignored.pt") + " --set size=tiny max_steps=2 --no-progress --out /tmp/dyno_ignored.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::remove("/tmp/dyno_ignored.json");
}

// A training state that does not fit on the disk (here a file size limit) ends the run as a full
// disk does everywhere in dyno: exit 75, the file named, no temporary file left behind.
TEST(Cli, ASaveStateOnAFullDiskIsOutOfSpace) {
  auto dir = testing::fresh_dir("cli_state_full");
  const std::string state = (dir / "s.pt").string();
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=2 threads=1 save_state=" + state + " --no-progress --out " +
                                 (dir / "r.json").string(),
                             "/usr/bin/prlimit --fsize=200000");
  EXPECT_EQ(r.exit_code, 75) << r.output;
  EXPECT_NE(r.output.find("cannot write '" + state + ".tmp."), std::string::npos) << r.output;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  testing::remove_tree(dir);
}

// An evaluation leaves targets of -100 out, as the training loss does: the same model scores on
// data with them as on the data without those examples.
TEST(Cli, AnEvaluationLeavesIgnoredTargetsOut) {
  auto dir = testing::fresh_dir("cli_ignored_eval");
  std::vector<double> accuracy;
  for (const char* eval : {"ignored.pt", "ignored_left_out.pt"}) {
    const std::string out = (dir / (std::string(eval) + ".json")).string();
    auto r = testing::run_dyno("train --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") + " --eval-data " +
                               testing::fixture(eval) + " --set max_steps=3 threads=1 --no-progress --out " + out);  // whole files: size=tiny would keep other examples of each
    ASSERT_EQ(r.exit_code, 0) << r.output;
    accuracy.push_back(nlohmann::json::parse(read_file(out))["summary"]["final_metric"]["value"].get<double>());
  }
  EXPECT_GT(accuracy[1], 0.0);
  EXPECT_DOUBLE_EQ(accuracy[0], accuracy[1]);
  testing::remove_tree(dir);
}

// A training state that does not fit the run resuming it is refused, naming the file and the misfit.
TEST(Cli, AStateThatDoesNotFitTheRunIsRefused) {
  auto dir = testing::fresh_dir("cli_state_misfit");
  const std::string data = " --data " + testing::fixture("data.pt"), state = (dir / "state.pt").string();
  const std::string run = " --set size=tiny max_steps=2 --no-progress --out " + (dir / "r.json").string();
  auto r = testing::run_dyno("train --model " + testing::fixture("model.pt") + data + run + " --set save_state=" + state);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = testing::run_dyno("train --model " + testing::fixture("model_wide.pt") + data + run + " --set resume_state=" + state);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("[config] resume_state: '" + state + "' holds "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" of shape [8, 1, 3, 3], this run's model has [12, 1, 3, 3] (another model size?)"), std::string::npos) << r.output;
  r = testing::run_dyno("train --model " + testing::fixture("model.pt") + data + run + " --set resume_state=" + testing::fixture("model.pt"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("model.pt' is not a dyno training state (it has no workload)"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

TEST(Cli, BadInputExitsWithStatusTwoAndAClearMessage) {
  auto r = testing::run_dyno("train -w fashion-mlp --set amp=fp8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("[config] amp: 'fp8' is not one of off, fp16, bf16"), std::string::npos) << r.output;
  r = testing::run_dyno("train -w no-such-workload");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("is not one of fashion-cnn, fashion-mlp"), std::string::npos) << r.output;
  r = testing::run_dyno("train --config /nonexistent/config.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/config.json"), std::string::npos) << r.output;
  r = testing::run_dyno("train --frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  r = testing::run_dyno("tune -w fashion-mlp --max-ranks 0 --out /nonexistent/tune");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--max-ranks"), std::string::npos) << r.output;
}

// A value an error echoes reaches the terminal with its control characters written out: an escape
// sequence in a --set value neither clears the screen nor hides the rest of the line.
TEST(Cli, AnErrorWritesOutTheControlCharactersOfAValueItEchoes) {
  const auto r = testing::run_dyno("train -w fashion-mlp --set \"amp=$(printf '\\033[2J\\033[8m')fp8\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("amp: '\\x1B[2J\\x1B[8mfp8' is not one of off, fp16, bf16"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1B'), std::string::npos);
  for (const std::string args : {"\"tr$(printf '\\033[2J')ain\"", "train \"--fr$(printf '\\033[2J')obnicate\""}) {  // a subcommand, an option
    const auto unknown = testing::run_dyno(args);
    EXPECT_EQ(unknown.exit_code, 2) << args;
    EXPECT_NE(unknown.output.find("\\x1B[2J"), std::string::npos) << unknown.output;
    EXPECT_EQ(unknown.output.find('\x1B'), std::string::npos) << args;
  }
}

// A numeric option outside its range is refused before anything runs, naming the option, the
// value and the range; NaN too.
TEST(Cli, NumericOptionsRefuseValuesOutsideTheirRange) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compare a.json b.json --alpha nan", "--alpha: 'nan' is not a number from 1e-09 to 0.5"},
      {"check --record /tmp/dyno_never_written.json --runs 1", "--runs: '1' is not a whole number from 3 to 1000"},
      {"tune -w fashion-mlp -o /tmp/dyno_never_written --trials -1", "--trials: '-1' is not a whole number from 1 to 1000000"},
      {"tune -w fashion-mlp -o /tmp/dyno_never_written --seed -1", "--seed: '-1' is not a whole number from 0 to 9223372036854775807"},
      {"tune -w fashion-mlp -o /tmp/dyno_never_written --measure-steps 0", "--measure-steps: '0' is not a whole number from 1 to 10000000"},
      {"tune -w fashion-mlp -o /tmp/dyno_never_written --trial-timeout 0", "--trial-timeout: '0' is not a number from 1 to 1e+07"},
      {"tune -w fashion-mlp -o /tmp/dyno_never_written --trial-cap 400", "--trial-cap 400.0 is not below --trial-timeout 300.0"},
      {"launch --master-port 70000 -- true", "--master-port: '70000' is not a whole number from 0 to 65535"},
      {"train --profile-steps 0", "--profile-steps: '0' is not a whole number from 1 to 100000"},
  };
  for (const auto& [args, message] : cases) {
    auto r = testing::run_dyno(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/dyno_never_written"));
}

// Options that cannot mean what they say are refused before anything runs.
TEST(Cli, EmptyContradictoryOrUnknownOptionsAreRefused) {
  auto dir = testing::fresh_dir("cli_refused");
  write_file_atomically((dir / "empty-space.json").string(), R"({"axes": {}})");
  write_file_atomically((dir / "truncated.json").string(), R"({"amp": "bf16",)");
  write_file_atomically((dir / "tune-report.json").string(), R"({"schema_version": "1.3", "kind": "tune", "trials": []})");
  write_file_atomically((dir / "not-a-tune" / "report.json").string(), "a file of the user's");
  write_file_atomically((dir / "config.json").string(), R"({"size": "tiny"})");
  write_file_atomically((dir / "interrupted" / "journal.jsonl").string(), R"({"kind": "header"})" "\n");
  write_file_atomically((dir / "future-report.json").string(), R"({"schema_version": "9.0", "kind": "run", "config": {"amp": "bf16"}})");
  const std::string d = dir.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bogus", "dyno: 'bogus' is not a subcommand; one of train, workloads, knobs, tune, compare, check, report, launch"},
      {"train -w ''", "--workload: empty; give a value or leave the option out"},
      {"train -o " + d, "--out: '" + d + "' is a folder; give a file path"},
      {"train --set size=tiny --profile " + d + "/same.json -o " + d + "/./same.json", "--out and --profile are both"},
      {"train --set size=tiny -o " + d + "/same.pt --set save_state=" + d + "/same.pt", "--out and save_state are both"},
      {"train --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") + " --set size=tiny save_state=" +
           testing::fixture("model.pt"),
       "save_state '" + testing::fixture("model.pt") + "' is the model (model_file); writing it would destroy it"},
      {"train --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") + " -o " + testing::fixture("data.pt"),
       "--out '" + testing::fixture("data.pt") + "' is the data (data_file); writing it would destroy it"},
      {"train -c " + d, "cannot read '" + d + "': it is a folder, not a file"},
      {"train --set size=tiny save_state=" + d + " -o " + d + "/r.json", "[config] save_state: '" + d + "' is a folder; give a file path"},
      {"train --set size=tiny resume_state=" + d + " -o " + d + "/r.json", "[config] resume_state: '" + d + "' is a folder; give a file written with save_state"},
      {"train -c " + d + "/truncated.json", "truncated.json' is not valid JSON: parse error at line 1"},
      {"train -c " + d + "/tune-report.json", "tune-report.json' is a tuning report; give the best-config.json beside it"},
      {"train -c " + d + "/future-report.json", "future-report.json': schema_version '9.0' has major version 9"},
      {"check --record " + d + "/b.json --baseline " + d + "/b.json", "--baseline excludes --record"},
      {"check --record " + d + "/b.json --against /bin/true", "--record excludes --against"},
      {"check --record " + d + "/b.json --threshold abc", "--record excludes --threshold"},
      {"check --baseline " + d + "/b.json --out " + d + "/./b.json", "--out '" + d + "/./b.json' is the baseline; writing it would destroy it"},
      {"check --baseline " + d + " --markdown " + d + "/summary.md", "--markdown '" + d + "/summary.md' is in the folder of the baseline ('" + d + "'): it holds inputs only"},
      {"compare " + d + "/a.json " + d + "/b.json --markdown " + d + "/a.json", "--markdown '" + d + "/a.json' is the baseline; writing it would destroy it"},
      {"report history " + d + "/h.jsonl --html -o " + d + "/h.jsonl", "--out '" + d + "/h.jsonl' is the history; writing it would destroy it"},
      {"report " + d + " -o " + d + "/r.html", "--out '" + d + "/r.html' is where --html writes; pass --html too"},
      {"report " + d + "/interrupted --html", "the tune in '" + d + "/interrupted' has not finished (its journal is there): run it again with --resume"},
      {"train --model ''", "--model: empty; give a value or leave the option out"},
      {"report " + d + "/truncated.json", "'" + d + "/truncated.json' is a file; dyno report takes a tuning folder (dyno report DIR --html), history FILE or techniques FILE"},
      {"train --set size=tiny resume_state=" + d + "/s.pt -o " + d + "/s.pt", "--out '" + d + "/s.pt' is the training state (resume_state); writing it would destroy it"},
      {"train --set size=tiny save_every_steps=2", "save_every_steps: 2 saves the state to save_state, which is empty"},
      {"train -c " + d + "/config.json -o " + d + "/config.json", "--out '" + d + "/config.json' is the config (--config); writing it would destroy it"},
      {"train --set size=tiny save_state=/proc/dyno-state.pt", "[config] save_state: cannot write '/proc/dyno-state.pt': "},
      {"tune -w fashion-mlp -o " + d + "/not-a-tune", "--out '" + d + "/not-a-tune' holds report.json but no tuning journal"},
      {"check -w fashion-mlp --baseline " + d + "/b.json", "--workload requires --record"},
      {"train -w fashion-cnn --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt"),
       "--workload fashion-cnn and --model: a --model is the workload (workload=torchscript); give one of them"},
      {"train --set workload=fashion-cnn --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt"),
       "workload=fashion-cnn (--set or --config) and --model: a --model is the workload (workload=torchscript); give one of them"},
      {"train --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") + " --set data_file=" + testing::fixture("mixed.pt"),
       "--data '" + testing::fixture("data.pt") + "' and data_file='" + testing::fixture("mixed.pt") + "' (--set or --config) name two files; give it once"},
      {"train --set size=tiny --profile-steps 3", "--profile-steps requires --profile"},
      {"tune -w fashion-cnn --axis batch_size=8 -o " + d + "/tune --command /bin/true", "--workload, --set, --model and --max-ranks are for dyno's workloads"},
      {"check --baseline " + d + "/b.json --alpha 1e-4", "--alpha 0.0001 is below 0.0005, the smallest level the automatic re-run's looks can share"},
      {"launch --nproc 2 -- /nonexistent-dyno-program", "[launch] '/nonexistent-dyno-program' is not an executable file"},
      {"launch --nproc 2 -- " + d, "[launch] '" + d + "' is not an executable file"},
      {"launch --master-addr no-such-host.invalid -- true", "[launch] --master-addr 'no-such-host.invalid' does not resolve: "},
      {"tune -w fashion-mlp --space " + d + "/empty-space.json -o " + d + "/tune", "[space] has no axes"},
      {"tune -w fashion-mlp --set amp=bf16 --axis amp=off,bf16 -o " + d + "/tune", "--set amp=bf16 fixes amp, which --axis searches; give one or the other"},
      {"tune -w fashion-mlp --set amp=fp16 -o " + d + "/tune", "[config] amp: 'fp16' needs device=cuda"},
      {"tune --set workload=fashion-cnn -o " + d + "/tune", "--set workload=fashion-cnn: give the workload with -w (--workload)"},
      {"train -w fashion-mlp --set workload=fashion-cnn", "--workload fashion-mlp and --set workload=fashion-cnn: give the workload once"},
      {"check --record " + d + "/w.json -w fashion-mlp --set workload=fashion-cnn", "--workload fashion-mlp and --set workload=fashion-cnn"},
      {"train -w fashion-mlp --set target=1.5", "target: 1.5 is above 1; 'fashion-mlp' is judged by accuracy, a fraction in (0, 1]"},
      {"train --set size=tiny inject_fault=crash inject_fault_rank=3", "inject_fault_rank: 3 is no rank of a single process (0, or -1: every rank)"},
      {"tune -w fashion-mlp --budget '' -o " + d + "/tune", "--budget: empty"},
      {"tune -w fashion-mlp --memory-limit '' -o " + d + "/tune", "--memory-limit: empty"},
      {"tune -w fashion-mlp --launcher '' -o " + d + "/tune", "--launcher: empty"},
      {"tune -w fashion-mlp --target 'accuracy>=0.9' -o " + d + "/tune", "--target is for a --command program; a workload's target is --set target=VALUE"},
      {"tune -w fashion-mlp --measure-windows 8 -o " + d + "/tune", "--measure-windows is for a --command program"},
      {"tune -w fashion-mlp --max-ranks 2 --axis ddp.world_size=1,4 -o " + d + "/tune", "ddp.world_size 4 (in the space) is above --max-ranks 2"},
      {"tune -w fashion-mlp --max-ranks 2 --set ddp.world_size=3 -o " + d + "/tune", "--set ddp.world_size=3 is above --max-ranks 2"},
      {"tune -w fashion-mlp --set save_state=" + d + "/s.pt -o " + d + "/tune", "trials start fresh and save no state; save_state is for dyno train"},
      {"tune -w fashion-mlp --axis batch_size=32,64 --axis batch_size=16 -o " + d + "/tune", "--axis batch_size is given twice"},
      {"tune -w fashion-mlp --strategy random --trials 5 --axis threads=1:1024:+1 --axis prefetch=1:64:+1 --axis num_workers=0:32:+1 -o " + d + "/tune",
       "--strategy random: the space has "},
      {"tune --model " + testing::fixture("model.pt") + " --data " + testing::fixture("data.pt") + " --objective time-to-target -o " + d + "/tune",
       "--objective time-to-target on a --model needs a reachable target: --set target=0.9 (for accuracy)"},
  };
  for (const auto& [args, message] : cases) {
    auto r = testing::run_dyno(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "same.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "r.json"));  // refused before training
  testing::remove_tree(dir);
}

TEST(Cli, MissingDataNamesTheDebianPackage) {
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny", "DYNO_FASHION_MNIST_DIR=/nonexistent");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("apt-get install dataset-fashion-mnist"), std::string::npos) << r.output;
}

TEST(Cli, AFullDiskDuringTheReportWriteKeepsTheOldReport) {
  auto dir = testing::fresh_dir("cli_full_disk");
  const auto out = (dir / "run.json").string();
  write_file_atomically(out, "old report\n");
  // A 2000-byte file size limit: the report (several KB) cannot be written, as on a full disk.
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=3 --no-progress --out " + out, "prlimit --fsize=2000");
  EXPECT_EQ(r.exit_code, 75) << r.output;
  EXPECT_NE(r.output.find("cannot write '" + out + ".tmp."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the disk is full or a size limit was reached; nothing was left half-written"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(out), "old report\n");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1) << "a temporary file was left behind";
  testing::remove_tree(dir);
}

// A run too short for one measurement window after its warm-up says so instead of "0.0 samples/s".
TEST(Cli, ARunWithNoMeasuredWindowSaysWhy) {
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=2 --no-progress --out /tmp/dyno_cli_unmeasured.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("samples/s         not measured: no window of log_every_steps 50 completed after the warm-up (warmup_steps 10) in its 2 "
                          "steps; raise max_steps or lower log_every_steps"),
            std::string::npos)
      << r.output;
  std::remove("/tmp/dyno_cli_unmeasured.json");
}

TEST(Cli, DivergedRunExitsThreeWithItsReport) {
  auto dir = testing::fresh_dir("cli_diverged");
  auto r = testing::run_dyno("train -w fashion-mlp --set size=tiny inject_fault=nan inject_fault_at_step=2 --no-progress --out " +
                             (dir / "r.json").string());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_file((dir / "r.json").string()))["outcome"], "diverged");
  testing::remove_tree(dir);
}

TEST(Cli, ListsWorkloadsAndKnobsAsJson) {
  auto w = testing::run_dyno("workloads --json");
  ASSERT_EQ(w.exit_code, 0);
  auto workloads = nlohmann::json::parse(w.output);
  EXPECT_EQ(workloads.size(), 4u);
  auto k = testing::run_dyno("knobs --json");
  ASSERT_EQ(k.exit_code, 0);
  bool found = false;
  for (const auto& knob : nlohmann::json::parse(k.output))
    if (knob["name"] == "amp") found = knob["valid"] == "one of off, fp16, bf16" && knob["default"] == "off";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace dyno

namespace dyno {
namespace {

TEST(Cli, ReportRendersTechniquesAndHtml) {
  auto dir = testing::fresh_dir("cli_report");
  write_file_atomically((dir / "tech.json").string(), R"({"benchmarks": [
    {"name": "anomaly/on", "run_name": "anomaly/on", "run_type": "iteration", "real_time": 50, "time_unit": "us"},
    {"name": "anomaly/off", "run_name": "anomaly/off", "run_type": "iteration", "real_time": 1, "time_unit": "us"}]})");
  auto r = testing::run_dyno("report techniques " + (dir / "tech.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("50.00x"), std::string::npos) << r.output;
  r = testing::run_dyno("report " + dir.string() + " --html");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // no tuning report there
  EXPECT_NE(r.output.find("give the --out folder of a dyno tune run"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

// Files edited by hand or left by other programs: a field of the wrong type is named with its
// value (exit 2), never an internal error.
TEST(Cli, ReportRefusesMistypedFilesNamingTheField) {
  auto dir = testing::fresh_dir("cli_report_mistyped");
  const std::string tune = (dir / "tune").string(), tech = (dir / "tech.json").string(), check = (dir / "check.json").string();
  const std::vector<std::pair<std::string, std::string>> reports = {
      {R"({"schema_version": "1.3", "kind": 5})", "report.json': field 'kind' is 5; expected a string"},
      {R"({"schema_version": "1.3", "kind": "tune", "trials": [{"id": "x"}]})", "report.json'.trials[0]: field 'id' is \"x\"; expected an integer"},
      {R"({"schema_version": "1.3", "kind": "tune", "cost": "x"})", "report.json': field 'cost' is \"x\"; expected an object"},
      {R"({"schema_version": "1.3", "kind": "tune", "pareto_front": [5]})", "report.json'.pareto_front[0] is 5; expected a JSON object"},
      // What the HTML reads by name, missing or null, is refused before anything is rendered.
      {R"({"schema_version": "1.3", "kind": "tune", "trials": [{"outcome": "ok", "samples_per_second": 5}]})",
       "report.json'.trials[0] has no field 'id'"},
      {R"({"schema_version": "1.3", "kind": "tune", "trials": [{"id": 1, "report_path": null}]})",
       "report.json'.trials[0]: field 'report_path' is null; expected a string"},
      {R"({"schema_version": "1.3", "kind": "tune", "verification": {"best": {"time_to_target_s": 1}}})",
       "report.json'.verification: field 'default' is missing; expected an object (the default configuration's run)"},
      {R"({"schema_version": "1.3", "kind": "tune", "verification": {"seeds": [{"seed": "<img src=x>", "best": {}, "default": {}}]}})",
       "report.json'.verification.seeds[0]: field 'seed' is \"<img src=x>\"; expected an integer"},
      {R"({"schema_version": "1.3", "kind": "tune", "cost": null})", "report.json': field 'cost' is null; expected an object"},
      {R"({"schema_version": "1.3", "kind": "tune", "verification": {"best": null, "default": {}}})",
       "report.json'.verification: field 'best' is null; expected an object (the best configuration's run)"},
      {R"({"schema_version": "1.3", "kind": "tune", "environment": {"cores": "8"}})", "report.json'.environment: field 'cores' is \"8\"; expected an integer"},
      {R"({"schema_version": "1.3", "kind": "tune", "trials": [{"id": 1, "time_to_target_s": "x"}]})",
       "report.json'.trials[0]: field 'time_to_target_s' is \"x\"; expected a number"},
      {R"({"schema_version": "1.3", "kind": "tune", "profiles": {"best": "x"}})", "report.json'.profiles: field 'best' is \"x\"; expected an object"},
      {R"({"schema_version": "1.3", "kind": "tune", "profiles": {"best": {"trial": "5"}}})", "report.json'.profiles.best: field 'trial' is \"5\"; expected an integer"},
      {R"({"schema_version": "1.3", "kind": "tune", "profiles": {"default": {"trace": 5}}})", "report.json'.profiles.default: field 'trace' is 5; expected a string (or null"},
      {R"({"schema_version": "1.3", "kind": "tune", "profiles": {"best": {"verdict": {"headline": 5}}}})",
       "report.json'.profiles.best.verdict: field 'headline' is 5; expected a string"},
      {R"({"schema_version": "1.3", "kind": "tune", "throughput_phase": {"best_changes": 5}})",
       "report.json'.throughput_phase: field 'best_changes' is 5; expected a string (or null: no trial succeeded)"},
  };
  for (const auto& [text, message] : reports) {
    write_file_atomically(tune + "/report.json", text);
    auto r = testing::run_dyno("report " + tune + " --html");
    EXPECT_EQ(r.exit_code, 2) << text << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << text << "\n" << r.output;
  }
  write_file_atomically(tech, R"({"benchmarks": [{"name": "matmul/fp32", "real_time": "5"}]})");
  auto r = testing::run_dyno("report techniques " + tech);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tech.json'.benchmarks[0]: field 'real_time' is \"5\"; expected a number"), std::string::npos) << r.output;

  write_file_atomically(tech, R"({"benchmarks": [{"name": "BM_Other", "real_time": 5}]})");
  r = testing::run_dyno("report techniques " + tech);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("tech.json' holds none of dyno_bench_techniques' benchmarks"), std::string::npos) << r.output;
  r = testing::run_dyno("report history " + (dir / "h.jsonl").string() + " --revision abc");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--revision goes with --append CHECK.json"), std::string::npos) << r.output;

  r = testing::run_dyno("report history " + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder; give a history file"), std::string::npos) << r.output;
  write_file_atomically(check, R"({"schema_version": "1.0", "kind": "check", "verdict": "NOT_COMPARABLE", "runs": []})");
  r = testing::run_dyno("report history " + (dir / "h.jsonl").string() + " --append " + check + " --revision abc");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the check result is NOT_COMPARABLE"), std::string::npos) << r.output;
  write_file_atomically(check, R"({"schema_version": "1.0", "kind": "check", "verdict": "FAIL", "failure": "was killed by signal 11"})");
  r = testing::run_dyno("report history " + (dir / "h.jsonl").string() + " --append " + check + " --revision abc");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the check FAILED without figures: the candidate was killed by signal 11; there are no runs to append"), std::string::npos)
      << r.output;
  r = testing::run_dyno("report history " + (dir / "h.jsonl").string() + " --append " + check + " --revision \"$(printf 'a\\377b')\"");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--revision: not valid UTF-8"), std::string::npos) << r.output;
  testing::remove_tree(dir);
}

}  // namespace
}  // namespace dyno
