#include "suite/engine.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

#include <torch/torch.h>

#include "reports/quantity.h"
#include "reports/statistics.h"
#include "reports/user_error.h"
#include "suite/activation_checkpoint.h"
#include "suite/autocast_scope.h"
#include "suite/data_loader.h"
#include "suite/device_backend.h"
#include "suite/distributed/distributed_context.h"
#include "suite/environment.h"
#include "suite/grad_scaler.h"
#include "suite/lr_schedule.h"
#include "suite/nvtx_range.h"
#include "suite/phase_clock.h"
#include "suite/process_settings.h"
#include "suite/training_optimizer.h"
#include "suite/training_state.h"
#include "workloads/workload.h"

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

torch::Tensor loss_of(const torch::Tensor& logits, const torch::Tensor& target, double label_smoothing) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), target.reshape({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
}

torch::Tensor to_device(const torch::Tensor& t, const c10::Device& device, bool non_blocking, bool channels_last) {
  auto out = t.to(device, non_blocking);
  if (channels_last && out.dim() == 4) out = out.contiguous(at::MemoryFormat::ChannelsLast);
  return out;
}

// Evaluation runs without autograd (technique 16) and in eval mode (no dropout, BN running stats).
EvalResult evaluate(SegmentedModel& model, const std::shared_ptr<const ExampleSource>& source, const RunConfig& config,
                    const c10::Device& device) {
  NvtxRange range("eval");
  torch::NoGradGuard no_grad;
  model->eval();
  LoaderOptions options;
  options.batch_size = std::max<int64_t>(config.batch_size, 500);
  options.shuffle = false;
  options.drop_last = false;
  DataLoader loader(source, options);
  loader.start_epoch(0);
  const bool autocast = config.amp != "off";
  const auto dtype = config.amp == "fp16" ? torch::kHalf : torch::kBFloat16;
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  auto correct = torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(device));
  int64_t items = 0;
  while (auto batch = loader.next()) {
    auto input = to_device(batch->input, device, false, config.channels_last);
    auto target = batch->target.to(device);
    torch::Tensor logits;
    {
      AutocastScope scope(device.type(), autocast, dtype);
      logits = model->forward(input);
    }
    auto flat_logits = logits.reshape({-1, logits.size(-1)}).to(torch::kFloat);
    auto flat_target = target.reshape({-1});
    loss_sum += torch::nn::functional::cross_entropy(flat_logits, flat_target,
                                                     torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .to(torch::kDouble);
    correct += flat_logits.argmax(-1).eq(flat_target).sum();
    items += flat_target.numel();
  }
  model->train();
  EvalResult result;
  result.loss = loss_sum.item<double>() / static_cast<double>(std::max<int64_t>(items, 1));
  result.accuracy = static_cast<double>(correct.item<int64_t>()) / static_cast<double>(std::max<int64_t>(items, 1));
  return result;
}

TrainingOptimizer make_optimizer(const RunConfig& config, const Recipe& recipe, const std::vector<torch::Tensor>& parameters) {
  return TrainingOptimizer(parameters, {config.optimizer, config.optimizer_impl, config.lr, recipe.momentum, recipe.weight_decay});
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

void busy_wait(double seconds) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
  }
}

}  // namespace

RunConfig resolve_config(const RunConfig& input, const Workload& workload) {
  RunConfig config = input;
  const Recipe& recipe = workload.recipe;
  if (config.optimizer == "auto") config.optimizer = recipe.optimizer;
  if (config.schedule == "auto") config.schedule = recipe.schedule;
  if (config.epochs == 0) config.epochs = recipe.epochs;
  if (config.ddp.backend == "auto") config.ddp.backend = config.device == "cuda" ? "nccl" : "gloo";
  if (config.lr == 0) config.lr = scaled_lr(recipe.lr, config.lr_scaling, effective_batch_size(config), recipe.reference_batch_size);
  validate_combination(config);
  if (config.channels_last && !workload.convolutional)
    throw UserError("config", "channels_last: true applies to convolutional workloads; '" + workload.name + "' has no convolutions");
  return config;
}

RunReport Engine::run(const RunConfig& input) {
  RunReport report;
  try {
    run_into(input, report);
  } catch (const c10::OutOfMemoryError& e) {  // in set-up: moving the model, the broadcast, the reducer's buckets
    report.outcome = "oom";
    report.outcome_reason = std::string("out of memory while setting up the run: ") + e.what_without_backtrace();
    report.summary.stop_reason = "oom";
  }
  return report;
}

void Engine::run_into(const RunConfig& input, RunReport& report) {
  const Workload& workload = workload_or_throw(input.workload);
  // Data parallelism comes from the launcher's environment (dyno launch, torchrun, a scheduler).
  RunConfig requested = input;
  const auto distributed_env = distributed_env_from_environment();
  if (distributed_env) {
    if (requested.ddp.world_size != 1 && requested.ddp.world_size != distributed_env->world_size)
      throw UserError("config", "ddp.world_size: " + std::to_string(requested.ddp.world_size) + " differs from WORLD_SIZE=" +
                                    std::to_string(distributed_env->world_size) + " set by the launcher; leave it at 1 or make them equal");
    requested.ddp.world_size = distributed_env->world_size;
  } else if (requested.ddp.world_size > 1) {
    throw UserError("config", "ddp.world_size: " + std::to_string(requested.ddp.world_size) + " needs a launcher: run `dyno launch --nproc " +
                                  std::to_string(requested.ddp.world_size) + " -- dyno train ...` or torchrun --no-python");
  }
  const RunConfig config = resolve_config(requested, workload);
  // Before any CUDA work: each rank on its own GPU (LOCAL_RANK's), as torchrun users do with set_device.
  auto backend = make_device_backend(config, distributed_env ? distributed_env->local_rank : 0);
  const c10::Device device = backend->device();

  apply_host_allocator(config.host_allocator);
  if (config.threads > 0) torch::set_num_threads(static_cast<int>(config.threads));
  if (config.flush_denormal) apply_flush_denormal();
  backend->apply_flags(config);
  torch::manual_seed(config.seed);

  report.config = to_json(config);
  report.environment = collect_environment(*backend);
  report.summary.metric_name = workload.metric_name;
  report.summary.higher_is_better = workload.higher_is_better;
  const double target = config.target > 0 ? config.target : workload.target;
  report.summary.target = target;
  report.summary.throughput_unit = workload.throughput_unit;

  NvtxRange run_range("run");
  std::unique_ptr<DistributedContext> distributed;
  if (distributed_env && distributed_env->world_size > 1) distributed = std::make_unique<DistributedContext>(*distributed_env, config, device);
  WorkloadData data = workload.load_data(config.size);
  SegmentedModel model = workload.build_model();
  model->to(device);
  if (distributed) distributed->broadcast_module(*model);
  if (config.channels_last)
    for (auto& p : model->parameters())
      if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  auto parameters = model->parameters();
  if (distributed) distributed->attach_reducer(parameters);
  auto optimizer = make_optimizer(config, workload.recipe, parameters);

  LoaderOptions loader_options;
  loader_options.batch_size = config.batch_size;
  loader_options.num_workers = config.num_workers;
  loader_options.prefetch = config.prefetch;
  loader_options.pin_memory = config.pin_memory;
  loader_options.seed = static_cast<uint64_t>(config.seed);
  if (distributed) {
    loader_options.rank = distributed->rank();
    loader_options.world_size = distributed->world_size();
  }
  DataLoader loader(data.train, loader_options);
  const int64_t steps_per_epoch = loader.batches_per_epoch() / config.grad_accum_steps;
  if (steps_per_epoch < 1)
    throw UserError("config", "batch_size: " + std::to_string(config.batch_size) + " x grad_accum_steps " +
                                  std::to_string(config.grad_accum_steps) + " is larger than the " + config.size +
                                  " training set (" + std::to_string(data.train->size()) + " examples); use a smaller batch or a larger size");

  LrSchedule schedule{config.schedule, config.lr, config.epochs * steps_per_epoch, workload.recipe.warmup_fraction};
  const bool use_scaler = config.amp == "fp16";
  const bool autocast = config.amp != "off";
  const auto autocast_dtype = config.amp == "fp16" ? torch::kHalf : torch::kBFloat16;
  GradScaler scaler({}, device);

  int64_t step = 0, start_epoch = 0, start_batch = 0;
  double elapsed_before = 0;
  if (!config.resume_state.empty()) {
    TrainingProgress p = load_training_state(config.resume_state, *model, optimizer.state(), workload.name, device);
    optimizer.after_load();
    step = p.step;
    start_epoch = p.epoch;
    start_batch = p.batch_in_epoch;
    elapsed_before = p.elapsed_s;
    if (p.scaler_scale > 0) scaler.restore(p.scaler_scale, p.scaler_growth_tracker);
  }
  auto progress_of = [&](int64_t epoch, int64_t batch, double elapsed) {
    return TrainingProgress{step, epoch, batch, scaler.scale(), scaler.growth_tracker(), workload.name, elapsed};
  };

  const bool primary = !distributed || distributed->rank() == 0;  // the rank that saves state
  const bool fault_here = config.inject_fault_rank < 0 || config.inject_fault_rank == (distributed ? distributed->rank() : 0);
  const int64_t planned_steps = config.max_steps > 0 ? std::min(config.max_steps, config.epochs * steps_per_epoch)
                                                     : config.epochs * steps_per_epoch;
  const bool progress_line = options_.progress;
  const int64_t first_step = step;
  backend->reset_peak_memory();
  auto phase_clock = backend->make_phase_clock();
  PhaseClock& phases = *phase_clock;
  const auto start = Clock::now();
  auto window_start = start;
  int64_t window_items = 0;
  int64_t measured_steps = 0;
  auto loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  int64_t loss_count = 0;
  double best_metric = workload.higher_is_better ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  int64_t evals_without_improvement = 0;
  std::string stop_reason;
  EvalResult last_eval;
  bool evaluated = false;
  int64_t epoch = start_epoch;
  int64_t batch_in_epoch = start_batch;
  double eval_time_s = 0;

  auto elapsed = [&] { return elapsed_before + seconds_since(start); };
  auto run_eval = [&]() -> bool {  // returns true when training should stop
    auto eval_start = Clock::now();
    last_eval = evaluate(model, data.eval, config, device);
    evaluated = true;
    eval_time_s += seconds_since(eval_start);
    const double metric = workload.metric_name == "accuracy" ? last_eval.accuracy : last_eval.loss;
    const double epoch_position = static_cast<double>(step) / static_cast<double>(steps_per_epoch);
    report.metric_curve.push_back({step, epoch_position, elapsed(), metric});
    const bool reached = workload.higher_is_better ? metric >= target : metric <= target;
    if (reached && !report.summary.time_to_target_s) report.summary.time_to_target_s = elapsed();
    const bool improved = workload.higher_is_better ? metric > best_metric : metric < best_metric;
    if (improved) {
      best_metric = metric;
      evals_without_improvement = 0;
    } else {
      ++evals_without_improvement;
    }
    window_start = Clock::now();  // evaluation is not training throughput
    window_items = 0;
    if (reached && config.stop_at_target) return stop_reason = "target_reached", true;
    if (config.plateau_patience > 0 && evals_without_improvement >= config.plateau_patience) return stop_reason = "plateau", true;
    return false;
  };

  try {
    for (; epoch < config.epochs && stop_reason.empty(); ++epoch, batch_in_epoch = 0) {
      NvtxRange epoch_range("epoch");
      loader.start_epoch(epoch, batch_in_epoch);
      int64_t steps_left = steps_per_epoch - batch_in_epoch / config.grad_accum_steps;
      for (; steps_left > 0; --steps_left) {
        if (config.max_steps > 0 && step >= config.max_steps) {
          stop_reason = "max_steps";
          break;
        }
        // Time is not the same on every rank: with several ranks the decision is collective, at log points.
        if (config.time_limit_s > 0 && !distributed && elapsed() >= config.time_limit_s) {
          stop_reason = "time_limit";
          break;
        }
        NvtxRange step_range("step");
        const auto step_start = Clock::now();
        // Every measured step is timed by phase; no phase boundary waits for the device (on CUDA
        // the marks are stream events, read at the window's end).
        const bool measuring = step - first_step >= config.warmup_steps;
        phases.set_recording(measuring);
        phases.start();
        optimizer.set_lr(schedule.at(step));
        optimizer.zero_grad(config.set_to_none);
        int64_t step_items = 0;
        for (int64_t micro = 0; micro < config.grad_accum_steps; ++micro) {
          std::optional<Batch> batch;
          {
            NvtxRange r("data_wait");
            batch = loader.next();
            TORCH_INTERNAL_ASSERT(batch.has_value(), "this is a bug: the loader ran out of batches mid-step");
            phases.mark("data_wait");
          }
          torch::Tensor input, target;
          {
            NvtxRange r("h2d");
            input = to_device(batch->input, device, config.pin_memory, config.channels_last);
            target = batch->target.to(device, config.pin_memory);
            phases.mark("h2d");
          }
          // With several ranks, gradients are all-reduced on the last micro-batch of the step only
          // (the others accumulate locally, as DDP's no_sync()).
          const bool synchronise = distributed && micro + 1 == config.grad_accum_steps;
          if (synchronise) {
            if (config.ddp.broadcast_buffers) distributed->broadcast_buffers(*model);
            distributed->before_forward();
          }
          torch::Tensor loss;
          {
            NvtxRange r("forward");
            AutocastScope scope(device.type(), autocast, autocast_dtype);
            loss = loss_of(forward_segments(model, input, config.checkpointing), target, config.label_smoothing);
            if (config.grad_accum_steps > 1) loss = loss / static_cast<double>(config.grad_accum_steps);
            if (config.inject_fault == "nan" && fault_here && step + 1 >= config.inject_fault_at_step) loss = loss * std::nan("");
            phases.mark("forward");
          }
          if (synchronise) distributed->before_backward();
          {
            NvtxRange r("backward");
            (use_scaler ? scaler.scale_loss(loss) : loss).backward();
            if (synchronise) distributed->after_backward(parameters);
            phases.mark("backward");
          }
          loss_sum += loss.detach().to(torch::kFloat) * static_cast<double>(config.grad_accum_steps);
          ++loss_count;
          step_items += batch->items;
          ++batch_in_epoch;
        }
        {
          NvtxRange r("optimizer");
          // No host sync here: the found-inf flag and the clipping factor stay on the device.
          torch::Tensor found_inf;
          if (use_scaler) found_inf = scaler.unscale(parameters);
          if (config.clip_grad_norm > 0) clip_grad_norm_on_device(parameters, config.clip_grad_norm);
          optimizer.step(found_inf);
          if (use_scaler) scaler.update(found_inf);
          phases.mark("optimizer");
        }
        ++step;
        if (config.inject_fault != "none" && config.inject_fault != "nan" && fault_here && step >= config.inject_fault_at_step)
          fire_fault(config.inject_fault);
        if (measuring) {
          ++measured_steps;
          window_items += step_items;
        } else {
          // The first window starts on an idle device, not behind queued warm-up work.
          if (step - first_step == config.warmup_steps) backend->synchronize();
          window_start = Clock::now();
        }
        if (config.slowdown_percent > 0) busy_wait(seconds_since(step_start) * config.slowdown_percent / 100.0);

        if (step % config.log_every_steps == 0) {
          backend->synchronize();
          phases.collect();
          const double mean_loss = (loss_sum / static_cast<double>(std::max<int64_t>(loss_count, 1))).item<double>();
          loss_sum.zero_();
          loss_count = 0;
          report.loss_curve.push_back({step, static_cast<double>(step) / static_cast<double>(steps_per_epoch), elapsed(), mean_loss});
          report.lr_curve.push_back({step, static_cast<double>(step) / static_cast<double>(steps_per_epoch), elapsed(), schedule.at(step)});
          bool diverged = !std::isfinite(mean_loss);
          if (distributed) {
            diverged = distributed->any(diverged);
            if (distributed->any(config.time_limit_s > 0 && elapsed() >= config.time_limit_s)) {
              stop_reason = "time_limit";
              break;
            }
          }
          if (diverged) {
            stop_reason = "diverged";
            report.outcome = "diverged";
            report.outcome_reason = "training loss became " + std::to_string(mean_loss) + " at step " + std::to_string(step);
            break;
          }
          if (measuring && window_items > 0) {
            report.throughput_windows.push_back(static_cast<double>(window_items) / seconds_since(window_start));
            window_start = Clock::now();
            window_items = 0;
            // Noise-driven stop for measurement runs: enough windows for a 95% interval (6) and tight enough.
            bool stable = config.measure_rel_ci > 0 && report.throughput_windows.size() >= 6 &&
                          relative_ci_half_width(report.throughput_windows) < config.measure_rel_ci;
            // A lost race: the tuner's incumbent is faster than this run's whole interval (the
            // bar is for the job; windows are per rank).
            const double ranks = distributed ? static_cast<double>(distributed->world_size()) : 1.0;
            bool outpaced = config.measure_stop_below > 0 && report.throughput_windows.size() >= 6 &&
                            median_confidence_interval(report.throughput_windows).high * ranks < config.measure_stop_below;
            if (distributed) {
              stable = distributed->any(stable);
              outpaced = distributed->any(outpaced);
            }
            if (stable || outpaced) {
              stop_reason = stable ? "stable" : "outpaced";
              break;
            }
          }
          if (progress_line) {
            const double rate = (elapsed() - elapsed_before - eval_time_s) / static_cast<double>(std::max<int64_t>(step - first_step, 1));
            std::fprintf(stderr, "\r[%s] epoch %lld/%lld step %lld/%lld loss %.4f %s/s %.0f ETA %s   ", workload.name.c_str(),
                         static_cast<long long>(epoch + 1), static_cast<long long>(config.epochs), static_cast<long long>(step),
                         static_cast<long long>(planned_steps), mean_loss, workload.throughput_unit.c_str(),
                         report.throughput_windows.empty() ? 0.0 : report.throughput_windows.back(),
                         format_duration(rate * static_cast<double>(planned_steps - step)).c_str());
            std::fflush(stderr);
          }
        }
        if (config.save_every_steps > 0 && step % config.save_every_steps == 0 && !config.save_state.empty() && primary)
        {
          optimizer.before_save();
          save_training_state(config.save_state, *model, optimizer.state(), progress_of(epoch, batch_in_epoch, elapsed()), device);
        }
        if (config.eval_every_steps > 0 && step % config.eval_every_steps == 0 && run_eval()) break;
      }
      if (stop_reason.empty() && steps_left == 0 && config.eval_every_steps == 0 && run_eval()) {
        ++epoch;
        batch_in_epoch = 0;
        break;
      }
      if (!stop_reason.empty()) break;
    }
    if (stop_reason.empty()) stop_reason = "epochs";
    if (report.outcome == "ok" && !evaluated && config.final_eval) run_eval();
  } catch (const c10::OutOfMemoryError& e) {
    report.outcome = "oom";
    report.outcome_reason = e.what_without_backtrace();
    stop_reason = "oom";
    if (distributed) {
      // The other ranks wait in a collective this rank will never join: abort it, and let this
      // rank report the job (the launcher stops the others when it exits).
      report.outcome_reason = "rank " + std::to_string(distributed->rank()) + ": " + report.outcome_reason;
      distributed->abort();
    }
  }
  if (progress_line) std::fprintf(stderr, "\n");
  backend->synchronize();
  phases.collect();

  if (!config.save_state.empty() && report.outcome == "ok" && primary) {
    // A save after the last epoch points at the start of the next one.
    int64_t save_epoch = epoch, save_batch = batch_in_epoch;
    if (save_batch >= steps_per_epoch * config.grad_accum_steps) {
      ++save_epoch;
      save_batch = 0;
    }
    optimizer.before_save();
    save_training_state(config.save_state, *model, optimizer.state(), progress_of(save_epoch, save_batch, elapsed()), device);
  }

  auto& s = report.summary;
  s.samples_per_second = median(report.throughput_windows);
  if (!std::isfinite(s.samples_per_second) && measured_steps > 0) s.samples_per_second = 0;
  s.samples_per_second_spread = report.throughput_windows.size() >= 2 ? relative_iqr(report.throughput_windows) : 0.0;
  if (!std::isfinite(s.samples_per_second)) s.samples_per_second = 0;
  if (!std::isfinite(s.samples_per_second_spread)) s.samples_per_second_spread = 0;
  s.final_metric = !evaluated ? std::nan("") : workload.metric_name == "accuracy" ? last_eval.accuracy : last_eval.loss;
  s.target_reached = s.time_to_target_s.has_value();
  s.peak_memory_bytes = backend->peak_memory_bytes();
  s.peak_memory_kind = backend->peak_memory_kind();
  s.steps = step;
  s.epochs = static_cast<double>(step) / static_cast<double>(steps_per_epoch);
  s.wall_time_s = elapsed();
  s.stop_reason = stop_reason;
  double phase_total = 0;
  for (const auto& [name, seconds] : phases.totals_s()) phase_total += seconds;
  const int64_t timed_steps = measured_steps;
  for (const auto& [name, seconds] : phases.totals_s())
    report.phases[name] = {seconds, 1000.0 * seconds / static_cast<double>(std::max<int64_t>(timed_steps, 1)),
                           phase_total > 0 ? seconds / phase_total : 0.0};
  report.phases["eval"] = {eval_time_s, 0.0, 0.0};
  if (distributed && report.outcome != "oom") {
    // Rank 0 reports for the job: the sum of every rank's throughput, and each rank's figures.
    auto figures = distributed->all_gather_json({{"rank", distributed->rank()}, {"samples_per_second", s.samples_per_second},
                                                 {"wall_time_s", s.wall_time_s}, {"windows", report.throughput_windows}},
                                                "figures");
    report.world_size = distributed->world_size();
    double total = 0;
    for (const auto& f : figures) {
      report.ranks.push_back({f["rank"].get<int64_t>(), f["samples_per_second"].get<double>(), f["wall_time_s"].get<double>()});
      total += f["samples_per_second"].get<double>();
    }
    for (auto& w : report.throughput_windows) w *= static_cast<double>(distributed->world_size());  // per-window estimate for the job
    s.samples_per_second = total;
  }
}

}  // namespace dyno
