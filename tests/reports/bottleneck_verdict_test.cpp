#include "dyno/reports/bottleneck_verdict.h"

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

// Measured steps of 10 ms/step split as given (ms per step).
std::map<std::string, PhaseTime> phases(double data_wait, double all_reduce, double rest) {
  std::map<std::string, PhaseTime> p;
  p["data_wait"] = {0, data_wait, 0};
  if (all_reduce > 0) p["all_reduce"] = {0, all_reduce, 0};
  p["forward"] = {0, rest, 0};
  p["eval"] = {5.0, 0, 0};  // evaluation is not part of a step
  return p;
}

// Five profiled steps of 10 ms; `ops_s` inside ATen ops, `gemm_s` of it in matrix multiplies.
ProfileSummary profile(double ops_s, double gemm_s, int64_t op_calls = 500, double communication_s = 0) {
  ProfileSummary p;
  p.steps = 5;
  p.wall_s = 0.050;
  p.ops_s = ops_s;
  p.gemm_s = gemm_s;
  p.gemm_flops = 1e9;  // 20 GFLOP/s over the 50 ms
  p.op_calls = op_calls;
  p.op_call_s = 2e-6;  // 500 calls: 1 ms of the 50
  p.communication_s = communication_s;
  p.peak_precision = "float32";
  p.peak_flops_per_s = 100e9;
  return p;
}

TEST(BottleneckVerdict, WaitingForDataIsInputBoundWhateverTheProfileSays) {
  const auto v = decide_bottleneck(phases(4, 0, 6), profile(0.045, 0.040), {"cpu"});
  EXPECT_EQ(v.kind, "input");
  EXPECT_NE(v.sentence.find("waits for data 40% of the step"), std::string::npos) << v.sentence;
  EXPECT_DOUBLE_EQ(v.evidence["data_wait_share"].get<double>(), 0.4);
}

TEST(BottleneckVerdict, AnAllReduceOutsideBackwardOrAnExposedCollectiveIsCommunicationBound) {
  auto v = decide_bottleneck(phases(0.5, 4, 5.5), std::nullopt, {"cpu"});
  EXPECT_EQ(v.kind, "communication");
  EXPECT_NE(v.sentence.find("ddp.overlap=true"), std::string::npos) << v.sentence;
  // Overlapped: the profile saw 20 of 50 ms with a collective in flight and the training thread in no op.
  v = decide_bottleneck(phases(0.5, 0, 9.5), profile(0.025, 0.020, 500, 0.020), {"cpu"});
  EXPECT_EQ(v.kind, "communication");
  EXPECT_NE(v.sentence.find("not hide 40% of a profiled step"), std::string::npos) << v.sentence;
}

TEST(BottleneckVerdict, WithoutAProfileOnlyInputAndCommunicationCanBeTold) {
  const auto v = decide_bottleneck(phases(1, 0, 9), std::nullopt, {"cpu"});
  EXPECT_EQ(v.kind, "undetermined");
  EXPECT_NE(v.sentence.find("run with --profile"), std::string::npos) << v.sentence;
}

TEST(BottleneckVerdict, TimeOutsideOpsAndTheFixedCostOfCallsIsHostOverhead) {
  // 22 ms outside ops + 500 calls x 2 us = 23 of 50 ms: not yet half.
  EXPECT_NE(decide_bottleneck(phases(1, 0, 9), profile(0.028, 0.020), {"cpu"}).kind, "host_overhead");
  // 24 ms outside ops + 1 ms of calls = 25 of 50 ms.
  const auto v = decide_bottleneck(phases(1, 0, 9), profile(0.026, 0.020), {"cpu"});
  EXPECT_EQ(v.kind, "host_overhead");
  EXPECT_DOUBLE_EQ(v.evidence["host_overhead_share"].get<double>(), 0.5);
  EXPECT_NE(v.sentence.find("100 op calls a step at 2.0 us each"), std::string::npos) << v.sentence;
  // Exposed communication is not host overhead.
  EXPECT_NE(decide_bottleneck(phases(1, 0, 9), profile(0.026, 0.020, 500, 0.010), {"cpu"}).kind, "host_overhead");
  // Nor is waiting for data below the input verdict's line: 10 of the 24 ms outside ops.
  auto waiting = profile(0.026, 0.020);
  waiting.data_wait_s = 0.010;
  const auto w = decide_bottleneck(phases(2.8, 0, 7.2), waiting, {"cpu"});
  EXPECT_NE(w.kind, "host_overhead") << w.sentence;
  EXPECT_NEAR(w.evidence["host_overhead_share"].get<double>(), 0.3, 1e-12);  // (24 - 10 + 1) of 50 ms
}

TEST(BottleneckVerdict, MatrixMultipliesDominatingTheOpsIsComputeBoundWithThePeakFraction) {
  const auto v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.030), {"cpu"});
  EXPECT_EQ(v.kind, "compute");
  EXPECT_EQ(v.headline, "compute-bound, 20% of the measured float32 GEMM peak");
  EXPECT_DOUBLE_EQ(v.evidence["peak_fraction"].get<double>(), 0.2);
  EXPECT_NE(v.sentence.find("20.0 GFLOP/s"), std::string::npos) << v.sentence;
}

// What would help a compute-bound step follows from how near the peak its GEMMs run over their
// own time (the step's share of it counts their time outside them too).
TEST(BottleneckVerdict, ComputeBoundAdviceFollowsTheGemmsOwnRateAgainstThePeak) {
  ProfileSummary p = profile(0.045, 0.030);  // 1 GFLOP in 30 ms: 33 GFLOP/s, 33% of the peak (20% over the step)
  auto v = decide_bottleneck(phases(1, 0, 9), p, {"cpu"});
  EXPECT_NE(v.sentence.find("; over their own time they run at only 33% of the peak, too small to fill the cores: a larger batch or "
                            "channels_last=true would help"),
            std::string::npos) << v.sentence;
  EXPECT_NEAR(v.evidence["gemm_peak_fraction"].get<double>(), 1.0 / 3.0, 1e-12);
  p.gemm_flops = 1.8e9;  // 60 GFLOP/s: 60%, though 36% over the step
  v = decide_bottleneck(phases(1, 0, 9), p, {"cpu"});
  EXPECT_NE(v.sentence.find("; over their own time they run at 60% of the peak, so fewer FLOPs or a narrower precision (amp) would help"), std::string::npos)
      << v.sentence;
  const VerdictScope bf16_already{"cpu", true, false, true};
  const std::string sentence = decide_bottleneck(phases(1, 0, 9), p, bf16_already).sentence;
  EXPECT_NE(sentence.find("so fewer FLOPs would help"), std::string::npos) << sentence;
  p.peak_flops_per_s = 0;  // no peak: no advice from it
  EXPECT_EQ(decide_bottleneck(phases(1, 0, 9), p, {"cpu"}).sentence.find("would help"), std::string::npos);
}

TEST(BottleneckVerdict, APeakThatCouldNotBeMeasuredIsSaidAndNotDividedBy) {
  ProfileSummary p = profile(0.045, 0.030);
  p.peak_flops_per_s = 0;
  const auto v = decide_bottleneck(phases(1, 0, 9), p, {"cpu"});
  EXPECT_EQ(v.headline, "compute-bound");
  EXPECT_TRUE(v.evidence["peak_fraction"].is_null());
  EXPECT_NE(v.sentence.find("the GEMM peak could not be measured"), std::string::npos) << v.sentence;
}

TEST(BottleneckVerdict, ElementwiseOpsDominatingIsMemoryBound) {
  const auto v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.020), {"cpu"});
  EXPECT_EQ(v.kind, "memory");
  EXPECT_DOUBLE_EQ(v.evidence["gemm_share"].get<double>(), 0.020 / 0.045);
}

TEST(BottleneckVerdict, OnCudaTheDeviceBusyShareDecidesHostOverheadAndKernelNamesTheRest) {
  ProfileSummary p = profile(0.045, 0.030);
  p.device_busy_s = 0.020;  // busy 40% of the 50 ms
  p.kernels = {{"ampere_sgemm_128x64_tn", 10, 0.015, 0.015, 0, ""}, {"elementwise_kernel", 100, 0.005, 0.005, 0, ""}};
  p.gemm_device_s = 0.015;
  EXPECT_EQ(decide_bottleneck(phases(1, 0, 9), p, {"cuda"}).kind, "host_overhead");
  p.device_busy_s = 0.045;
  EXPECT_EQ(decide_bottleneck(phases(1, 0, 9), p, {"cuda"}).kind, "compute");
  p.gemm_device_s = 0.002;
  EXPECT_EQ(decide_bottleneck(phases(1, 0, 9), p, {"cuda"}).kind, "memory");
}

// A run that ended within its warm-up measured no step: the profiled steps tell its wait for
// data, and with no profile either nothing is decided.
TEST(BottleneckVerdict, WithoutMeasuredStepsTheProfiledStepsDecideAndWithoutThoseNothingDoes) {
  const std::map<std::string, PhaseTime> none;
  ProfileSummary waiting = profile(0.010, 0.008);
  waiting.data_wait_s = 0.040;  // 40 of the 50 profiled ms
  auto v = decide_bottleneck(none, waiting, {"cpu"});
  EXPECT_EQ(v.kind, "input");
  EXPECT_NE(v.sentence.find("waits for data 80% of a profiled step (no step measured)"), std::string::npos) << v.sentence;
  v = decide_bottleneck(none, std::nullopt, {"cpu"});
  EXPECT_EQ(v.kind, "undetermined");
  EXPECT_NE(v.sentence.find("no step was measured"), std::string::npos) << v.sentence;
  EXPECT_TRUE(v.evidence["data_wait_share"].is_null());
}

// The advice names only knob values the run could still take.
TEST(BottleneckVerdict, AdviceNamesOnlyKnobValuesTheRunCouldTake) {
  auto v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.020), {"cpu"});
  EXPECT_NE(v.sentence.find("fused kernels, channels_last=true or a narrower precision (amp) would cut it"), std::string::npos) << v.sentence;
  v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.020), {"cpu", /*channels_last=*/false, /*amp=*/false});
  EXPECT_NE(v.sentence.find("(fused kernels would cut it)"), std::string::npos) << v.sentence;
  v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.020), {"cpu", /*channels_last=*/false, /*amp=*/true});
  EXPECT_NE(v.sentence.find("(fused kernels or a narrower precision (amp) would cut it)"), std::string::npos) << v.sentence;
  v = decide_bottleneck(phases(0.5, 0, 9.5), profile(0.025, 0.020, 500, 0.020), {"cpu", true, true, /*comm_hook=*/false});
  EXPECT_EQ(v.kind, "communication");
  EXPECT_EQ(v.sentence.find("comm_hook"), std::string::npos) << v.sentence;
}

TEST(BottleneckVerdict, RoundTripsThroughJsonAndNamesAMissingKind) {
  const auto v = decide_bottleneck(phases(1, 0, 9), profile(0.045, 0.030), {"cpu"});
  const auto back = verdict_from_json(to_json(v), "'run.json': verdict");
  EXPECT_EQ(to_json(back), to_json(v));
  try {
    verdict_from_json(nlohmann::json{{"headline", "x"}}, "'run.json': verdict");
    FAIL() << "a verdict without a kind was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'run.json': verdict"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kind"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyno
