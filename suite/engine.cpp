#include "dyno/suite/engine.h"

#include <c10/util/Exception.h>

#include "dyno/reports/user_error.h"
#include "dyno/suite/distributed/distributed_context.h"
#include "dyno/suite/lr_schedule.h"
#include "dyno/suite/training_run.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {

RunConfig resolve_config(const RunConfig& input, const Workload& workload) {
  RunConfig config = input;
  const Recipe& recipe = workload.recipe;
  if (config.optimizer == "auto") config.optimizer = recipe.optimizer;
  if (config.schedule == "auto") config.schedule = recipe.schedule;
  if (config.epochs == 0) config.epochs = recipe.epochs;
  if (config.ddp.backend == "auto") config.ddp.backend = config.device == "cuda" ? "nccl" : "gloo";
  if (config.lr == 0) config.lr = scaled_lr(recipe.lr, config.lr_scaling, effective_batch_size(config), recipe.reference_batch_size);
  validate_combination(config);
  if (workload.metric_name == "accuracy" && config.target > 1)
    throw UserError("config", "target: " + nlohmann::json(config.target).dump() + " is above 1; '" + workload.name +
                                  "' is judged by accuracy, a fraction in (0, 1] (0: the workload's own target)");
  if (config.channels_last && !workload.convolutional)
    throw UserError("config", "channels_last: true applies to convolutional workloads; '" + workload.name + "' has no convolutions");
  if (config.label_smoothing > 0 && workload.loss)
    throw UserError("config", "label_smoothing: " + std::to_string(config.label_smoothing) + " applies to the cross-entropy loss; '" +
                                  workload.name + "' defines its own loss; leave it at 0");
  return config;
}

RunReport Engine::run(const RunConfig& input) {
  const Workload workload = workload_for(input);
  // Data parallelism comes from the launcher's environment (dyno launch, torchrun, a scheduler).
  RunConfig requested = input;
  bool chose_shm = false;  // and so may fall back to gloo
  const auto distributed_env = distributed_env_from_environment();
  if (distributed_env) {
    if (requested.ddp.world_size != 1 && requested.ddp.world_size != distributed_env->world_size)
      throw UserError("config", "ddp.world_size: " + std::to_string(requested.ddp.world_size) + " differs from WORLD_SIZE=" +
                                    std::to_string(distributed_env->world_size) + " set by the launcher; leave it at 1 or make them equal");
    requested.ddp.world_size = distributed_env->world_size;
    if (requested.inject_fault != "none" && requested.inject_fault_rank >= distributed_env->world_size)
      throw UserError("config", "inject_fault_rank: " + std::to_string(requested.inject_fault_rank) + " is no rank of this job's " +
                                    std::to_string(distributed_env->world_size) + " (0 to " + std::to_string(distributed_env->world_size - 1) + ", or -1: every rank)");
    // Every rank on this machine, on the CPU: the gradients are averaged in shared memory, or with
    // gloo when /dev/shm has no room for the segment.
    chose_shm = requested.ddp.backend == "auto" && requested.device != "cuda" && requested.ddp.comm_hook == "none" &&
                distributed_env->world_size > 1 && distributed_env->all_on_this_machine;
    if (chose_shm) requested.ddp.backend = "shm";
  } else if (requested.inject_fault != "none" && requested.inject_fault_rank > 0) {
    throw UserError("config", "inject_fault_rank: " + std::to_string(requested.inject_fault_rank) + " is no rank of a single process (0, or -1: every rank)");
  } else if (requested.ddp.world_size > 1) {
    throw UserError("config", "ddp.world_size: " + std::to_string(requested.ddp.world_size) + " needs a launcher: run `dyno launch --nproc " +
                                  std::to_string(requested.ddp.world_size) + " -- dyno train ...` or torchrun --no-python");
  }
  const RunConfig config = resolve_config(requested, workload);
  RunReport report;
  try {
    TrainingRun run(workload, config, distributed_env, options_, report, chose_shm);
    run.train();
    run.summarise();
  } catch (const c10::OutOfMemoryError& e) {  // in set-up: moving the model, the broadcast, the reducer's buckets
    report.outcome = Outcome::Oom;
    report.outcome_reason = std::string("out of memory while setting up the run: ") + e.what_without_backtrace();
    report.summary.stop_reason = "oom";
  }
  return report;
}

}  // namespace dyno
