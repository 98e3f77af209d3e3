#include "dyno/suite/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <torch/torch.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"
#include "fixture_files.h"
#include "dyno/suite/autocast_scope.h"
#include "dyno/suite/lr_schedule.h"
#include "test_support.h"
#include "user_error_matcher.h"
#include "dyno/workloads/tensor_source.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

RunConfig tiny(const std::string& workload) {
  RunConfig c;
  c.workload = workload;
  c.size = "tiny";
  c.epochs = 3;
  c.stop_at_target = false;
  c.warmup_steps = 1;
  c.log_every_steps = 1;
  c.threads = 1;
  return c;
}

// The largest batch the evaluation source was asked for (its source counts them).
std::atomic<int64_t> largest_eval_batch{0};
class CountingSource : public ExampleSource {
 public:
  explicit CountingSource(std::shared_ptr<const ExampleSource> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  Batch make_batch(const std::vector<int64_t>& indices) const override {
    int64_t seen = largest_eval_batch.load();
    while (static_cast<int64_t>(indices.size()) > seen && !largest_eval_batch.compare_exchange_weak(seen, static_cast<int64_t>(indices.size()))) {
    }
    return inner_->make_batch(indices);
  }

 private:
  std::shared_ptr<const ExampleSource> inner_;
};
Workload eval_batch_probe() {
  Workload w;
  w.name = "eval-batch-probe";
  w.target = 0.5;
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<TensorSource>(torch::randn({600, 4}), torch::randint(0, 2, {600}, torch::kLong));
    return WorkloadData{source, std::make_shared<CountingSource>(source)};
  };
  w.build_model = [] {
    SegmentedModel model;
    model->add_segment("head", torch::nn::Sequential(torch::nn::Linear(4, 2)));
    return model;
  };
  return w;
}
DYNO_WORKLOAD(eval_batch_probe);

// A training source that fails past its first hundred examples (a workload's own bug, or a bad
// file), which the fit check's two examples do not reach.
class FailingSource : public ExampleSource {
 public:
  explicit FailingSource(std::shared_ptr<const ExampleSource> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  Batch make_batch(const std::vector<int64_t>& indices) const override {
    for (int64_t i : indices)
      if (i >= 100) throw std::out_of_range("example " + std::to_string(i) + " is past the file's end");
    return inner_->make_batch(indices);
  }

 private:
  std::shared_ptr<const ExampleSource> inner_;
};
Workload failing_source() {
  Workload w = eval_batch_probe();
  w.name = "failing-source";
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<TensorSource>(torch::randn({600, 4}), torch::randint(0, 2, {600}, torch::kLong));
    return WorkloadData{std::make_shared<FailingSource>(source), source};
  };
  return w;
}
DYNO_WORKLOAD(failing_source);

std::vector<double> losses(const RunReport& r) {
  std::vector<double> out;
  for (const auto& p : r.loss_curve) out.push_back(p.value);
  return out;
}

// Evaluation batches are the training batch, at least 500, unless eval_batch_size says otherwise
// (a model that trains at batch 8 may not fit 500 examples at once, even without autograd).
TEST(Engine, EvaluationBatchesAreAtLeast500UnlessEvalBatchSizeSaysOtherwise) {
  RunConfig c = tiny("eval-batch-probe");
  c.batch_size = 16;
  c.max_steps = 2;
  c.epochs = 1;
  c.final_eval = true;
  largest_eval_batch = 0;
  ASSERT_EQ(Engine().run(c).outcome, Outcome::Ok);
  EXPECT_EQ(largest_eval_batch.load(), 500);
  c.eval_batch_size = 32;
  largest_eval_batch = 0;
  ASSERT_EQ(Engine().run(c).outcome, Outcome::Ok);
  EXPECT_EQ(largest_eval_batch.load(), 32);
}

// What a workload's source throws mid-run is the workload's error (exit 2, naming it), with the
// loader's worker threads as without them.
TEST(Engine, ASourceThatThrowsMidRunIsTheWorkloadsError) {
  for (int64_t workers : {0, 2}) {
    RunConfig c = tiny("failing-source");
    c.num_workers = workers;
    try {
      Engine().run(c);
      ADD_FAILURE() << "ran with " << workers << " workers";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("'failing-source': the training source's make_batch threw: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("is past the file's end"), std::string::npos) << e.what();
    }
  }
}

// The LR curve gives at each log point the rate the last step trained with.
TEST(Engine, TheLrCurveIsTheRateEachLoggedStepTrainedWith) {
  RunConfig c = tiny("fashion-mlp");
  c.schedule = "cosine";
  c.epochs = 1;  // 8 steps
  const RunReport r = Engine().run(c);
  ASSERT_EQ(r.lr_curve.size(), 8u);
  const LrSchedule schedule{"cosine", r.config["lr"].get<double>(), 8, 0.02};
  for (size_t i = 0; i < r.lr_curve.size(); ++i) {
    EXPECT_EQ(r.lr_curve[i].step, static_cast<int64_t>(i) + 1);
    EXPECT_DOUBLE_EQ(r.lr_curve[i].value, schedule.at(static_cast<int64_t>(i))) << i;
  }
  EXPECT_GT(r.lr_curve.back().value, 0);  // the last step's rate, not the rate after the schedule's end
}

TEST(Engine, TrainsAndReportsEveryPhase) {
  RunConfig c = tiny("fashion-mlp");
  RunReport r = Engine().run(c);
  EXPECT_EQ(r.outcome, Outcome::Ok);
  EXPECT_EQ(r.summary.steps, 24);  // 512 examples / 64 = 8 steps x 3 epochs
  EXPECT_EQ(r.summary.stop_reason, "epochs");
  EXPECT_GT(r.summary.samples_per_second, 0);
  EXPECT_GT(r.summary.final_metric, 0.3);  // well above chance (0.1) after 24 steps
  EXPECT_EQ(r.metric_curve.size(), 3u);    // one evaluation per epoch
  for (const char* phase : {"data_wait", "h2d", "forward", "backward", "optimizer", "eval"})
    EXPECT_TRUE(r.phases.count(phase)) << phase;
  EXPECT_GT(r.summary.peak_memory_bytes, 0);
  EXPECT_EQ(r.environment.threads, 1);
  EXPECT_LT(losses(r).back(), losses(r).front());
  EXPECT_EQ(r.config["optimizer"], "adamw");  // recipe filled in: the report's config is complete
  EXPECT_DOUBLE_EQ(r.config["lr"].get<double>(), 1e-3);
}

// With evaluations every 5 steps, 24 steps end between two of them: the trained model is evaluated
// once more, so the report's final metric is the model's at the end. Without final_eval, it is not.
TEST(Engine, TheLastEpochsModelIsEvaluatedWhenItsLastStepWasNot) {
  RunConfig c = tiny("fashion-mlp");
  c.eval_every_steps = 5;
  RunReport r = Engine().run(c);
  ASSERT_EQ(r.metric_curve.size(), 5u);  // steps 5, 10, 15, 20 and the end
  EXPECT_EQ(r.metric_curve.back().step, 24);
  EXPECT_DOUBLE_EQ(r.summary.final_metric, r.metric_curve.back().value);
  c.final_eval = false;
  EXPECT_EQ(Engine().run(c).metric_curve.back().step, 20);
  c.final_eval = true;
  c.eval_every_steps = 8;  // the epochs' ends: nothing left to evaluate
  EXPECT_EQ(Engine().run(c).metric_curve.size(), 3u);
}

// The tuner's race: a run whose throughput interval lies wholly below measure_stop_below stops as
// soon as it has the 6 windows an interval needs; a bar it clears does not stop it.
#if defined(__GLIBC__)
// The default host allocator is the steady one: after a default run, a 64 MiB block (above
// glibc's largest mmap threshold) comes from the heap instead of a fresh mapping.
TEST(Engine, ADefaultRunServesLargeHostBlocksFromTheHeap) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the setting is process-wide
  EXPECT_EXIT(
      {
        RunConfig c = tiny("fashion-mlp");
        c.epochs = 1;
        Engine().run(c);
        const size_t mapped_before = mallinfo2().hblks;
        void* block = std::malloc(64 << 20);
        std::memset(block, 1, 4096);
        asm volatile("" : : "r"(block) : "memory");
        const size_t mapped = mallinfo2().hblks;
        std::free(block);
        std::exit(mapped == mapped_before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

// A window is a log interval of training: an evaluation or a save between log points pauses the
// window around it, and the short first window of a run resumed between log points goes on to the
// next log point.
TEST(Engine, ThroughputWindowsAreWholeLogIntervals) {
  const testing::TempDir dir("windows");
  RunConfig c = tiny("fashion-mlp");  // 8 steps an epoch, each ending with an evaluation
  c.epochs = 10;
  c.log_every_steps = 10;
  c.max_steps = 40;
  c.save_every_steps = 25;
  c.save_state = dir.str() + "/s.pt";
  const RunReport whole = Engine().run(c);
  EXPECT_EQ(whole.throughput_windows.size(), 4u);  // steps 2-10, 11-20, 21-30, 31-40
  c.max_steps = 25;
  ASSERT_EQ(Engine().run(c).outcome, Outcome::Ok);
  c.resume_state = c.save_state;
  c.max_steps = 40;
  const RunReport resumed = Engine().run(c);
  ASSERT_EQ(resumed.summary.steps, 40);
  EXPECT_EQ(resumed.throughput_windows.size(), 1u);  // steps 27-40 (26 is its warm-up), not 27-30 and 31-40
  // A stop before the log point that window went on to (a plateau at step 32's evaluation) keeps it.
  c.lr = 1e-12;  // no evaluation improves on the first
  c.plateau_patience = 3;
  c.resume_state.clear();
  c.max_steps = 25;
  ASSERT_EQ(Engine().run(c).summary.stop_reason, "max_steps");  // evaluated at 8, 16 and 24
  c.resume_state = c.save_state;
  c.max_steps = 40;
  const RunReport stopped = Engine().run(c);
  ASSERT_EQ(stopped.summary.stop_reason, "plateau");
  ASSERT_EQ(stopped.summary.steps, 32);
  EXPECT_EQ(stopped.throughput_windows.size(), 1u);  // steps 27-32
}

TEST(Engine, AnOutpacedMeasurementStopsAfterSixWindows) {
  RunConfig c = tiny("fashion-mlp");
  c.epochs = 0;
  c.max_steps = 20;
  c.measure_stop_below = 1e12;  // faster than any machine
  RunReport lost = Engine().run(c);
  EXPECT_EQ(lost.summary.stop_reason, "outpaced");
  EXPECT_EQ(lost.throughput_windows.size(), 6u);
  c.measure_stop_below = 1;  // one sample per second: any run clears it
  RunReport kept = Engine().run(c);
  EXPECT_EQ(kept.summary.stop_reason, "max_steps");
  EXPECT_EQ(kept.throughput_windows.size(), 19u);  // 20 steps, the first is warm-up
}

TEST(Engine, WorkerThreadsTrainExactlyLikeTheTrainingThread) {
  RunConfig c = tiny("fashion-cnn");
  c.max_steps = 10;
  RunReport inline_run = Engine().run(c);
  c.num_workers = 2;
  c.prefetch = 3;
  RunReport threaded = Engine().run(c);
  EXPECT_EQ(losses(inline_run), losses(threaded));
}

TEST(Engine, CheckpointingTrainsExactlyLikeThePlainRun) {
  RunConfig c = tiny("fashion-cnn");
  c.max_steps = 6;
  RunReport plain = Engine().run(c);
  c.checkpointing = true;
  RunReport checkpointed = Engine().run(c);
  auto a = losses(plain), b = losses(checkpointed);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << "step " << i + 1;
}

TEST(Engine, GradientAccumulationMatchesTheLargerBatch) {
  auto dir = testing::fresh_dir("accum");
  RunConfig big = tiny("fashion-mlp");
  big.max_steps = 4;
  big.optimizer = "sgd";
  big.save_state = (dir / "big.pt").string();
  RunConfig accumulated = big;
  accumulated.batch_size = 32;
  accumulated.grad_accum_steps = 2;
  accumulated.save_state = (dir / "accumulated.pt").string();
  Engine().run(big);
  Engine().run(accumulated);
  auto a = testing::saved_parameters(big.save_state, "fashion-mlp", true);
  auto b = testing::saved_parameters(accumulated.save_state, "fashion-mlp", true);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-4, 1e-6)) << "parameter " << i;
  testing::remove_tree(dir);
}

TEST(Engine, ResumeContinuesBitForBit) {
  auto dir = testing::fresh_dir("resume");
  RunConfig straight = tiny("fashion-cnn");
  straight.max_steps = 12;  // crosses the epoch boundary at step 8
  straight.save_state = (dir / "straight.pt").string();
  Engine().run(straight);

  RunConfig first = straight;
  first.max_steps = 5;
  first.save_state = (dir / "half.pt").string();
  const RunReport half = Engine().run(first);
  RunConfig second = straight;
  second.resume_state = first.save_state;
  second.num_workers = 2;  // the loader resumes mid-epoch with workers too
  second.save_state = (dir / "resumed.pt").string();
  const auto started = std::chrono::steady_clock::now();
  RunReport resumed = Engine().run(second);
  const double second_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(resumed.summary.steps, 12);
  // Its wall time is the saved run's training time plus its own.
  EXPECT_GE(resumed.summary.wall_time_s, half.summary.wall_time_s);
  EXPECT_LE(resumed.summary.wall_time_s, half.summary.wall_time_s + second_s);

  auto a = testing::saved_parameters(straight.save_state, "fashion-cnn", true);
  auto b = testing::saved_parameters(second.save_state, "fashion-cnn", true);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i << " differs";
  testing::remove_tree(dir);
}

// A resumed run goes on from the evaluations before the save: the plateau rule's count and the
// time the target was reached. (An LR too small to move the model: every evaluation ties the first.)
TEST(Engine, ResumeContinuesTheStopRulesAndTheTimeToTarget) {
  auto dir = testing::fresh_dir("resume_evaluations");
  RunConfig straight = tiny("fashion-mlp");
  straight.lr = 1e-12;
  straight.eval_every_steps = 2;
  straight.plateau_patience = 2;
  straight.target = 0.01;  // reached at the first evaluation
  const RunReport whole = Engine().run(straight);
  EXPECT_EQ(whole.summary.stop_reason, "plateau");
  EXPECT_EQ(whole.summary.steps, 6);  // evaluations at 2 (the best), 4 and 6 (none better: two)

  RunConfig first = straight;
  first.max_steps = 4;
  first.save_state = (dir / "half.pt").string();
  const RunReport half = Engine().run(first);
  ASSERT_TRUE(half.summary.time_to_target_s.has_value());
  RunConfig second = straight;
  second.resume_state = first.save_state;
  const RunReport resumed = Engine().run(second);
  EXPECT_EQ(resumed.summary.stop_reason, "plateau");
  EXPECT_EQ(resumed.summary.steps, 6);
  ASSERT_TRUE(resumed.summary.time_to_target_s.has_value());
  EXPECT_DOUBLE_EQ(*resumed.summary.time_to_target_s, *half.summary.time_to_target_s);
  testing::remove_tree(dir);
}

// A run stopped before its first scheduled evaluation (max_steps inside the first epoch) evaluates
// for its report after its state is saved: a resumed run carries no time to target from it, as an
// uninterrupted run would have none there, and reaches the target at its own final evaluation.
TEST(Engine, AnOffScheduleFinalEvaluationIsNotInTheSavedState) {
  auto dir = testing::fresh_dir("resume_final_eval");
  RunConfig first = tiny("fashion-mlp");
  first.target = 0.01;  // reached at any evaluation
  first.max_steps = 3;  // before the first epoch's end
  first.save_state = (dir / "half.pt").string();
  const RunReport half = Engine().run(first);
  ASSERT_TRUE(half.summary.time_to_target_s.has_value());  // its report's final evaluation
  RunConfig second = first;
  second.max_steps = 5;
  second.save_state.clear();
  second.resume_state = first.save_state;
  const RunReport resumed = Engine().run(second);
  ASSERT_TRUE(resumed.summary.time_to_target_s.has_value());
  ASSERT_FALSE(resumed.metric_curve.empty());
  EXPECT_EQ(resumed.metric_curve.back().step, 5);
  EXPECT_DOUBLE_EQ(*resumed.summary.time_to_target_s, resumed.metric_curve.back().time_s);  // step 5's, not step 3's carried over
  testing::remove_tree(dir);
}

// A run stopped at a step with a scheduled evaluation before making it (here at the end of epoch
// 2, step 16, by the throughput rule at that step's log point) makes the evaluation, and its state
// holds it: resumed, it ends where the uninterrupted run does, on the plateau rule's evaluation at
// step 16 (patience 1: the resumed run makes no step) or 24 (patience 2). (An LR too small to move
// the model: every evaluation ties the first.)
TEST(Engine, AStopAtAScheduledEvaluationsStepMakesItAndTheStateHoldsIt) {
  auto dir = testing::fresh_dir("resume_scheduled_eval");
  for (int64_t patience : {1, 2}) {
    RunConfig straight = tiny("fashion-mlp");
    straight.lr = 1e-12;
    straight.plateau_patience = patience;
    const RunReport whole = Engine().run(straight);
    ASSERT_EQ(whole.summary.stop_reason, "plateau");
    ASSERT_EQ(whole.summary.steps, 8 + 8 * patience);  // evaluations at 8 (the best), then one each epoch

    RunConfig first = straight;
    first.warmup_steps = 10;          // windows from step 11
    first.measure_stop_below = 1e12;  // "outpaced" once six windows make an interval: step 16
    first.save_state = (dir / "stopped.pt").string();
    const RunReport stopped = Engine().run(first);
    ASSERT_EQ(stopped.summary.stop_reason, "outpaced");
    ASSERT_EQ(stopped.summary.steps, 16);
    ASSERT_FALSE(stopped.metric_curve.empty());
    EXPECT_EQ(stopped.metric_curve.back().step, 16);
    RunConfig second = straight;
    second.resume_state = first.save_state;
    const RunReport resumed = Engine().run(second);
    EXPECT_EQ(resumed.summary.stop_reason, "plateau") << "patience " << patience;
    EXPECT_EQ(resumed.summary.steps, whole.summary.steps) << "patience " << patience;
  }
  testing::remove_tree(dir);
}

// The same within an epoch: a stop at step 6 of a run evaluating every 2 steps makes step 6's.
TEST(Engine, AStopAtAnEvalEveryStepsStepMakesItsEvaluation) {
  RunConfig c = tiny("fashion-mlp");
  c.eval_every_steps = 2;
  c.warmup_steps = 0;           // a window at every step from step 1: the sixth, at step 6,
  c.measure_stop_below = 1e12;  // makes an interval, and "outpaced"
  const RunReport r = Engine().run(c);
  ASSERT_EQ(r.summary.stop_reason, "outpaced");
  ASSERT_EQ(r.summary.steps, 6);
  ASSERT_FALSE(r.metric_curve.empty());
  EXPECT_EQ(r.metric_curve.back().step, 6);
}

// A periodic save at an epoch's last step comes before the epoch's evaluation: a run killed after
// it resumes by making that evaluation first, at step 8, as the uninterrupted run did.
TEST(Engine, AStateSavedAtAnEpochsEndBeforeItsEvaluationResumesWithIt) {
  auto dir = testing::fresh_dir("resume_epoch_end");
  const std::string state = (dir / "s.pt").string(),
                    common = "train -w fashion-mlp --no-progress --set size=tiny threads=1 final_eval=false save_state=" + state;
  auto r = testing::run_dyno(common + " save_every_steps=8 inject_fault=crash inject_fault_at_step=10 --out " + (dir / "a.json").string());
  ASSERT_NE(r.exit_code, 0) << r.output;  // killed after the save at step 8
  r = testing::run_dyno(common + " resume_state=" + state + " max_steps=10 --out " + (dir / "b.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(read_file((dir / "b.json").string()));
  const nlohmann::json& metric = report["curves"]["metric"];
  ASSERT_FALSE(metric.empty()) << report.dump();
  EXPECT_EQ(metric[0]["step"], 8);
  testing::remove_tree(dir);
}

// A run killed after a periodic save resumes from the evaluations up to that save, including one
// made at the very step saved (the whole run stops at step 6 here too).
TEST(Engine, APeriodicSaveHoldsTheEvaluationOfItsStep) {
  auto dir = testing::fresh_dir("resume_periodic");
  const std::string state = (dir / "s.pt").string(), common = "train -w fashion-mlp --no-progress --set size=tiny threads=1 lr=1e-12 eval_every_steps=2 "
                                                                "plateau_patience=2 target=0.01 stop_at_target=false final_eval=false save_state=" + state;
  auto r = testing::run_dyno(common + " save_every_steps=4 inject_fault=crash inject_fault_at_step=5 --out " + (dir / "a.json").string());
  ASSERT_NE(r.exit_code, 0) << r.output;  // killed after the save at step 4
  r = testing::run_dyno(common + " resume_state=" + state + " --out " + (dir / "b.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(read_file((dir / "b.json").string()));
  EXPECT_EQ(report["summary"]["stop_reason"], "plateau");
  EXPECT_EQ(report["summary"]["steps"], 6);
  testing::remove_tree(dir);
}

TEST(Engine, ResumeRejectsAnotherWorkloadsState) {
  auto dir = testing::fresh_dir("resume_other");
  RunConfig c = tiny("fashion-mlp");
  c.max_steps = 2;
  c.save_state = (dir / "mlp.pt").string();
  Engine().run(c);
  RunConfig other = tiny("fashion-cnn");
  other.resume_state = c.save_state;
  try {
    Engine().run(other);
    FAIL() << "resumed a fashion-mlp state into fashion-cnn";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("holds a 'fashion-mlp' run, not 'fashion-cnn'"), std::string::npos) << e.what();
  }
  // Another optimizer's state does not fit this one's.
  RunConfig adamw = c;
  adamw.optimizer = "adamw";
  adamw.save_state.clear();
  c.optimizer = "sgd";
  c.save_state = (dir / "sgd.pt").string();
  Engine().run(c);
  adamw.resume_state = c.save_state;
  EXPECT_NE(testing::error_of([&] { Engine().run(adamw); }).find("[config] resume_state: '" + c.save_state + "' holds an sgd optimizer's state, not adamw's"),
            std::string::npos);
  // Its position in the epoch counts micro-batches of the saved run's batch size and accumulation.
  RunConfig accumulated = c;
  accumulated.resume_state = c.save_state;
  accumulated.save_state.clear();
  accumulated.grad_accum_steps = 2;
  EXPECT_NE(testing::error_of([&] { Engine().run(accumulated); })
                .find("' was saved with grad_accum_steps 1, this run has 2: its position in the epoch would point at other examples"),
            std::string::npos);
  // Its evaluations were against its target: another one would report a target it never reached.
  RunConfig harder = c;
  harder.resume_state = c.save_state;
  harder.save_state.clear();
  harder.target = 0.95;
  EXPECT_NE(testing::error_of([&] { Engine().run(harder); }).find("' was saved with target 0.88, this run has 0.95: its evaluations (the best metric"),
            std::string::npos)
      << testing::error_of([&] { Engine().run(harder); });
  testing::remove_tree(dir);
}

TEST(Engine, Bf16AutocastRunsOnCpu) {
  {
    AutocastScope scope(c10::kCPU, true, torch::kBFloat16);
    auto y = torch::nn::Linear(4, 4)->forward(torch::randn({2, 4}));
    EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::nn::Linear(4, 4)->forward(torch::randn({2, 4})).scalar_type(), torch::kFloat);
  RunConfig c = tiny("fashion-cnn");
  c.max_steps = 4;
  c.amp = "bf16";
  c.channels_last = true;
  RunReport r = Engine().run(c);
  EXPECT_EQ(r.outcome, Outcome::Ok);
  for (double l : losses(r)) EXPECT_TRUE(std::isfinite(l));
}

// A user's TorchScript model on data saved from Python trains like a built-in workload, in fp32
// and under bf16 autocast; an mse regressor is judged by its validation loss.
TEST(Engine, TrainsAScriptedModelToAFallingLoss) {
  for (const char* amp : {"off", "bf16"}) {
    RunConfig c = tiny("torchscript");
    c.model_file = testing::fixture("model.pt");
    c.data_file = testing::fixture("data.pt");
    c.size = "full";
    c.epochs = 1;
    c.log_every_steps = 4;
    c.amp = amp;
    c.channels_last = std::string(amp) == "bf16";
    RunReport r = Engine().run(c);
    ASSERT_EQ(r.outcome, Outcome::Ok) << amp << ": " << r.outcome_reason;
    EXPECT_EQ(r.summary.steps, 33) << amp;  // 2160 training examples / 64, the last partial batch dropped
    EXPECT_LT(losses(r).back(), 0.6 * losses(r).front()) << amp;
    EXPECT_GT(r.summary.final_metric, 0.6) << amp;  // accuracy on the 240 held-out images; chance is 0.1
  }
  RunConfig c = tiny("torchscript");
  c.model_file = testing::fixture("regressor.pt");
  c.data_file = testing::fixture("regression.pt");
  c.model_loss = "mse";
  c.size = "full";
  RunReport r = Engine().run(c);
  ASSERT_EQ(r.outcome, Outcome::Ok) << r.outcome_reason;
  EXPECT_EQ(r.summary.metric_name, "val_loss");
  ASSERT_GE(r.metric_curve.size(), 2u);
  EXPECT_LT(r.metric_curve.back().value, r.metric_curve.front().value);
}

TEST(Engine, NanLossIsRecordedAsDivergence) {
  RunConfig c = tiny("fashion-mlp");
  c.inject_fault = "nan";
  c.inject_fault_at_step = 3;
  RunReport r = Engine().run(c);
  EXPECT_EQ(r.outcome, Outcome::Diverged);
  EXPECT_EQ(r.summary.steps, 3);
  EXPECT_NE(r.outcome_reason.find("at step 3"), std::string::npos) << r.outcome_reason;
}

TEST(Engine, ANanLossAfterTheLastLogPointIsDivergenceToo) {
  RunConfig c = tiny("fashion-mlp");
  c.log_every_steps = 10;
  c.max_steps = 13;
  c.inject_fault = "nan";
  c.inject_fault_at_step = 12;
  RunReport r = Engine().run(c);
  EXPECT_EQ(r.outcome, Outcome::Diverged);
  EXPECT_EQ(r.summary.stop_reason, "diverged");
  EXPECT_NE(r.outcome_reason.find("at step 13"), std::string::npos) << r.outcome_reason;
  ASSERT_EQ(r.loss_curve.size(), 2u);  // steps 1-10, then the last three
  EXPECT_TRUE(std::isfinite(r.loss_curve.front().value));
}

// Label smoothing changes the training loss (a smoothed target never reaches zero loss: the
// first step's loss, same weights and batch, differs) while evaluation stays plain accuracy.
TEST(Engine, LabelSmoothingChangesOnlyTheTrainingLoss) {
  RunConfig c = tiny("fashion-mlp");
  c.deterministic = true;
  c.max_steps = 3;
  RunReport plain = Engine().run(c);
  c.label_smoothing = 0.3;
  RunReport smoothed = Engine().run(c);
  ASSERT_EQ(plain.outcome, Outcome::Ok);
  ASSERT_EQ(smoothed.outcome, Outcome::Ok);
  EXPECT_NE(losses(plain).front(), losses(smoothed).front());
  EXPECT_EQ(smoothed.config["label_smoothing"], 0.3);
  EXPECT_EQ(smoothed.metric_curve.size(), 1u);  // the final evaluation, on accuracy as before
  EXPECT_GT(smoothed.summary.final_metric, 0.1);
}

TEST(Engine, LrScalingFollowsTheEffectiveBatch) {
  const Workload& w = workload_or_throw("fashion-mlp");
  RunConfig c;
  c.batch_size = 256;
  c.lr_scaling = "linear";
  EXPECT_DOUBLE_EQ(resolve_config(c, w).lr, w.recipe.lr * 4);
  c.lr_scaling = "sqrt";
  EXPECT_DOUBLE_EQ(resolve_config(c, w).lr, w.recipe.lr * 2);
  c.lr = 0.5;  // an explicit LR is taken as given
  EXPECT_DOUBLE_EQ(resolve_config(c, w).lr, 0.5);
}

TEST(Engine, BadCombinationsNameTheFieldAndFix) {
  RunConfig c = tiny("fashion-mlp");
  c.channels_last = true;
  EXPECT_THROW(Engine().run(c), UserError);
  c = tiny("fashion-mlp");
  c.batch_size = 4096;
  try {
    Engine().run(c);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("batch_size: 4096"), std::string::npos) << e.what();
  }
  c = tiny("fashion-mlp");
  c.device = "cuda";
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(Engine().run(c), UserError);  // a clear error, not a crash
  }
}

}  // namespace
}  // namespace dyno
