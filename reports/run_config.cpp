#include "dyno/reports/run_config.h"

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "dyno/reports/knob.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

constexpr double kNoMax = 1e15;

template <typename Field>
Knob make_knob(std::string name, KnobType type, Field RunConfig::*member, std::string description) {
  Knob knob;
  knob.name = std::move(name);
  knob.type = type;
  knob.description = std::move(description);
  knob.get = [member](const RunConfig& c) { return nlohmann::json(c.*member); };
  knob.assign = [member](RunConfig& c, const nlohmann::json& v) { c.*member = v.get<Field>(); };
  return knob;
}

template <typename Field>
Knob make_ddp_knob(std::string name, KnobType type, Field DdpConfig::*member, std::string description) {
  Knob knob;
  knob.name = "ddp." + std::move(name);
  knob.type = type;
  knob.description = std::move(description);
  knob.get = [member](const RunConfig& c) { return nlohmann::json(c.ddp.*member); };
  knob.assign = [member](RunConfig& c, const nlohmann::json& v) { c.ddp.*member = v.get<Field>(); };
  return knob;
}

Knob ranged(Knob knob, double lo, double hi, bool tunable = false) {
  knob.min_value = lo;
  knob.max_value = hi;
  knob.tunable = tunable;
  return knob;
}

Knob choice(Knob knob, std::vector<std::string> choices, bool tunable = false) {
  knob.choices = std::move(choices);
  knob.tunable = tunable;
  return knob;
}

Knob tunable(Knob knob) {
  knob.tunable = true;
  return knob;
}

std::vector<Knob> build_table() {
  using K = KnobType;
  using C = RunConfig;
  std::vector<Knob> t;
  // What to run.
  t.push_back(make_knob("workload", K::Text, &C::workload, "workload to train (see `dyno workloads`), or torchscript (model_file on data_file)"));
  t.push_back(make_knob("model_file", K::Text, &C::model_file, "torchscript: the model, saved by torch.jit.script(model).save(path)"));
  t.push_back(make_knob("data_file", K::Text, &C::data_file, "torchscript: the data, saved by torch.save({\"inputs\": X, \"targets\": Y}, path)"));
  t.push_back(make_knob("eval_data_file", K::Text, &C::eval_data_file, "torchscript: evaluation data in the same form; empty = the data file's last 10%"));
  t.push_back(choice(make_knob("model_loss", K::Choice, &C::model_loss,
                               "torchscript: cross_entropy (integer class targets; metric accuracy) or mse (float targets; metric val_loss)"),
                     {"cross_entropy", "mse"}));
  t.push_back(choice(make_knob("size", K::Choice, &C::size, "data set size: full, small (~10%), tiny (for tests)"),
                     {"full", "small", "tiny"}));
  t.push_back(choice(make_knob("device", K::Choice, &C::device, "device to train on"), {"cpu", "cuda"}));
  t.push_back(ranged(make_knob("seed", K::Integer, &C::seed, "seed for initialisation, shuffling and dropout"), 0, 4294967295.0));
  // Stop rules.
  t.push_back(ranged(make_knob("epochs", K::Integer, &C::epochs, "maximum epochs and the LR schedule's horizon; 0 = the workload's recipe"), 0, 100000, true));
  t.back().role = KnobRole::Convergence;
  t.push_back(ranged(make_knob("max_steps", K::Integer, &C::max_steps, "maximum optimizer steps; 0 = no limit"), 0, kNoMax));
  t.push_back(ranged(make_knob("time_limit_s", K::Real, &C::time_limit_s, "stop training after this many seconds of it (a resumed run's count the saved run's, as max_steps counts its steps); 0 = no limit"), 0, kNoMax));
  t.push_back(make_knob("stop_at_target", K::Boolean, &C::stop_at_target, "stop as soon as the evaluation metric reaches the workload's target"));
  t.push_back(ranged(make_knob("target", K::Real, &C::target, "the evaluation metric to reach (accuracy, or val_loss from above); 0 = the workload's target"), 0, 1e6));
  t.push_back(ranged(make_knob("plateau_patience", K::Integer, &C::plateau_patience, "stop after this many evaluations without improvement; 0 = off"), 0, 100000));
  t.push_back(ranged(make_knob("eval_every_steps", K::Integer, &C::eval_every_steps, "evaluate every N optimizer steps; 0 = once per epoch"), 0, kNoMax));
  t.back().role = KnobRole::Convergence;
  t.push_back(ranged(make_knob("eval_batch_size", K::Integer, &C::eval_batch_size,
                               "examples per evaluation batch (no autograd); 0 = batch_size, at least 500"), 0, kNoMax));
  // Measurement.
  t.push_back(ranged(make_knob("warmup_steps", K::Integer, &C::warmup_steps, "steps excluded from throughput and phase times"), 0, kNoMax));
  t.push_back(ranged(make_knob("log_every_steps", K::Integer, &C::log_every_steps, "steps per measurement window and loss sample"), 1, kNoMax));
  t.push_back(ranged(make_knob("measure_rel_ci", K::Real, &C::measure_rel_ci, "stop once throughput's 95% CI half-width / median is below this; 0 = off"), 0, 1));
  t.push_back(ranged(make_knob("measure_stop_below", K::Real, &C::measure_stop_below,
                               "stop once throughput's whole 95% CI is below this many items/s (the tuner's race against its best); 0 = off"),
                     0, kNoMax));
  t.push_back(make_knob("final_eval", K::Boolean, &C::final_eval, "evaluate the trained model after the last epoch unless its last step was evaluated, or at any other end when nothing was evaluated"));
  // Data pipeline.
  t.push_back(ranged(make_knob("num_workers", K::Integer, &C::num_workers, "batch-producing threads; 0 = in the training thread"), 0, 64, true));
  t.back().role = KnobRole::Pipeline;
  t.back().speed_only = true;
  t.push_back(ranged(make_knob("prefetch", K::Integer, &C::prefetch, "batches each worker may prepare ahead (bounded queue)"), 1, 64, true));
  t.back().role = KnobRole::Pipeline;
  t.back().speed_only = true;
  t.push_back(tunable(make_knob("pin_memory", K::Boolean, &C::pin_memory, "page-locked host batches and non-blocking copies (cuda)")));
  t.back().role = KnobRole::Pipeline;
  t.back().speed_only = true;
  // Batch and learning rate.
  t.push_back(ranged(make_knob("batch_size", K::Integer, &C::batch_size, "samples per micro-batch"), 1, 1 << 20, true));
  t.back().role = KnobRole::Batch;
  t.push_back(choice(make_knob("lr_scaling", K::Choice, &C::lr_scaling, "scale the recipe LR with effective batch / recipe batch"),
                     {"none", "linear", "sqrt"}, true));
  t.back().role = KnobRole::Convergence;
  t.push_back(ranged(make_knob("grad_accum_steps", K::Integer, &C::grad_accum_steps, "micro-batches accumulated per optimizer step"), 1, 4096, true));
  t.push_back(ranged(make_knob("lr", K::Real, &C::lr, "base learning rate; 0 = the workload's recipe"), 0, 100));
  t.back().tunable = true;
  t.back().role = KnobRole::Convergence;
  t.push_back(choice(make_knob("optimizer", K::Choice, &C::optimizer, "optimizer; auto = the workload's recipe"),
                     {"auto", "sgd", "adamw"}, true));
  t.push_back(choice(make_knob("optimizer_impl", K::Choice, &C::optimizer_impl,
                               "optimizer step: fused (one kernel for all parameters), foreach (multi-tensor ops) or loop (per parameter)"),
                     {"fused", "foreach", "loop"}, true));
  t.push_back(choice(make_knob("schedule", K::Choice, &C::schedule, "LR schedule; auto = the workload's recipe"),
                     {"auto", "constant", "cosine", "onecycle"}, true));
  t.back().role = KnobRole::Convergence;
  t.push_back(ranged(make_knob("clip_grad_norm", K::Real, &C::clip_grad_norm, "clip the global gradient norm to this; 0 = off"), 0, 1e6));
  t.back().tunable = true;
  t.push_back(ranged(make_knob("label_smoothing", K::Real, &C::label_smoothing, "training loss's label smoothing (evaluation is unsmoothed); 0 = off"), 0, 0.5));
  t.back().tunable = true;
  t.back().role = KnobRole::Convergence;
  // Numerics and kernels.
  t.push_back(choice(make_knob("amp", K::Choice, &C::amp, "mixed precision: fp16 (cuda, with gradient scaler) or bf16"),
                     {"off", "fp16", "bf16"}, true));
  t.back().role = KnobRole::Numerics;
  t.push_back(tunable(make_knob("cudnn_benchmark", K::Boolean, &C::cudnn_benchmark, "let cuDNN time and pick conv algorithms (cuda)")));
  t.back().speed_only = true;
  t.push_back(tunable(make_knob("tf32", K::Boolean, &C::tf32, "allow TF32 in matmuls (cuda; cuDNN convolutions use TF32 either way, PyTorch's default)")));
  t.back().role = KnobRole::Numerics;
  t.push_back(make_knob("deterministic", K::Boolean, &C::deterministic, "use only deterministic algorithms"));
  t.push_back(tunable(make_knob("set_to_none", K::Boolean, &C::set_to_none, "zero_grad frees gradients instead of zero-filling")));
  t.back().speed_only = true;
  t.push_back(ranged(make_knob("threads", K::Integer, &C::threads, "intra-op threads; 0 = LibTorch's default, or the usable cores divided among the ranks on this machine"), 0, 1024, true));
  t.back().role = KnobRole::Process;
  t.back().speed_only = true;
  t.push_back(tunable(make_knob("channels_last", K::Boolean, &C::channels_last, "NHWC memory format for conv models")));
  t.back().speed_only = true;
  t.push_back(choice(make_knob("host_allocator", K::Choice, &C::host_allocator, "host memory: system (libc defaults), retain (no mmap/trim: freed blocks are reused), hugepages (retain, in transparent huge pages) or tcmalloc (Debian's libtcmalloc-minimal4, preloaded)"),
                     {"system", "retain", "hugepages", "tcmalloc"}, true));
  t.back().role = KnobRole::Process;
  t.back().speed_only = true;
  t.push_back(tunable(make_knob("flush_denormal", K::Boolean, &C::flush_denormal, "CPU math treats subnormal floats as zero (FTZ/DAZ), as torch.set_flush_denormal")));
  t.back().role = KnobRole::Numerics;
  t.push_back(tunable(make_knob("checkpointing", K::Boolean, &C::checkpointing, "recompute model segments' activations in backward")));
  t.back().speed_only = true;
  // Training state.
  t.push_back(make_knob("save_state", K::Text, &C::save_state, "file to save the full training state to; empty = none"));
  t.push_back(ranged(make_knob("save_every_steps", K::Integer, &C::save_every_steps, "save the state every N steps; 0 = at the end only"), 0, kNoMax));
  t.push_back(make_knob("resume_state", K::Text, &C::resume_state, "file to resume the training state from; empty = start fresh"));
  // Testing options.
  t.push_back(choice(make_knob("inject_fault", K::Choice, &C::inject_fault, "testing: misbehave at inject_fault_at_step"),
                     {"none", "crash", "abort", "hang", "nan", "oom"}));
  t.back().testing = true;
  t.push_back(ranged(make_knob("inject_fault_at_step", K::Integer, &C::inject_fault_at_step, "testing: step at which inject_fault fires"), 0, kNoMax));
  t.push_back(ranged(make_knob("inject_fault_rank", K::Integer, &C::inject_fault_rank, "testing: the rank inject_fault fires on; -1 = every rank"), -1, 1 << 20));
  t.push_back(ranged(make_knob("slowdown_percent", K::Real, &C::slowdown_percent, "testing: add this % of the step's own time to each step (calibrated slowdown)"), 0, 1000));
  t.push_back(ranged(make_knob("data_delay_ms", K::Real, &C::data_delay_ms, "testing: each training batch takes this many ms longer to produce (a slow data source)"), 0, 60000));
  // Distributed data parallel.
  t.push_back(ranged(make_ddp_knob("world_size", K::Integer, &DdpConfig::world_size, "data-parallel ranks"), 1, 4096, true));
  t.push_back(choice(make_ddp_knob("backend", K::Choice, &DdpConfig::backend, "c10d backend: auto (nccl on cuda; on cpu shm when every rank is on this machine and no comm_hook is set, else gloo), gloo, nccl, or shm (gloo, with the gradients averaged in shared memory: cpu ranks on one machine)"), {"auto", "gloo", "nccl", "shm"}, true));
  t.push_back(ranged(make_ddp_knob("bucket_cap_mb", K::Real, &DdpConfig::bucket_cap_mb, "gradient bucket size in MiB"), 0.01, 4096));
  t.back().tunable = true;
  t.back().speed_only = true;
  t.push_back(tunable(make_ddp_knob("gradient_as_bucket_view", K::Boolean, &DdpConfig::gradient_as_bucket_view, "gradients are views into the buckets")));
  t.back().speed_only = true;
  t.push_back(choice(make_ddp_knob("comm_hook", K::Choice, &DdpConfig::comm_hook, "gradient compression before all-reduce"), {"none", "fp16", "bf16"}, true));
  t.push_back(tunable(make_ddp_knob("broadcast_buffers", K::Boolean, &DdpConfig::broadcast_buffers, "broadcast buffers (BatchNorm stats) from rank 0 each step")));
  t.back().speed_only = true;
  t.push_back(make_ddp_knob("overlap", K::Boolean, &DdpConfig::overlap, "all-reduce gradient buckets during backward; false = one all-reduce after it"));
  t.back().speed_only = true;
  t.push_back(ranged(make_ddp_knob("timeout_s", K::Real, &DdpConfig::timeout_s, "seconds a rendezvous or collective may take before the job fails"), 1, 86400));
  return t;
}

}  // namespace

const std::vector<Knob>& all_knobs() {
  static const std::vector<Knob> table = build_table();
  return table;
}

nlohmann::json to_json(const RunConfig& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& knob : all_knobs()) j[knob.name] = knob.get(config);
  return j;
}

void set_knob(RunConfig& config, const std::string& name, const nlohmann::json& value) {
  const Knob& knob = knob_or_throw(name);
  knob.validate(value);
  knob.assign(config, value);
}

RunConfig config_from_json(const nlohmann::json& json, RunConfig base) {
  if (!json.is_object())
    throw UserError("config", "expected a JSON object of knob names to values, got " + std::string(json.type_name()));
  std::set<std::string> given;  // a knob given both ways ({"ddp": {"world_size": 1}, "ddp.world_size": 2}) is refused
  auto set_once = [&](const std::string& name, const nlohmann::json& value) {
    if (!given.insert(name).second) throw UserError("config", name + " is given twice (as \"" + name + "\" and in \"ddp\"); give it once");
    set_knob(base, name, value);
  };
  for (const auto& [name, value] : json.items()) {
    if (name == "ddp") {  // nested form {"ddp": {"world_size": 2}}
      if (!value.is_object()) throw UserError("config", "ddp: " + value.dump() + " is not an object of ddp knobs, as {\"world_size\": 2}");
      for (const auto& [sub, v] : value.items()) set_once("ddp." + sub, v);
      continue;
    }
    set_once(name, value);
  }
  return base;
}

void apply_setting(RunConfig& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("config", "--set expects key=value, got '" + assignment + "'");
  std::string name = assignment.substr(0, eq);
  const Knob& knob = knob_or_throw(name);
  set_knob(config, name, knob.parse_text(assignment.substr(eq + 1)));
}

void validate_combination(const RunConfig& c) {
  auto needs_cuda = [&](bool used, const std::string& what) {
    if (used && c.device != "cuda")
      throw UserError("config", what + " needs device=cuda (device is '" + c.device + "')");
  };
  needs_cuda(c.amp == "fp16", "amp: 'fp16'");
  needs_cuda(c.pin_memory, "pin_memory: true");
  needs_cuda(c.cudnn_benchmark, "cudnn_benchmark: true");
  needs_cuda(c.tf32, "tf32: true");
  needs_cuda(c.ddp.backend == "nccl" && c.ddp.world_size > 1, "ddp.backend: 'nccl'");
  if (c.ddp.backend == "shm" && c.device == "cuda")
    throw UserError("config", "ddp.backend: 'shm' averages gradients in host memory, for device=cpu; on cuda use nccl (or auto)");
  if (c.ddp.backend == "shm" && c.ddp.comm_hook != "none")
    throw UserError("config", "ddp.comm_hook: '" + c.ddp.comm_hook + "' compresses what gloo or nccl sends; ddp.backend=shm sends nothing: set ddp.comm_hook=none or ddp.backend=gloo");
  if (c.ddp.world_size > 1 && !c.ddp.overlap && c.ddp.comm_hook != "none")
    throw UserError("config", "ddp.comm_hook: '" + c.ddp.comm_hook + "' compresses the buckets sent during backward; with ddp.overlap=false the gradients go in one "
                              "uncompressed all-reduce after it: set ddp.comm_hook=none or ddp.overlap=true");
  if (c.deterministic && c.cudnn_benchmark)
    throw UserError("config", "cudnn_benchmark: true conflicts with deterministic: true; set one of them to false");
  if (c.inject_fault != "none" && c.inject_fault_at_step < 1)
    throw UserError("config", "inject_fault_at_step: " + std::to_string(c.inject_fault_at_step) +
                                  " is not valid with inject_fault='" + c.inject_fault + "'; give a step >= 1");
  if (c.save_every_steps > 0 && c.save_state.empty())
    throw UserError("config", "save_every_steps: " + std::to_string(c.save_every_steps) +
                                  " saves the state to save_state, which is empty; give save_state=FILE, or save_every_steps=0");
}

int64_t effective_batch_size(const RunConfig& config) {
  return config.batch_size * config.grad_accum_steps * config.ddp.world_size;
}

}  // namespace dyno
