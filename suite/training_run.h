// TrainingRun: one training run of a workload under a resolved RunConfig, in named parts.
//   set-up      (constructor) device, process group, data, model, optimizer, scaler, resume
//   step        one optimizer step: data wait, copy, forward, backward, optimizer; nothing in it
//               waits for the device (phase marks are stream events on CUDA)
//   log point   every log_every_steps: the one sync, mean loss, divergence, a throughput window,
//               the window stop rules, the progress line
//   evaluation  the metric, time to target and the evaluation stop rules
//   summary     the report's figures and the bottleneck verdict; with several ranks, rank 0's
//               report is the job's
//   profile     (--profile) LibTorch's profiler over the steps right after warm-up, which are then
//               not measured; the trace, the op table and the machine's peak go in the report
// The stop rules themselves are StoppingCriteria. Engine::run resolves the config and wraps this.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"
#include "dyno/suite/engine.h"
#include "dyno/suite/grad_scaler.h"
#include "dyno/suite/lr_schedule.h"
#include "dyno/suite/stopping_criteria.h"
#include "dyno/suite/training_optimizer.h"
#include "dyno/workloads/workload.h"

namespace dyno {

class DataLoader;
class DeviceBackend;
class DistributedContext;
class PhaseClock;
class StepProfiler;
struct DistributedEnv;
struct TrainingProgress;

class TrainingRun {
 public:
  // Sets everything up; the report receives the config (its ddp.backend the one that averages the
  // gradients: see DistributedContext's gloo_without_shared_memory) and environment at once. Throws
  // UserError for a config this workload cannot run; c10::OutOfMemoryError passes through.
  TrainingRun(const Workload& workload, const RunConfig& config, const std::optional<DistributedEnv>& distributed_env,
              EngineOptions options, RunReport& report, bool gloo_without_shared_memory = false);
  ~TrainingRun();
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  // Steps until a stop rule or the last epoch, evaluates at the end when nothing has, saves the
  // state when asked; out of memory here is the run's outcome, not an exception.
  void train();
  // Fills the report's summary, phases and (several ranks) per-rank figures.
  void summarise();

 private:
  using Clock = std::chrono::steady_clock;

  std::string stop_before_step();
  void step();
  std::string log_point();
  std::string loss_point();  // the job's mean loss since the last one, on the curves; "diverged" when it is not finite
  void plan_time_limit();
  std::string evaluation();
  // Where a pause of the throughput window (an evaluation, a save) starts, once the device is idle:
  // the window's start then moves on by the pause.
  Clock::time_point pause_window();
  void close_window();  // records the open window's rate and opens the next
  void save_state(int64_t epoch, int64_t batch_in_epoch);
  void save_end_state();  // the state at the run's end (once: before an off-schedule final evaluation, or after the run)
  // The settings that place a saved position in the data, and the target its evaluations were
  // against, as JSON (TrainingProgress::data_position).
  std::string data_position() const;
  void refuse_unused_parameters();
  void stop_profile();
  double elapsed_s() const;

  const Workload& workload_;
  RunConfig config_;  // as given, but for the backend the gradients are averaged with
  const EngineOptions options_;
  RunReport& report_;

  std::unique_ptr<DeviceBackend> backend_;
  c10::Device device_;
  std::unique_ptr<DistributedContext> distributed_;
  WorkloadData data_;
  SegmentedModel model_{nullptr};
  std::vector<torch::Tensor> parameters_;
  std::optional<TrainingOptimizer> optimizer_;
  std::unique_ptr<DataLoader> loader_;
  int64_t steps_per_epoch_ = 0;
  int64_t planned_steps_ = 0;
  LrSchedule schedule_;
  GradScaler scaler_;
  StoppingCriteria stopping_;
  std::unique_ptr<PhaseClock> phases_;
  std::unique_ptr<StepProfiler> profiler_;  // --profile

  // Where the run is.
  int64_t step_ = 0, first_step_ = 0, epoch_ = 0, batch_in_epoch_ = 0;
  // Steps before this (counted from first_step_) are not measured: warm-up, then profiled steps.
  int64_t measure_from_ = 0;
  double elapsed_before_s_ = 0;  // training time before a resume
  std::string stop_reason_;
  int64_t time_limit_step_ = 0;  // data parallel: the step all ranks check time_limit_s at (0: none planned)
  int64_t planned_at_step_ = 0;  // and the step and elapsed time of the plan that set it
  double planned_at_s_ = 0;

  // What it has measured.
  // The open throughput window: since when (moved on by what pauses it), its items and steps.
  Clock::time_point start_, window_start_;
  int64_t window_items_ = 0, window_steps_ = 0;
  bool window_deferred_ = false;  // a short first window went on past its log point
  int64_t measured_steps_ = 0;
  torch::Tensor loss_sum_;  // on the device: read at log points only
  int64_t loss_count_ = 0;
  double eval_time_s_ = 0;
  std::optional<double> last_metric_;
  bool end_state_saved_ = false;
  std::optional<ProfileSummary> profile_;
  double profiled_wall_s_ = 0;
  int64_t profiled_steps_ = 0;
};

}  // namespace dyno
