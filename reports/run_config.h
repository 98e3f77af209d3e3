// RunConfig: everything that defines one training run: the workload, the device, every knob the
// tuner searches and the stop rules. A plain struct that round-trips to JSON; its fields are
// declared once, with their valid values, in the knob table (run_config.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct DdpConfig {
  int64_t world_size = 1;
  std::string backend = "auto";  // auto (nccl on cuda; on the cpu shm when every rank is on this machine, else gloo) | gloo | nccl | shm
  double bucket_cap_mb = 25.0;
  bool gradient_as_bucket_view = false;
  std::string comm_hook = "none";  // none | fp16 | bf16
  bool broadcast_buffers = true;
  double timeout_s = 60;  // a collective that takes longer fails the job (dead or hung rank)
  bool overlap = true;    // false: no bucketing, one all-reduce after backward (for comparison)
};

struct RunConfig {
  // What to run.
  std::string workload = "fashion-mlp";  // a registered workload, or "torchscript" (model_file on data_file)
  std::string model_file;       // torchscript: a model saved by torch.jit.script(model).save(path)
  std::string data_file;        // torchscript: torch.save({"inputs": X, "targets": Y}, path)
  std::string eval_data_file;   // torchscript: evaluation data in the same form; empty = the data file's last 10%
  std::string model_loss = "cross_entropy";  // torchscript: cross_entropy (class targets, accuracy) | mse (val_loss)
  std::string size = "full";  // full | small | tiny
  std::string device = "cpu";
  int64_t seed = 0;

  // Stop rules.
  int64_t epochs = 0;        // 0 = the workload's recipe
  int64_t max_steps = 0;     // optimizer steps; 0 = no limit
  double time_limit_s = 0;   // 0 = no limit
  bool stop_at_target = true;
  double target = 0;         // the metric to reach; 0 = the workload's target
  int64_t plateau_patience = 0;  // evaluations without improvement; 0 = off
  int64_t eval_every_steps = 0;  // 0 = once per epoch
  int64_t eval_batch_size = 0;   // 0 = max(batch_size, 500)

  // Measurement.
  int64_t warmup_steps = 10;
  int64_t log_every_steps = 50;
  double measure_rel_ci = 0;  // stop once the median throughput's 95% CI half-width is below this fraction; 0 = off
  double measure_stop_below = 0;  // stop once the median throughput's whole 95% CI is below this (a lost race); 0 = off
  bool final_eval = true;     // evaluate once at the end when no evaluation has run

  // Data pipeline.
  int64_t num_workers = 0;
  int64_t prefetch = 2;
  bool pin_memory = false;

  // Batch and learning rate.
  int64_t batch_size = 64;
  std::string lr_scaling = "none";  // none | linear | sqrt
  int64_t grad_accum_steps = 1;
  double lr = 0;                       // 0 = the workload's recipe
  std::string optimizer = "auto";      // auto | sgd | adamw
  std::string optimizer_impl = "fused";  // fused | foreach | loop
  std::string schedule = "auto";       // auto | constant | cosine | onecycle
  double clip_grad_norm = 0;           // 0 = off
  double label_smoothing = 0;          // cross-entropy label smoothing; 0 = off

  // Numerics and kernels.
  std::string amp = "off";  // off | fp16 | bf16
  bool cudnn_benchmark = false;
  bool tf32 = false;
  bool deterministic = false;
  bool set_to_none = true;
  int64_t threads = 0;  // 0 = LibTorch's default
  bool channels_last = false;
  bool flush_denormal = false;  // CPU flushes subnormal floats to zero (FTZ/DAZ)
  std::string host_allocator = "hugepages";  // hugepages (retain, in transparent huge pages) | retain (keep freed host memory for reuse) | system (libc defaults) | tcmalloc
  bool checkpointing = false;

  // Training state.
  std::string save_state;  // path; empty = do not save
  int64_t save_every_steps = 0;  // 0 = only at the end
  std::string resume_state;  // path; empty = start fresh

  // Testing options (documented): make a run misbehave on purpose.
  std::string inject_fault = "none";  // none | crash | abort | hang | nan | oom
  int64_t inject_fault_at_step = 0;
  int64_t inject_fault_rank = -1;  // -1 = every rank
  double slowdown_percent = 0;  // calibrated extra time per step, for validating detectors
  double data_delay_ms = 0;  // each batch takes this much longer to produce: a slow data source

  DdpConfig ddp;
};

nlohmann::json to_json(const RunConfig& config);
// Unknown keys and invalid values throw UserError naming the field, the value and what is valid.
RunConfig config_from_json(const nlohmann::json& json, RunConfig base = {});
// Applies "key=value" (as given to --set).
void apply_setting(RunConfig& config, const std::string& assignment);
void set_knob(RunConfig& config, const std::string& name, const nlohmann::json& value);
// Checks combinations of fields (value ranges are checked when each is set).
void validate_combination(const RunConfig& config);

int64_t effective_batch_size(const RunConfig& config);

}  // namespace dyno
