#include "dyno/suite/training_run.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "dyno/reports/bottleneck_verdict.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/activation_checkpoint.h"
#include "dyno/suite/autocast_scope.h"
#include "dyno/suite/data_loader.h"
#include "dyno/suite/device_backend.h"
#include "dyno/suite/distributed/distributed_context.h"
#include "dyno/suite/environment.h"
#include "dyno/suite/machine_peak.h"
#include "dyno/suite/nvtx_range.h"
#include "dyno/suite/phase_range.h"
#include "dyno/suite/phase_clock.h"
#include "dyno/suite/process_settings.h"
#include "dyno/suite/step_profiler.h"
#include "dyno/suite/training_state.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
};

torch::Tensor forward_segments(SegmentedModel& model, torch::Tensor x, bool checkpointing) {
  const auto& segments = model->segments();
  for (size_t i = 0; i < segments.size(); ++i) {
    auto segment = segments[i];
    // The last segment's output is needed for the loss anyway: checkpointing it saves nothing.
    x = (checkpointing && i + 1 < segments.size()) ? checkpointed_forward(segment, x) : segment->forward(x);
  }
  return x;
}

// The workload's loss, or cross-entropy over the output's last dimension (in fp32 under autocast).
torch::Tensor loss_of(const Workload& workload, const torch::Tensor& output, const torch::Tensor& target, double label_smoothing) {
  if (workload.loss) return workload.loss(output, target);
  return torch::nn::functional::cross_entropy(output.reshape({-1, output.size(-1)}).to(torch::kFloat), target.reshape({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
}

// Whether the workload's parts fit, tried before training on three examples of each split (a C++
// workload is code dyno cannot read): the source counts items, the model's forward runs on them,
// the loss reduces to one number, and the targets are integer class ids below the outputs' last
// dimension where something reads them so: the default cross-entropy (both splits; -100, its
// ignore_index, allowed) and the accuracy metric (the evaluation split: a loss of the workload's
// own may train on soft targets). A misfit is the user's, named with its shapes and exit 2, not an
// error deep in a step. (TorchScript models get a file-level check first.)
void check_fit(SegmentedModel& model, const Workload& workload, const WorkloadData& data, const c10::Device& device) {
  const std::string name = "'" + workload.name + "'";
  const bool training = model->is_training();
  model->eval();  // batch norm's running statistics and dropout's draws stay untouched
  torch::NoGradGuard no_grad;
  for (const auto& [split, source] : {std::pair<const char*, const ExampleSource*>{"training", data.train.get()}, {"evaluation", data.eval.get()}}) {
    if (source->size() == 0) continue;
    const Batch batch = in_workload_code(name + ": the " + std::string(split) + " source's make_batch",
                                         [&] {
                                           std::vector<int64_t> three(static_cast<size_t>(std::min<int64_t>(3, source->size())));
                                           std::iota(three.begin(), three.end(), int64_t{0});
                                           return source->make_batch(three);
                                         });
    const std::string where = name + ": its " + split + " examples (inputs " + shape_text(batch.input) + ", targets " + shape_text(batch.target) + ")";
    if (batch.items <= 0)
      throw UserError("workload", name + ": the " + std::string(split) + " source's batches count " + std::to_string(batch.items) +
                                      " items; set Batch::items to what throughput counts (the examples, or tokens, a batch holds)");
    const torch::Tensor target = batch.target.to(device);
    const torch::Tensor output = in_workload_code(where + ": the model's forward on them", [&] { return model->forward(batch.input.to(device)); });
    if (!workload.loss || (workload.metric_name == "accuracy" && std::string(split) == "evaluation")) {
      const int64_t classes = output.dim() > 0 ? output.size(-1) : 1;
      if (batch.target.is_floating_point())
        throw UserError("workload", where + ": the targets are floating point; " +
                                        (workload.loss ? "metric accuracy compares the output's argmax with integer class ids (use metric_name val_loss for regression)"
                                                       : "the default cross-entropy needs integer class ids from 0 to " + std::to_string(classes - 1)));
      const torch::Tensor ids = workload.loss ? target : target.masked_select(target.ne(-100));  // cross-entropy's ignore_index
      const int64_t low = ids.numel() ? ids.min().item<int64_t>() : 0, high = ids.numel() ? ids.max().item<int64_t>() : 0;
      if (low < 0 || high >= classes)
        throw UserError("workload", where + ": class ids range from " + std::to_string(low) + " to " + std::to_string(high) + "; the model's " +
                                        std::to_string(classes) + " outputs take 0.." + std::to_string(classes - 1));
    }
    const torch::Tensor loss = in_workload_code(where + ": the loss", [&] { return loss_of(workload, output, target, 0.0); });
    if (loss.numel() != 1)
      throw UserError("workload", where + ": the loss has shape " + shape_text(loss) + "; it must reduce to one number (a mean over the batch)");
  }
  model->train(training);
}

torch::Tensor to_device(const torch::Tensor& t, const c10::Device& device, bool non_blocking, bool channels_last) {
  auto out = t.to(device, non_blocking);
  if (channels_last && out.dim() == 4) out = out.contiguous(at::MemoryFormat::ChannelsLast);
  return out;
}

c10::ScalarType autocast_dtype(const RunConfig& config) { return config.amp == "fp16" ? torch::kHalf : torch::kBFloat16; }

// Evaluation runs without autograd (technique 16) and in eval mode (no dropout, BN running stats).
// With several ranks, each evaluates its share of the set with rank 0's buffers, and the sums are
// the ranks' together: every rank has the metric of the whole set.
EvalResult evaluate(SegmentedModel& model, const Workload& workload, const std::shared_ptr<const ExampleSource>& source,
                    const RunConfig& config, const c10::Device& device, DistributedContext* distributed) {
  NvtxRange range("eval");
  torch::NoGradGuard no_grad;
  model->eval();
  LoaderOptions options;
  options.batch_size = config.eval_batch_size > 0 ? config.eval_batch_size : std::max<int64_t>(config.batch_size, 500);
  options.shuffle = false;
  options.drop_last = false;
  options.source_name = "'" + workload.name + "': the evaluation source";
  if (distributed) {
    distributed->broadcast_buffers(*model);
    options.rank = distributed->rank();
    options.world_size = distributed->world_size();
  }
  DataLoader loader(source, options);
  loader.start_epoch(0);
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto ignored = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));  // targets of -100
  int64_t items = 0, predictions = 0;  // examples (the loss's mean is per example), predicted targets
  while (auto batch = loader.next()) {
    auto input = to_device(batch->input, device, false, config.channels_last);
    auto target = batch->target.to(device);
    torch::Tensor logits;
    {
      AutocastScope scope(device.type(), config.amp != "off", autocast_dtype(config));
      logits = model->forward(input);
    }
    if (workload.loss) {  // a mean over the batch's examples, weighted back to a sum
      loss_sum += workload.loss(logits, target).to(torch::kDouble) * static_cast<double>(target.size(0));
      items += target.size(0);
      if (workload.metric_name == "accuracy") {
        correct += logits.argmax(-1).reshape({-1}).eq(target.reshape({-1})).sum();
        predictions += target.numel();
      }
      continue;
    }
    auto flat_logits = logits.reshape({-1, logits.size(-1)}).to(torch::kFloat);
    auto flat_target = target.reshape({-1});
    loss_sum += torch::nn::functional::cross_entropy(flat_logits, flat_target,
                                                     torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kDouble);
    // A target of -100 (cross-entropy's ignore index, padding) is no prediction: the sum above leaves it out, and so do the counts.
    const auto counted = flat_target.ne(-100);
    correct += flat_logits.argmax(-1).eq(flat_target).logical_and(counted).sum();
    ignored += counted.logical_not().sum();
    items += flat_target.numel();
    predictions += flat_target.numel();
  }
  model->train();
  const auto not_counted = ignored.item<int64_t>();
  std::vector<double> sums = {loss_sum.item<double>(), static_cast<double>(correct.item<int64_t>()), static_cast<double>(items - not_counted),
                              static_cast<double>(predictions - not_counted)};
  if (distributed) sums = distributed->sum(sums);
  EvalResult result;  // no evaluation data: no figure (NaN, null in the report), never a target reached
  const double nan = std::numeric_limits<double>::quiet_NaN();
  result.loss = sums[2] > 0 ? sums[0] / sums[2] : nan;
  result.accuracy = sums[3] > 0 ? sums[1] / sums[3] : nan;
  return result;
}

[[noreturn]] void fire_fault(const std::string& fault) {
  std::fflush(nullptr);
  if (fault == "crash") std::raise(SIGSEGV);
  if (fault == "abort") std::abort();
  if (fault == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  if (fault == "oom") TORCH_CHECK_WITH(OutOfMemoryError, false, "injected out-of-memory (inject_fault=oom, a testing option)");
  TORCH_INTERNAL_ASSERT(false, "this is a bug: unknown fault ", fault);
}

StoppingCriteria::Parameters stopping_parameters(const RunConfig& config, const Workload& workload, int64_t ranks) {
  StoppingCriteria::Parameters p;
  p.max_relative_ci = config.measure_rel_ci;
  p.stop_below = config.measure_stop_below;
  p.ranks = static_cast<double>(ranks);
  p.target = config.target > 0 ? config.target : workload.target;
  p.higher_is_better = workload.higher_is_better;
  p.stop_at_target = config.stop_at_target;
  p.plateau_patience = config.plateau_patience;
  return p;
}

}  // namespace

TrainingRun::TrainingRun(const Workload& workload, const RunConfig& config, const std::optional<DistributedEnv>& distributed_env,
                         EngineOptions options, RunReport& report, bool gloo_without_shared_memory)
    : workload_(workload),
      config_(config),
      options_(options),
      report_(report),
      // Before any CUDA work: each rank on its own GPU (LOCAL_RANK's), as torchrun users do with set_device.
      backend_(make_device_backend(config, distributed_env ? distributed_env->local_rank : 0)),
      device_(backend_->device()),
      stopping_(stopping_parameters(config, workload, distributed_env ? distributed_env->world_size : 1)) {
  apply_host_allocator(config_.host_allocator);
  if (distributed_env && distributed_env->world_size > 1) {
    distributed_ = std::make_unique<DistributedContext>(*distributed_env, config_, device_, gloo_without_shared_memory);
    config_.ddp.backend = distributed_->backend();
  }
  const ThreadChoice threads = choose_threads(config_.threads, distributed_ ? distributed_->local_world_size() : 1, usable_cores(),
                                             std::getenv("OMP_NUM_THREADS"));
  if (threads.threads > 0) torch::set_num_threads(static_cast<int>(threads.threads));
  if (!threads.warning.empty() && (!distributed_env || distributed_env->local_rank == 0))
    std::fprintf(stderr, "[train] warning: %s\n", threads.warning.c_str());
  if (config_.flush_denormal) apply_flush_denormal();
  backend_->apply_flags(config_);
  torch::manual_seed(config_.seed);

  report_.config = to_json(config_);
  report_.environment = collect_environment(*backend_);
  report_.summary.metric_name = workload_.metric_name;
  report_.summary.higher_is_better = workload_.higher_is_better;
  report_.summary.target = config_.target > 0 ? config_.target : workload_.target;
  report_.summary.throughput_unit = workload_.throughput_unit;

  data_ = in_workload_code("'" + workload_.name + "': load_data(\"" + config_.size + "\")", [&] { return workload_.load_data(config_.size); });
  if (!data_.train || !data_.eval || data_.train->size() == 0)
    throw UserError("workload", "'" + workload_.name + "': load_data(\"" + config_.size + "\") returned " +
                                    (!data_.train ? "no training source" : !data_.eval ? "no evaluation source" : "an empty training set") +
                                    "; a WorkloadData holds both, train with examples");
  model_ = in_workload_code("'" + workload_.name + "': build_model()", workload_.build_model);
  if (config_.checkpointing && model_->segments().size() < 2 && (!distributed_ || distributed_->rank() == 0))
    std::fprintf(stderr, "[train] warning: checkpointing=true changes nothing here: the model is one segment (for a TorchScript model, its "
                         "forward is not a chain of its children)\n");
  model_->to(device_);
  check_fit(model_, workload_, data_, device_);
  if (distributed_) distributed_->broadcast_module(*model_);
  if (config_.channels_last)
    for (auto& p : model_->parameters())
      if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  parameters_ = trainable_parameters(*model_);
  if (parameters_.empty())
    throw UserError("workload", "'" + workload_.name + "': the model has no trainable parameters (every one frozen, or none): nothing to train");
  if (distributed_) distributed_->attach_reducer(parameters_);
  const Recipe& recipe = workload_.recipe;
  optimizer_.emplace(parameters_, OptimizerSettings{config_.optimizer, config_.optimizer_impl, config_.lr, recipe.momentum, recipe.weight_decay});

  LoaderOptions loader_options;
  loader_options.batch_size = config_.batch_size;
  loader_options.num_workers = config_.num_workers;
  loader_options.prefetch = config_.prefetch;
  loader_options.pin_memory = config_.pin_memory;
  loader_options.seed = static_cast<uint64_t>(config_.seed);
  loader_options.build_delay_ms = config_.data_delay_ms;
  loader_options.source_name = "'" + workload_.name + "': the training source";
  if (distributed_) {
    loader_options.rank = distributed_->rank();
    loader_options.world_size = distributed_->world_size();
  }
  loader_ = std::make_unique<DataLoader>(data_.train, loader_options);
  steps_per_epoch_ = loader_->batches_per_epoch() / config_.grad_accum_steps;
  if (steps_per_epoch_ < 1) {
    const int64_t ranks = distributed_ ? distributed_->world_size() : 1, examples = static_cast<int64_t>(data_.train->size());
    throw UserError("config", "batch_size: " + std::to_string(config_.batch_size) + " x grad_accum_steps " + std::to_string(config_.grad_accum_steps) +
                                  " is larger than " + (ranks > 1 ? "each rank's share of " : "") + "the " + config_.size + " training set (" +
                                  std::to_string(examples) + " examples" +
                                  (ranks > 1 ? " over " + std::to_string(ranks) + " ranks: " + std::to_string(examples / ranks) + " each" : "") +
                                  "); use a smaller batch or a larger size");
  }
  const int64_t total_steps = config_.epochs * steps_per_epoch_;
  planned_steps_ = config_.max_steps > 0 ? std::min(config_.max_steps, total_steps) : total_steps;
  schedule_ = LrSchedule{config_.schedule, config_.lr, total_steps, recipe.warmup_fraction};
  scaler_ = GradScaler({}, device_);

  if (!config_.resume_state.empty()) {
    TrainingProgress p = load_training_state(config_.resume_state, *model_, optimizer_->state(), workload_.name, config_.optimizer, device_);
    // Its position in the epoch counts micro-batches of one shuffle, sharded over its ranks.
    if (!p.data_position.empty()) {
      const nlohmann::json saved = nlohmann::json::parse(p.data_position, nullptr, false), here = nlohmann::json::parse(data_position());
      for (const auto& [knob, value] : here.items())
        if (saved.is_object() && saved.contains(knob) && saved[knob] != value)
          throw UserError("config", "resume_state: '" + config_.resume_state + "' was saved with " + knob + " " + saved[knob].dump() + ", this run has " +
                                        value.dump() + (knob == "target" ? ": its evaluations (the best metric, the plateau count, when the target was reached) were against that one"
                                                                         : ": its position in the epoch would point at other examples") +
                                        "; resume with the same " + knob);
    }
    optimizer_->after_load();
    step_ = p.step;
    epoch_ = p.epoch;
    batch_in_epoch_ = p.batch_in_epoch;
    elapsed_before_s_ = p.elapsed_s;
    if (p.scaler_scale > 0) scaler_.restore(p.scaler_scale, p.scaler_growth_tracker);
    if (std::isfinite(p.best_metric)) stopping_.restore(p.best_metric, p.evaluations_without_improvement);
    if (std::isfinite(p.time_to_target_s)) report_.summary.time_to_target_s = p.time_to_target_s;
    stop_reason_ = stopping_.standing(report_.summary.time_to_target_s.has_value());  // as the uninterrupted run stopped there
  }
  first_step_ = step_;
  measure_from_ = config_.warmup_steps;
  if (!options_.profile.trace_path.empty()) {
    ProfileOptions profile = options_.profile;
    if (distributed_ && distributed_->rank() > 0) {  // every rank is profiled alike; rank r > 0 beside rank 0's trace
      const auto dot = profile.trace_path.rfind(".json");
      profile.trace_path.insert(dot == std::string::npos ? profile.trace_path.size() : dot, ".rank" + std::to_string(distributed_->rank()));
    }
    profiler_ = std::make_unique<StepProfiler>(profile, device_);
    measure_from_ += profile.steps;
  }
  loss_sum_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device_));
  backend_->reset_peak_memory();
  phases_ = backend_->make_phase_clock();
  start_ = window_start_ = Clock::now();
}

TrainingRun::~TrainingRun() = default;

double TrainingRun::elapsed_s() const { return elapsed_before_s_ + seconds_since(start_); }

void TrainingRun::train() {
  NvtxRange run_range("run");
  try {
    for (; epoch_ < config_.epochs && stop_reason_.empty(); ++epoch_, batch_in_epoch_ = 0) {
      NvtxRange epoch_range("epoch");
      loader_->start_epoch(epoch_, batch_in_epoch_);
      int64_t steps_left = steps_per_epoch_ - batch_in_epoch_ / config_.grad_accum_steps;
      for (; steps_left > 0 && stop_reason_.empty(); --steps_left) {
        if (!(stop_reason_ = stop_before_step()).empty()) break;
        step();
        if (profiler_ && profiler_->running() && step_ - first_step_ >= measure_from_) stop_profile();
        if (step_ % config_.log_every_steps == 0 && !(stop_reason_ = log_point()).empty()) break;
        if (distributed_ && config_.time_limit_s > 0) {
          const int64_t done = step_ - first_step_;
          if ((done & (done - 1)) == 0 || step_ % config_.log_every_steps == 0) plan_time_limit();  // steps 1, 2, 4... and log points
        }
        // (An evaluation at this step comes before the state saved at it, which then holds it.)
        if (config_.eval_every_steps > 0 && step_ % config_.eval_every_steps == 0) stop_reason_ = evaluation();
        if (config_.save_every_steps > 0 && step_ % config_.save_every_steps == 0) {
          // Saving is not training throughput: the window pauses, and goes on on an idle device and
          // on every rank once rank 0 has written the state (the others would wait for it in their
          // next collective).
          const auto paused = pause_window();
          save_state(epoch_, batch_in_epoch_);
          if (distributed_) distributed_->any(false);
          backend_->synchronize();
          window_start_ += Clock::now() - paused;
        }
      }
      // Without eval_every_steps, each completed epoch ends with an evaluation.
      if (stop_reason_.empty() && steps_left == 0 && config_.eval_every_steps == 0 && !(stop_reason_ = evaluation()).empty()) {
        ++epoch_;  // the epoch is complete: a saved state points at the next one
        batch_in_epoch_ = 0;
      }
      if (!stop_reason_.empty()) break;
    }
    if (stop_reason_.empty()) stop_reason_ = "epochs";
    // The steps after the last log point: their loss is on the curve too, and a NaN there diverged
    // the run as much as one at a log point.
    if (loss_count_ > 0)
      if (std::string verdict = loss_point(); !verdict.empty()) stop_reason_ = verdict;
    auto last_step_evaluated = [&] { return !report_.metric_curve.empty() && report_.metric_curve.back().step == step_; };
    // A stop decided at a log point comes before the evaluation scheduled at its step (every
    // eval_every_steps, else at the epoch's end): a run that reports its metric or keeps its state
    // makes it, as an uninterrupted run would have, and the state saved after it holds it (a
    // resumed run takes up its verdict: StoppingCriteria::standing).
    const bool epoch_end = batch_in_epoch_ >= steps_per_epoch_ * config_.grad_accum_steps;
    if (report_.outcome == Outcome::Ok && (config_.final_eval || !config_.save_state.empty()) && step_ > first_step_ && !last_step_evaluated() &&
        (config_.eval_every_steps > 0 ? step_ % config_.eval_every_steps == 0 : epoch_end)) {
      evaluation();
      if (config_.eval_every_steps == 0) ++epoch_, batch_in_epoch_ = 0;  // the epoch is complete
    }
    // The trained model's metric: after the last epoch unless its last step was evaluated
    // (eval_every_steps off the epochs' end), after any other end only when nothing was evaluated.
    if (report_.outcome == Outcome::Ok && config_.final_eval && (!last_metric_ || (stop_reason_ == "epochs" && !last_step_evaluated()))) {
      // One off the schedule (a stop before any evaluation) is the report's, not the training's: the
      // state goes before it, so that a resumed run evaluates where an uninterrupted one would.
      if (stop_reason_ != "epochs" || step_ == first_step_) save_end_state();  // (a resumed run of no steps: its state as it was)
      evaluation();
    }
  } catch (const c10::OutOfMemoryError& e) {
    report_.outcome = Outcome::Oom;
    report_.outcome_reason = e.what_without_backtrace();
    stop_reason_ = "oom";
    if (distributed_) {
      // The other ranks wait in a collective this rank will never join: abort this rank's part, and
      // let it report the job (the launcher stops the others when it exits, else ddp.timeout_s does).
      report_.outcome_reason = "rank " + std::to_string(distributed_->rank()) + ": " + report_.outcome_reason;
      distributed_->abort();
    }
  }
  if (options_.progress) std::fprintf(stderr, "\n");
  backend_->synchronize();
  if (window_deferred_ && window_steps_ > 0 && report_.outcome == Outcome::Ok) close_window();  // a stop before the log point it waited for
  phases_->collect();
  if (profiler_ && profiler_->running() && report_.outcome == Outcome::Ok) stop_profile();  // the run ended inside the profiled steps
  if (profiler_ && !profile_ && report_.outcome == Outcome::Ok)
    std::fprintf(stderr, "[train] warning: the run ended before its profiled steps (warm-up %lld, then %lld profiled); no profile written\n",
                 static_cast<long long>(config_.warmup_steps), static_cast<long long>(options_.profile.steps));
  if (report_.outcome == Outcome::Ok && !end_state_saved_) save_end_state();
}

void TrainingRun::save_end_state() {
  // The position as it stands, as a periodic save's (an epoch's evaluation, once made, has moved
  // it to the next epoch's start).
  save_state(epoch_, batch_in_epoch_);
  end_state_saved_ = true;
}

std::string TrainingRun::stop_before_step() {
  if (config_.max_steps > 0 && step_ >= config_.max_steps) return "max_steps";
  // Time is not the same on every rank: with several ranks the decision is collective, at log
  // points, and between them the step plan_time_limit last planned.
  if (config_.time_limit_s > 0 && !distributed_ && elapsed_s() >= config_.time_limit_s) return "time_limit";
  if (time_limit_step_ > 0 && step_ >= time_limit_step_) {  // the planned check: together, on rank 0's clock
    if (distributed_->any(distributed_->rank() == 0 && elapsed_s() >= config_.time_limit_s)) return "time_limit";
    plan_time_limit();
  }
  return "";
}

void TrainingRun::step() {
  const int64_t index = step_ - first_step_;
  const bool profiled = profiler_ && index >= config_.warmup_steps && index < measure_from_;
  if (profiled && !profiler_->running()) {
    backend_->synchronize();  // the warm-up's queued work is not the profiled steps'
    profiler_->start();
  }
  PhaseRange step_range("step", profiled);
  const auto step_start = Clock::now();
  const bool measuring = index >= measure_from_;
  const bool use_scaler = config_.amp == "fp16";
  const bool fault_here = config_.inject_fault_rank < 0 || config_.inject_fault_rank == (distributed_ ? distributed_->rank() : 0);
  PhaseClock& phases = *phases_;
  phases.set_recording(measuring);
  optimizer_->set_lr(schedule_.at(step_));
  optimizer_->zero_grad(config_.set_to_none);
  phases.start();  // after zero_grad: its zero-fill is not data wait
  int64_t step_items = 0;
  for (int64_t micro = 0; micro < config_.grad_accum_steps; ++micro) {
    std::optional<Batch> batch;
    {
      PhaseRange r("data_wait", profiled);
      batch = loader_->next();
      TORCH_INTERNAL_ASSERT(batch.has_value(), "this is a bug: the loader ran out of batches mid-step");
      phases.mark("data_wait");
    }
    torch::Tensor input, target;
    {
      PhaseRange r("h2d", profiled);
      input = to_device(batch->input, device_, config_.pin_memory, config_.channels_last);
      target = batch->target.to(device_, config_.pin_memory);
      phases.mark("h2d");
    }
    // With several ranks, gradients are all-reduced on the last micro-batch of the step only
    // (the others accumulate locally, as DDP's no_sync()).
    const bool synchronise = distributed_ && micro + 1 == config_.grad_accum_steps;
    if (synchronise) {
      if (config_.ddp.broadcast_buffers) distributed_->broadcast_buffers(*model_);
      distributed_->before_forward();
    }
    torch::Tensor loss;
    {
      PhaseRange r("forward", profiled);
      AutocastScope scope(device_.type(), config_.amp != "off", autocast_dtype(config_));
      loss = loss_of(workload_, forward_segments(model_, input, config_.checkpointing), target, config_.label_smoothing);
      if (config_.grad_accum_steps > 1) loss = loss / static_cast<double>(config_.grad_accum_steps);
      if (config_.inject_fault == "nan" && fault_here && step_ + 1 >= config_.inject_fault_at_step) loss = loss * std::nan("");
      phases.mark("forward");
    }
    if (synchronise) distributed_->before_backward();
    {
      PhaseRange r("backward", profiled);
      auto backward = [&] { (use_scaler ? scaler_.scale_loss(loss) : loss).backward(); };
      if (synchronise && config_.ddp.overlap) run_collective(backward);  // the buckets' all-reduces run inside
      else backward();
      phases.mark("backward");
    }
    if (synchronise && config_.ddp.overlap && step_ == first_step_) refuse_unused_parameters();
    if (synchronise && !config_.ddp.overlap) {  // overlapped, the all-reduce runs inside backward
      PhaseRange r("all_reduce", profiled);
      distributed_->after_backward(parameters_);
      phases.mark("all_reduce");
    }
    loss_sum_ += loss.detach().to(torch::kFloat) * static_cast<double>(config_.grad_accum_steps);
    ++loss_count_;
    step_items += batch->items;
    ++batch_in_epoch_;
  }
  {
    PhaseRange r("optimizer", profiled);
    // The found-inf flag and the clipping factor stay on the device.
    torch::Tensor found_inf;
    if (use_scaler) found_inf = scaler_.unscale(parameters_);
    if (config_.clip_grad_norm > 0) clip_grad_norm_on_device(parameters_, config_.clip_grad_norm);
    optimizer_->step(found_inf);
    if (use_scaler) scaler_.update(found_inf);
    phases.mark("optimizer");
  }
  ++step_;
  if (config_.inject_fault != "none" && config_.inject_fault != "nan" && fault_here && step_ >= config_.inject_fault_at_step)
    fire_fault(config_.inject_fault);
  if (measuring) {
    ++measured_steps_;
    window_items_ += step_items;
    ++window_steps_;
  } else {
    // The first window starts on an idle device, not behind queued warm-up work.
    if (step_ - first_step_ == measure_from_) backend_->synchronize();
    window_start_ = Clock::now();
  }
  if (config_.slowdown_percent > 0) backend_->slow_down(seconds_since(step_start), config_.slowdown_percent / 100.0);
  if (profiled) {  // a profiled step's time includes its device work
    backend_->synchronize();
    profiled_wall_s_ += seconds_since(step_start);
    ++profiled_steps_;
  }
}

// The overlapping all-reduce reduces a bucket once every gradient in it has arrived: a trainable
// parameter without one after the first backward (the loss does not use it) would leave its bucket
// waiting, the ranks' weights apart, and LibTorch's error for the next step.
void TrainingRun::refuse_unused_parameters() {
  std::string unused;
  for (const auto& p : model_->named_parameters())
    if (p.value().requires_grad() && !p.value().grad().defined()) unused += (unused.empty() ? "" : ", ") + p.key();
  if (!unused.empty())
    throw UserError("ddp", "the loss does not use " + unused + " (no gradient after the first backward): with ddp.overlap=true every trainable "
                           "parameter needs one; freeze them (requires_grad false) or set ddp.overlap=false");
}

void TrainingRun::stop_profile() {
  profile_ = profiler_->stop(profiled_wall_s_, profiled_steps_);
  // Ranks finish writing their traces at different times: they start measuring together.
  if (distributed_) distributed_->any(false);
  // The first measurement window starts now, not before the trace was written.
  window_start_ = Clock::now();
  window_items_ = window_steps_ = 0;
}

// Data parallel: the step the time limit falls in, at the pace since the last plan, as rank 0 sees
// it; at that step every rank checks the limit together on rank 0's clock, and plans again (time
// is not the same on every rank, and the next log point may be far).
void TrainingRun::plan_time_limit() {
  // The pace since the last plan (a slow first step, as a device's set-up, does not count twice).
  const double now_s = elapsed_s(), spent_s = now_s - (planned_at_step_ > 0 ? planned_at_s_ : elapsed_before_s_);
  const int64_t done = step_ - (planned_at_step_ > 0 ? planned_at_step_ : first_step_);
  double planned = 0;
  if (distributed_->rank() == 0 && spent_s > 0 && done > 0)
    planned = static_cast<double>(step_) + std::max(1.0, std::floor((config_.time_limit_s - now_s) * static_cast<double>(done) / spent_s));
  time_limit_step_ = static_cast<int64_t>(distributed_->sum({planned})[0]);
  planned_at_step_ = step_;
  planned_at_s_ = now_s;
}

std::string TrainingRun::log_point() {
  backend_->synchronize();
  phases_->collect();
  if (std::string verdict = loss_point(); !verdict.empty()) return verdict;
  if (distributed_ && distributed_->any(config_.time_limit_s > 0 && elapsed_s() >= config_.time_limit_s)) return "time_limit";
  // A resumed run's first window, of under half a log interval when its warm-up ends between log
  // points, goes on to the next log point when one is planned (and is closed when the run ends
  // first): the figures count every window alike.
  const bool measured = step_ - first_step_ > measure_from_ && window_items_ > 0;
  window_deferred_ = measured && first_step_ > 0 && report_.throughput_windows.empty() && window_steps_ * 2 < config_.log_every_steps &&
                     step_ + config_.log_every_steps <= planned_steps_;
  if (measured && !window_deferred_) {
    close_window();
    std::string verdict = stopping_.after_window(report_.throughput_windows);
    if (distributed_) {  // each rank judges its own windows; any rank's verdict stops every rank
      const bool stable = distributed_->any(verdict == "stable");
      const bool outpaced = distributed_->any(verdict == "outpaced");
      verdict = stable ? "stable" : outpaced ? "outpaced" : "";
    }
    if (!verdict.empty()) return verdict;
  }
  if (options_.progress) {
    const double step_s = (elapsed_s() - elapsed_before_s_ - eval_time_s_) / static_cast<double>(std::max<int64_t>(step_ - first_step_, 1));
    std::fprintf(stderr, "\r[%s] epoch %lld/%lld step %lld/%lld loss %.4f %s/s %.0f ETA %s   ", workload_.name.c_str(),
                 static_cast<long long>(epoch_ + 1), static_cast<long long>(config_.epochs), static_cast<long long>(step_),
                 static_cast<long long>(planned_steps_), report_.loss_curve.back().value, workload_.throughput_unit.c_str(),
                 // (the job's, as the summary states it: this rank's window times the ranks)
                 report_.throughput_windows.empty() ? 0.0 : report_.throughput_windows.back() * static_cast<double>(distributed_ ? distributed_->world_size() : 1),
                 format_duration(step_s * static_cast<double>(planned_steps_ - step_)).c_str());
    std::fflush(stderr);
  }
  return "";
}

std::string TrainingRun::loss_point() {
  // The job's mean over the interval (every rank's share of the batch, not rank 0's alone), and
  // NaN on any rank is NaN here: the divergence check below needs no collective of its own.
  double loss_sum = loss_sum_.item<double>(), loss_count = static_cast<double>(loss_count_);
  if (distributed_) {
    const auto job = distributed_->sum({loss_sum, loss_count});
    loss_sum = job[0];
    loss_count = job[1];
  }
  const double mean_loss = loss_sum / std::max(loss_count, 1.0);
  loss_sum_.zero_();
  loss_count_ = 0;
  const double epoch_position = static_cast<double>(step_) / static_cast<double>(steps_per_epoch_);
  report_.loss_curve.push_back({step_, epoch_position, elapsed_s(), mean_loss});
  report_.lr_curve.push_back({step_, epoch_position, elapsed_s(), schedule_.at(step_ - 1)});  // the last step's rate (step() set it at step_ - 1)
  if (!std::isfinite(mean_loss)) {
    report_.outcome = Outcome::Diverged;
    report_.outcome_reason = "training loss became " + std::to_string(mean_loss) + " at step " + std::to_string(step_);
    return "diverged";
  }
  return "";
}

void TrainingRun::close_window() {
  report_.throughput_windows.push_back(static_cast<double>(window_items_) / seconds_since(window_start_));
  window_start_ = Clock::now();
  window_items_ = window_steps_ = 0;
}

Clock::time_point TrainingRun::pause_window() {
  backend_->synchronize();  // the steps queued before the pause are in the window they ran in
  return Clock::now();
}

std::string TrainingRun::evaluation() {
  const auto eval_start = pause_window();
  const EvalResult result = evaluate(model_, workload_, data_.eval, config_, device_, distributed_.get());
  eval_time_s_ += seconds_since(eval_start);
  const double metric = workload_.metric_name == "accuracy" ? result.accuracy : result.loss;
  last_metric_ = metric;
  const double at = elapsed_s();
  report_.metric_curve.push_back({step_, static_cast<double>(step_) / static_cast<double>(steps_per_epoch_), at, metric});
  bool reached = stopping_.reached(metric);
  std::string verdict = stopping_.after_evaluation(metric);
  if (distributed_) {  // every rank has the same metric; a stop is still decided together (one all-reduce), so none waits alone
    const auto any = distributed_->sum({reached ? 1.0 : 0.0, verdict == "target_reached" ? 1.0 : 0.0, verdict == "plateau" ? 1.0 : 0.0});
    reached = any[0] > 0;
    verdict = any[1] > 0 ? "target_reached" : any[2] > 0 ? "plateau" : "";
  }
  if (reached && !report_.summary.time_to_target_s) report_.summary.time_to_target_s = at;
  window_start_ += Clock::now() - eval_start;  // evaluation is not training throughput: the window goes on after it
  return verdict;
}

std::string TrainingRun::data_position() const {
  return nlohmann::json{{"batch_size", config_.batch_size}, {"grad_accum_steps", config_.grad_accum_steps},
                        {"ddp.world_size", distributed_ ? distributed_->world_size() : 1}, {"seed", config_.seed}, {"size", config_.size},
                        {"target", config_.target > 0 ? config_.target : workload_.target}}  // (the effective one, as stopping_parameters)
      .dump();
}

void TrainingRun::save_state(int64_t epoch, int64_t batch_in_epoch) {
  const bool primary = !distributed_ || distributed_->rank() == 0;  // one rank writes the state
  if (config_.save_state.empty() || !primary) return;
  optimizer_->before_save();
  save_training_state(config_.save_state, *model_, optimizer_->state(),
                      TrainingProgress{step_, epoch, batch_in_epoch, scaler_.scale(), scaler_.growth_tracker(), workload_.name, elapsed_s(), config_.optimizer,
                                       data_position(), stopping_.best_metric(), stopping_.evaluations_without_improvement(),
                                       report_.summary.time_to_target_s.value_or(std::nan(""))},
                      device_);
}

void TrainingRun::summarise() {
  auto& s = report_.summary;
  s.samples_per_second = median(report_.throughput_windows);
  if (!std::isfinite(s.samples_per_second)) s.samples_per_second = 0;  // no window: too few steps after warm-up
  s.samples_per_second_spread = report_.throughput_windows.size() >= 2 ? relative_iqr(report_.throughput_windows) : 0.0;
  if (!std::isfinite(s.samples_per_second_spread)) s.samples_per_second_spread = 0;
  s.final_metric = last_metric_ ? *last_metric_ : std::nan("");
  s.target_reached = s.time_to_target_s.has_value();
  s.peak_memory_bytes = backend_->peak_memory_bytes();
  s.peak_memory_kind = backend_->peak_memory_kind();
  s.host_huge_page_bytes = host_huge_page_bytes();
  s.steps = step_;
  if (config_.amp == "fp16") s.skipped_steps = scaler_.skipped_steps();  // this process's (a resumed run's own)
  s.epochs = static_cast<double>(step_) / static_cast<double>(steps_per_epoch_);
  s.wall_time_s = elapsed_s();
  s.stop_reason = stop_reason_;
  double phase_total = 0;
  for (const auto& [name, seconds] : phases_->totals_s()) phase_total += seconds;
  for (const auto& [name, seconds] : phases_->totals_s())
    report_.phases[name] = {seconds, 1000.0 * seconds / static_cast<double>(std::max<int64_t>(measured_steps_, 1)),
                            phase_total > 0 ? seconds / phase_total : 0.0};
  report_.phases["eval"] = {eval_time_s_, 0.0, 0.0};
  if (distributed_ && report_.outcome != Outcome::Oom) {
    // Rank 0 reports for the job: the sum of every rank's throughput, and each rank's figures.
    auto figures = distributed_->gather_json({{"rank", distributed_->rank()}, {"samples_per_second", s.samples_per_second},
                                                  {"wall_time_s", s.wall_time_s}, {"windows", report_.throughput_windows}},
                                                 "figures");
    report_.world_size = distributed_->world_size();
    if (!figures.empty()) {  // rank 0
      double total = 0;
      for (const auto& f : figures) {
        report_.ranks.push_back({f["rank"].get<int64_t>(), f["samples_per_second"].get<double>(), f["wall_time_s"].get<double>()});
        total += f["samples_per_second"].get<double>();
      }
      for (auto& w : report_.throughput_windows) w *= static_cast<double>(distributed_->world_size());  // per-window estimate for the job
      s.samples_per_second = total;
    }
  }
  if (profile_) {  // after every timed figure: the calibration takes about a second
    const MachinePeak peak = measure_machine_peak(*backend_, config_, profile_->convolution_flops > 0.5 * profile_->gemm_flops);
    profile_->peak_precision = peak.precision;
    profile_->peak_flops_per_s = peak.gemm_flops_per_s;
    profile_->op_call_s = peak.op_call_s;
    report_.profile = profile_;
  }
  report_.verdict = decide_bottleneck(report_.phases, report_.profile,
                                      {config_.device, workload_.convolutional && !config_.channels_last, config_.amp == "off",
                                       config_.ddp.overlap && config_.ddp.backend != "shm" && config_.ddp.comm_hook == "none"});
}

}  // namespace dyno
