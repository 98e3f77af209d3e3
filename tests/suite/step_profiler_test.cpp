// `dyno train --profile`: LibTorch's profiler over the steps after warm-up, a Chrome trace, the
// op table, and the bottleneck verdict on runs built to have each bottleneck (CPU, real training).
#include "dyno/suite/step_profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/run_report.h"
#include "dyno/suite/engine.h"
#include "dyno/workloads/fashion_mnist_source.h"
#include "dyno/workloads/models/mlp.h"
#include "fixture_files.h"
#include "test_support.h"

namespace dyno {
namespace {

// An MLP with one hidden layer of 4 units: at batch 1 each of its ops does almost no arithmetic, so
// a step is the fixed cost of its op calls and the loop around them on any machine (fashion-mlp's
// 784x256 layer at batch 1 sits near the verdict's line: its matrix-vector products take half the
// op time).
Workload narrow_mlp() {
  Workload w;
  w.name = "test-narrow-mlp";
  w.description = "MLP 784-4-10 on Fashion-MNIST (tests)";
  w.recipe.optimizer = "adamw";
  w.recipe.lr = 1e-3;
  w.recipe.epochs = 1;
  w.load_data = [](const std::string&) { return WorkloadData{fashion_mnist_source("train", 512), fashion_mnist_source("t10k", 512)}; };
  w.build_model = [] { return make_mlp(784, {4}, 10); };
  return w;
}
DYNO_WORKLOAD(narrow_mlp);

RunConfig mlp(int64_t batch_size) {
  RunConfig c;
  c.workload = "fashion-mlp";
  c.size = "small";
  c.batch_size = batch_size;
  c.warmup_steps = 3;
  c.log_every_steps = 5;
  c.max_steps = 30;
  c.final_eval = false;
  return c;
}

RunReport profiled_run(const RunConfig& config, const std::string& trace, int64_t steps = 5) {
  EngineOptions options;
  options.profile = {trace, steps};
  return Engine(options).run(config);
}

TEST(StepProfiler, TraceHoldsDynosPhasesAndAtenOpsAndTheTableAccountsForTheProfiledSteps) {
  const auto dir = testing::fresh_dir("profile_trace");
  const std::string trace = (dir / "sub" / "trace.json").string();
  RunConfig c = mlp(64);
  c.warmup_steps = 5;  // 5 + 10 profiled: every measurement window is 5 steps
  const RunReport report = profiled_run(c, trace, 10);
  ASSERT_EQ(report.outcome, Outcome::Ok) << report.outcome_reason;
  ASSERT_TRUE(report.profile.has_value());
  const ProfileSummary& p = *report.profile;
  EXPECT_EQ(p.steps, 10);
  EXPECT_EQ(p.trace_path, trace);

  // A Chrome trace (what Perfetto and chrome://tracing open) with dyno's ranges and ATen ops.
  const auto json = read_json_file(trace, "trace");
  ASSERT_TRUE(json.contains("traceEvents"));
  std::set<std::string> names;
  for (const auto& e : json["traceEvents"])
    if (e.contains("name") && e["name"].is_string()) names.insert(e["name"].get<std::string>());
  for (const char* name : {"dyno::step", "dyno::data_wait", "dyno::forward", "dyno::backward", "dyno::optimizer", "aten::addmm", "aten::mm"})
    EXPECT_EQ(names.count(name), 1u) << name;

  // Every row's self time together is the profiled steps' time by dyno's own clock, within 10%.
  EXPECT_NEAR(p.table_self_s() / p.wall_s, 1.0, 0.10) << p.table_self_s() << " s in the table, " << p.wall_s << " s of profiled steps";
  // Three linear layers a step, each on the batch of 64 (which of them takes the most time, and
  // so names the row's shapes, is the machine's: on a loaded one even the smallest can).
  const auto addmm = std::find_if(p.ops.begin(), p.ops.end(), [](const OpRow& row) { return row.name == "aten::addmm"; });
  ASSERT_NE(addmm, p.ops.end());
  EXPECT_EQ(addmm->calls, 10 * 3);
  EXPECT_EQ(addmm->input_shapes.rfind("[[", 0), 0u) << addmm->input_shapes;
  EXPECT_NE(addmm->input_shapes.find("[64, "), std::string::npos) << addmm->input_shapes;
  EXPECT_GT(addmm->flops, 0);
  EXPECT_GT(p.ops_s, 0);
  EXPECT_LE(p.ops_s, p.wall_s);
  EXPECT_GT(p.gemm_flops, 0);
  EXPECT_EQ(p.convolution_flops, 0);  // linear layers only
  EXPECT_GT(p.peak_flops_per_s, 0);
  EXPECT_GT(p.op_call_s, 0);
  EXPECT_EQ(p.peak_precision, "float32");
  // The wait for data is kept whole even when its row folds into "[other]".
  double waiting_s = 0;
  for (const auto& row : p.ops)
    if (row.name == "dyno::data_wait") waiting_s = row.self_s;
  EXPECT_GT(p.data_wait_s, 0);
  if (waiting_s > 0) {
    EXPECT_DOUBLE_EQ(p.data_wait_s, waiting_s);
  }

  // The profiled steps are not measured: the phases cover 30 - 5 warm-up - 10 profiled steps.
  // (That the first throughput window starts after the trace is written is timing: scripts/bench-profile.)
  EXPECT_EQ(report.summary.steps, 30);
  double phase_total_s = 0, per_step_ms = 0;
  for (const auto& [name, phase] : report.phases)
    if (name != "eval") phase_total_s += phase.total_s, per_step_ms += phase.per_step_ms;
  EXPECT_NEAR(1000.0 * phase_total_s / per_step_ms, 15.0, 1e-6);
  EXPECT_EQ(report.throughput_windows.size(), 3u);  // steps 16-20, 21-25, 26-30
  // Written and read back with the report.
  const auto back = report_from_json(to_json(report));
  ASSERT_TRUE(back.profile && back.verdict);
  EXPECT_EQ(to_json(*back.profile), to_json(p));
  testing::remove_tree(dir);
}

// A conv net's convolutions (forward and backward) are counted apart within the GEMM FLOPs: on CUDA
// they decide whether the peak is TF32's.
TEST(StepProfiler, AConvNetsConvolutionFlopsAreCountedApart) {
  const auto dir = testing::fresh_dir("profile_conv");
  RunConfig c = mlp(32);
  c.workload = "fashion-cnn";
  c.size = "tiny";
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 3);
  ASSERT_TRUE(report.profile.has_value()) << report.outcome_reason;
  EXPECT_GT(report.profile->convolution_flops, 0);
  EXPECT_LT(report.profile->convolution_flops, report.profile->gemm_flops);  // its linear head's too
  testing::remove_tree(dir);
}

// Under autocast each convolution is dispatched twice, the narrower one nested in the first: the
// table counts it once, with the FLOPs the summary counts.
TEST(StepProfiler, AnAutocastOpIsOneCallInTheTable) {
  const auto dir = testing::fresh_dir("profile_autocast");
  RunConfig c = mlp(32);
  c.workload = "fashion-cnn";
  c.size = "tiny";
  c.amp = "bf16";
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 3);
  ASSERT_TRUE(report.profile.has_value()) << report.outcome_reason;
  const auto& ops = report.profile->ops;
  const auto conv = std::find_if(ops.begin(), ops.end(), [](const OpRow& r) { return r.name == "aten::conv2d"; });
  ASSERT_NE(conv, ops.end());
  EXPECT_EQ(conv->calls, 2 * 3);  // two convolutions a step, three steps
  double table_flops = 0;
  for (const auto& row : ops) table_flops += row.flops;
  EXPECT_NEAR(table_flops, report.profile->gemm_flops, 1e-6 * report.profile->gemm_flops);
  testing::remove_tree(dir);
}

// LibTorch counts no FLOPs for a 1-D convolution's forward: its backward's are not counted
// either, and its time is a GEMM's.
TEST(StepProfiler, AConvolutionWhoseForwardIsNotCountedHasNoBackwardFlopsEither) {
  const auto dir = testing::fresh_dir("profile_conv1d");
  RunConfig c = mlp(32);
  c.workload = "torchscript";
  c.model_file = testing::fixture("conv1d.pt");
  c.data_file = testing::fixture("data.pt");
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 3);
  ASSERT_TRUE(report.profile.has_value()) << report.outcome_reason;
  bool backward_seen = false;
  for (const auto& row : report.profile->ops) {
    if (row.name == "aten::conv1d" || row.name == "aten::convolution_backward") {
      EXPECT_EQ(row.flops, 0) << row.name;
    }
    backward_seen = backward_seen || row.name == "aten::convolution_backward";
  }
  EXPECT_TRUE(backward_seen);
  EXPECT_EQ(report.profile->convolution_flops, 0);
  EXPECT_GT(report.profile->gemm_flops, 0);  // the linear head's
  testing::remove_tree(dir);
}

TEST(StepProfiler, WithoutProfileNoProfilerRunsAndTheVerdictSaysSo) {
  const RunReport report = Engine().run(mlp(64));
  ASSERT_EQ(report.outcome, Outcome::Ok);
  EXPECT_FALSE(report.profile.has_value());
  ASSERT_TRUE(report.verdict.has_value());
  EXPECT_TRUE(report.verdict->kind == "undetermined" || report.verdict->kind == "input") << report.verdict->sentence;
}

TEST(StepProfiler, ASlowDataSourceIsInputBound) {
  const auto dir = testing::fresh_dir("profile_input");
  RunConfig c = mlp(64);
  c.data_delay_ms = 20;  // each batch takes 20 ms more to produce, in the training thread
  c.max_steps = 14;
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 3);
  ASSERT_TRUE(report.verdict);
  EXPECT_EQ(report.verdict->kind, "input") << report.verdict->sentence;
  testing::remove_tree(dir);
}

TEST(StepProfiler, ATinyModelAtBatchOneIsHostOverheadBound) {
  const auto dir = testing::fresh_dir("profile_tiny");
  RunConfig c = mlp(1);
  c.workload = "test-narrow-mlp";
  c.threads = 1;  // one op thread: with two on a loaded machine each tiny op waits on its thread team
  c.max_steps = 60;
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 20);
  ASSERT_TRUE(report.verdict);
  EXPECT_EQ(report.verdict->kind, "host_overhead") << report.verdict->sentence;
  testing::remove_tree(dir);
}

TEST(StepProfiler, ALargeBatchIsComputeBoundAndStatesItsShareOfTheMeasuredPeak) {
  const auto dir = testing::fresh_dir("profile_large");
  RunConfig c = mlp(1024);
  c.num_workers = 1;  // batches of 1024 built beside the training thread, not in it
  c.max_steps = 12;
  const RunReport report = profiled_run(c, (dir / "trace.json").string(), 3);
  ASSERT_TRUE(report.verdict);
  EXPECT_EQ(report.verdict->kind, "compute") << report.verdict->sentence;
  EXPECT_NE(report.verdict->headline.find("of the measured float32 GEMM peak"), std::string::npos) << report.verdict->headline;
  EXPECT_GT(report.verdict->evidence["peak_fraction"].get<double>(), 0.0);
  testing::remove_tree(dir);
}

TEST(StepProfiler, ADataParallelRunWithOverlapOffIsCommunicationBound) {
  const auto dir = testing::fresh_dir("profile_ddp");
  const std::string out = (dir / "run.json").string();
  const auto r = testing::run_dyno("launch --nproc 2 -- dyno train -w fashion-mlp --set size=small max_steps=30 warmup_steps=3 batch_size=32 "
                                   "final_eval=false ddp.backend=gloo ddp.overlap=false --profile " + (dir / "trace.json").string() +
                                   " --profile-steps 3 --no-progress --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunReport report = read_report(out);
  ASSERT_TRUE(report.verdict);
  EXPECT_EQ(report.verdict->kind, "communication") << report.verdict->sentence;
  EXPECT_TRUE(std::filesystem::exists(dir / "trace.rank1.json")) << "every rank is profiled alike";
  testing::remove_tree(dir);
}

TEST(StepProfiler, ARunEndingInsideItsProfiledStepsKeepsThoseAndOneEndingBeforeThemSaysSo) {
  const auto dir = testing::fresh_dir("profile_short");
  const std::string run = "train -w fashion-mlp --set size=tiny warmup_steps=3 --no-progress --profile " + (dir / "trace.json").string() +
                          " --out " + (dir / "run.json").string();
  auto r = testing::run_dyno(run + " --set max_steps=4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = read_report((dir / "run.json").string());
  ASSERT_TRUE(report.profile.has_value());
  EXPECT_EQ(report.profile->steps, 1);
  r = testing::run_dyno(run + " --set max_steps=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the run ended before its profiled steps"), std::string::npos) << r.output;
  EXPECT_FALSE(read_report((dir / "run.json").string()).profile.has_value());
  auto bad = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=4 --profile x.json --profile-steps 0 --no-progress");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--profile-steps"), std::string::npos) << bad.output;
  // A trace that cannot be written is refused before the run, not after it.
  bad = testing::run_dyno("train -w fashion-mlp --set size=tiny max_steps=4 --profile /proc/no-such-dir/trace.json --no-progress");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("/proc/no-such-dir"), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("outcome"), std::string::npos) << "no training ran";
  testing::remove_tree(dir);
}

}  // namespace
}  // namespace dyno
