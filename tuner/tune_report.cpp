#include "tuner/tune_report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "reports/run_report.h"
#include "tuner/tuner.h"

namespace dyno {

std::string describe_changes(const Tuner& tuner, const nlohmann::json& point) {
  std::string out;
  for (const auto& [knob, value] : point.items())
    if (!tuner.start_point().contains(knob) || tuner.start_point()[knob] != value)
      out += (out.empty() ? "" : " ") + knob + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return out.empty() ? "(start)" : out;
}

nlohmann::json tune_report_json(const Tuner& tuner, const TuneSummary& summary) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : tuner.trials()) {
    auto j = to_json(t);
    j["changes"] = describe_changes(tuner, t.point);
    trials.push_back(j);
  }
  nlohmann::json pareto = nlohmann::json::array();
  for (const Trial* t : tuner.pareto_front())
    pareto.push_back({{"id", t->id}, {"samples_per_second", t->samples_per_second}, {"peak_memory_bytes", t->peak_memory_bytes},
                      {"changes", describe_changes(tuner, t->point)}});
  const Trial* best = tuner.best();
  std::map<std::string, int64_t> outcomes;
  for (const auto& t : tuner.trials()) ++outcomes[to_string(t.outcome)];
  return {{"schema_version", std::to_string(kReportSchemaMajor) + "." + std::to_string(kReportSchemaMinor)},
          {"kind", "tune"},
          {"workload", summary.workload},
          {"device", summary.device},
          {"strategy", tuner.options().strategy},
          {"objective", tuner.options().objective},
          {"seed", tuner.options().seed},
          {"space", tuner.space().to_json()},
          {"grid_size", tuner.space().grid_size()},
          {"base_config", summary.base_config},
          {"start_point", tuner.start_point()},
          {"trials", trials},
          {"outcomes", outcomes},
          {"best", best ? nlohmann::json{{"id", best->id}, {"point", best->point}, {"changes", describe_changes(tuner, best->point)},
                                         {"stage", best->stage}, {"budget_level", best->budget_level}, {"objective", best->objective},
                                         {"report_path", best->report_path},
                                         {"samples_per_second", best->samples_per_second}, {"ci_low", best->ci_low},
                                         {"ci_high", best->ci_high}, {"peak_memory_bytes", best->peak_memory_bytes},
                                         {"time_to_target_s", best->time_to_target_s ? nlohmann::json(*best->time_to_target_s) : nlohmann::json(nullptr)},
                                         {"config", summary.best_config}}
                        : nlohmann::json(nullptr)},
          {"pareto_front", pareto},
          {"cost", {{"trials", tuner.executed_trials()}, {"trial_time_s", tuner.spent_s()}, {"wall_time_s", summary.wall_time_s}}},
          {"throughput_phase", summary.throughput_phase},
          {"verification", summary.verification},
          {"profiles", summary.profiles},
          {"environment", summary.environment}};
}

std::string best_config_python(const RunConfig& c) {
  std::ostringstream py;
  auto boolean = [](bool b) { return b ? "True" : "False"; };
  py << "# dyno tuned settings for workload '" << c.workload << "' on " << c.device << ", as PyTorch Python.\n"
     << "# Put these into your training script; each block says which knob it comes from.\n"
     << "import torch\n\n";
  py << "# threads\n";
  if (c.threads > 0) py << "torch.set_num_threads(" << c.threads << ")\n";
  else py << "# threads=0: keep PyTorch's default intra-op thread count\n";
  py << "\n# host_allocator\n";
  if (c.host_allocator == "retain")
    py << "import ctypes  # glibc: large blocks from the heap (no mmap/munmap per step), freed memory kept for reuse\n"
       << "libc = ctypes.CDLL('libc.so.6')\n"
       << "libc.mallopt(-4, 0)  # M_MMAP_MAX\n"
       << "libc.mallopt(-1, 2**31 - 1)  # M_TRIM_THRESHOLD\n"
       << "# or start Python with GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647\n";
  else if (c.host_allocator == "tcmalloc")
    py << "# tcmalloc replaces malloc for the whole process: start Python with\n"
       << "#   LD_PRELOAD=libtcmalloc_minimal.so.4 python train.py   (Debian package libtcmalloc-minimal4)\n";
  else py << "# (the C library's malloc defaults)\n";
  py << "\n# flush_denormal\n"
     << "torch.set_flush_denormal(" << boolean(c.flush_denormal) << ")\n";
  py << "\n# cudnn_benchmark, tf32, deterministic\n"
     << "torch.backends.cudnn.benchmark = " << boolean(c.cudnn_benchmark) << "\n"
     << "torch.backends.cuda.matmul.allow_tf32 = " << boolean(c.tf32) << "\n"
     << "torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, as dyno's fp32: tf32 is the extra matmul TF32\n"
     << "torch.use_deterministic_algorithms(" << boolean(c.deterministic) << ")\n\n";
  py << "# batch_size, num_workers, prefetch, pin_memory\n"
     << "loader_kwargs = dict(batch_size=" << c.batch_size << ", shuffle=True, drop_last=True, num_workers=" << c.num_workers;
  if (c.num_workers > 0) py << ", prefetch_factor=" << c.prefetch << ", persistent_workers=True";
  py << ", pin_memory=" << boolean(c.pin_memory) << ")\n"
     << "# train_loader = torch.utils.data.DataLoader(train_dataset, **loader_kwargs)\n\n";
  // A resolved config names its optimizer and its learning rate (the recipe's, scaled to this batch
  // by lr_scaling); an unresolved one ("auto", 0) leaves them to the workload's recipe.
  const bool resolved = c.optimizer != "auto" && c.lr > 0;
  py << "# optimizer, lr, schedule\n";
  if (resolved) {
    std::ostringstream lr;
    lr.precision(6);
    lr << c.lr;
    py << "optimizer_class = torch.optim." << (c.optimizer == "sgd" ? "SGD" : "AdamW") << "\n"
       << "lr = " << lr.str() << "  # lr_scaling=" << c.lr_scaling << " already applied for batch " << c.batch_size * c.grad_accum_steps << "\n"
       << "# schedule: " << c.schedule << " over " << c.epochs << " epochs\n";
  } else {
    py << "# optimizer=" << c.optimizer << ", lr=" << c.lr << ", schedule=" << c.schedule << ": the workload's recipe\n";
  }
  py << "# optimizer = optimizer_class(model.parameters(), lr=lr, **optimizer_kwargs)  (optimizer_impl=" << c.optimizer_impl << ")\n"
     << "optimizer_kwargs = dict(" << (c.optimizer_impl == "fused" ? "fused=True" : c.optimizer_impl == "foreach" ? "foreach=True" : "foreach=False") << ")\n"
     << "grad_accum_steps = " << c.grad_accum_steps << "\n"
     << "clip_grad_norm = " << (c.clip_grad_norm > 0 ? std::to_string(c.clip_grad_norm) : "None") << "\n"
     << "label_smoothing = " << c.label_smoothing << "  # training loss only; evaluate with plain cross-entropy\n";
  py << "\n# channels_last\n";
  if (c.channels_last) py << "# model = model.to(memory_format=torch.channels_last); inputs = inputs.to(memory_format=torch.channels_last)\n";
  else py << "# (contiguous NCHW)\n";
  py << "\n# checkpointing\n";
  if (c.checkpointing)
    py << "# wrap each model segment: x = torch.utils.checkpoint.checkpoint(segment, x, use_reentrant=False)\n";
  else py << "# (no activation checkpointing)\n";
  py << "\n# amp\n";
  if (c.amp == "off") {
    py << "autocast = dict(device_type='" << c.device << "', enabled=False)\nscaler = None\n";
  } else {
    py << "autocast = dict(device_type='" << c.device << "', dtype=torch." << (c.amp == "fp16" ? "float16" : "bfloat16") << ")\n";
    if (c.amp == "fp16") py << "scaler = torch.amp.GradScaler('cuda')\n";
    else py << "scaler = None  # bf16 needs no loss scaling\n";
  }
  py << "\n\ndef train_step(model, optimizer, batches):\n"
     << "    \"\"\"One optimizer step over grad_accum_steps micro-batches, with the tuned settings.\"\"\"\n"
     << "    optimizer.zero_grad(set_to_none=" << boolean(c.set_to_none) << ")  # set_to_none\n"
     << "    for inputs, targets in batches:\n"
     << "        inputs = inputs.to('" << c.device << "', non_blocking=" << boolean(c.pin_memory) << ")\n"
     << "        targets = targets.to('" << c.device << "', non_blocking=" << boolean(c.pin_memory) << ")\n"
     << "        with torch.autocast(**autocast):\n"
     << "            loss = torch.nn.functional.cross_entropy(model(inputs), targets, label_smoothing=label_smoothing) / grad_accum_steps\n"
     << "        (scaler.scale(loss) if scaler else loss).backward()\n"
     << "    if scaler:\n"
     << "        scaler.unscale_(optimizer)\n"
     << "    if clip_grad_norm:\n"
     << "        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)\n"
     << "    if scaler:\n"
     << "        scaler.step(optimizer)\n"
     << "        scaler.update()\n"
     << "    else:\n"
     << "        optimizer.step()\n";
  return py.str();
}

std::string trials_table(const Tuner& tuner) {
  std::ostringstream out;
  char line[512];
  // Throughput trials show the median's 95% interval; time-to-target trials their time to the target.
  const bool to_target = tuner.options().objective == "time-to-target";
  std::snprintf(line, sizeof line, "%4s  %-15s %-14s %12s  %-21s %9s %7s  %s\n", "id", "stage", "outcome", "samples/s",
                to_target ? "to target s" : "95% interval", "peak MiB", "time s", "changes from start");
  out << line;
  const Trial* best = tuner.best();
  for (const auto& t : tuner.trials()) {
    char interval[64] = "";
    if (t.time_to_target_s && (to_target || t.role() == TrialRole::Verify)) std::snprintf(interval, sizeof interval, "%.1f", *t.time_to_target_s);
    else if (t.ok() && t.role() != TrialRole::Verify) std::snprintf(interval, sizeof interval, "[%.0f, %.0f]", t.ci_low, t.ci_high);
    std::snprintf(line, sizeof line, "%4lld%s %-15s %-14s %12.0f  %-21s %9.0f %7.1f  %s\n", static_cast<long long>(t.id),
                  best && best->id == t.id ? "*" : " ", t.stage.c_str(), to_string(t.outcome),
                  std::isfinite(t.samples_per_second) ? t.samples_per_second : 0.0, interval,
                  static_cast<double>(t.peak_memory_bytes) / (1 << 20), t.wall_time_s, describe_changes(tuner, t.point).c_str());
    out << line;
    if (!t.ok() && !t.reason.empty()) out << "        " << t.reason.substr(0, 160) << "\n";
  }
  return out.str();
}

}  // namespace dyno
