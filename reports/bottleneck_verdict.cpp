#include "dyno/reports/bottleneck_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dyno/reports/json_fields.h"
#include "dyno/reports/quantity.h"

namespace dyno {
namespace {

std::string percent(double share) { return format_fixed(100.0 * share, 0) + "%"; }
std::string ms(double seconds) { return format_fixed(1000.0 * seconds, seconds < 0.01 ? 3 : 2); }

// "41.2 GFLOP/s"
std::string flop_rate(double flops_per_s) {
  char b[64];
  if (flops_per_s >= 1e12) std::snprintf(b, sizeof b, "%.1f TFLOP/s", flops_per_s / 1e12);
  else std::snprintf(b, sizeof b, "%.1f GFLOP/s", flops_per_s / 1e9);
  return b;
}

double share_of(const std::map<std::string, PhaseTime>& phases, const char* name, double step_ms) {
  auto it = phases.find(name);
  return it == phases.end() || step_ms <= 0 ? 0.0 : it->second.per_step_ms / step_ms;
}

BottleneckVerdict verdict(std::string kind, std::string headline, const std::string& evidence_text, nlohmann::json evidence) {
  BottleneckVerdict v;
  v.kind = std::move(kind);
  v.headline = std::move(headline);
  v.sentence = v.headline + ": " + evidence_text;
  v.evidence = std::move(evidence);
  return v;
}

}  // namespace

BottleneckVerdict decide_bottleneck(const std::map<std::string, PhaseTime>& phases, const std::optional<ProfileSummary>& profile,
                                    const VerdictScope& run) {
  double step_ms = 0;
  for (const auto& [name, p] : phases)
    if (name != "eval") step_ms += p.per_step_ms;
  const bool profiled = profile && profile->wall_s > 0;
  if (step_ms <= 0 && !profiled)
    return verdict("undetermined", "undetermined", "no step was measured (the run ended within its warm-up) or profiled; run more steps",
                   {{"step_ms", step_ms}, {"data_wait_share", nullptr}, {"all_reduce_share", nullptr}});
  // Without measured steps, the profiled steps' wait for data tells the input share.
  const double data_wait = step_ms > 0 ? share_of(phases, "data_wait", step_ms) : profile->data_wait_s / profile->wall_s;
  const double all_reduce = share_of(phases, "all_reduce", step_ms);
  nlohmann::json evidence = {{"step_ms", step_ms}, {"data_wait_share", data_wait}, {"all_reduce_share", all_reduce}};
  const std::string step_text = step_ms > 0 ? " of the step (" + format_fixed(step_ms, 3) + " ms/step measured)" : " of a profiled step (no step measured)";

  if (data_wait >= kInputBoundShare)
    return verdict("input", "input-bound",
                   "the training thread waits for data " + percent(data_wait) + step_text +
                       "; more loader workers, a deeper prefetch or a faster data source would help",
                   evidence);
  const double collectives = profiled ? profile->communication_s / profile->wall_s : 0.0;
  if (profile) evidence["collective_share"] = collectives;
  if (all_reduce >= kCommunicationBoundShare || collectives >= kCommunicationBoundShare) {
    const std::string what = all_reduce >= kCommunicationBoundShare
                                 ? "the gradient all-reduce after backward takes " + percent(all_reduce) + step_text +
                                       "; overlapping it with backward (ddp.overlap=true) would hide part of it"
                                 : "the training thread waits for collectives that computation does not hide " + percent(collectives) +
                                       " of a profiled step; larger buckets (ddp.bucket_cap_mb), " +
                                       (run.comm_hook ? "gradient compression (ddp.comm_hook) " : "") + "or a larger batch per rank would help";
    return verdict("communication", "communication-bound", what, evidence);
  }
  if (!profiled)
    return verdict("undetermined", "not input- or communication-bound",
                   "data_wait is " + percent(data_wait) + " and the all-reduce outside backward " + percent(all_reduce) + step_text +
                       "; run with --profile to tell compute from host overhead",
                   evidence);

  const ProfileSummary& p = *profile;
  const double wall = p.wall_s;
  const double achieved = p.gemm_flops / wall;
  const bool peak_measured = p.peak_flops_per_s > 0;
  const double peak_fraction = peak_measured ? achieved / p.peak_flops_per_s : 0.0;
  evidence["profiled_step_ms"] = 1000.0 * wall / static_cast<double>(std::max<int64_t>(p.steps, 1));
  evidence["achieved_flops_per_s"] = achieved;
  evidence["peak_flops_per_s"] = peak_measured ? nlohmann::json(p.peak_flops_per_s) : nlohmann::json(nullptr);
  evidence["peak_fraction"] = peak_measured ? nlohmann::json(peak_fraction) : nlohmann::json(nullptr);
  const std::string peak_name = "the measured " + (p.peak_precision.empty() ? std::string("GEMM") : p.peak_precision + " GEMM") + " peak";
  const std::string achieved_text = "the matrix multiplies and convolutions achieve " + flop_rate(achieved) + " over the profiled steps" +
                                    (peak_measured ? ", " + percent(peak_fraction) + " of " + peak_name + " (" + flop_rate(p.peak_flops_per_s) + ")"
                                                   : " (the GEMM peak could not be measured: no memory left beside the run)");
  const std::string peak_headline = peak_measured ? ", " + percent(peak_fraction) + " of " + peak_name : "";

  // Host overhead: on the CPU, the time outside ATen ops and the fixed cost of every op call, less
  // waiting for data (the input verdict's, above) outside ops; on CUDA, the time the device is
  // idle (how much of a wait the queued kernels cover is not known here).
  const bool cuda = run.device == "cuda";
  const double outside_ops_s = std::max(0.0, wall - p.ops_s - p.communication_s - p.data_wait_s);
  const double overhead = cuda ? 1.0 - std::min(1.0, p.device_busy_s / wall)
                               : std::min(1.0, (outside_ops_s + static_cast<double>(p.op_calls) * p.op_call_s) / wall);
  evidence["host_overhead_share"] = overhead;
  if (overhead >= kHostOverheadBoundShare) {
    const double per_step = wall / static_cast<double>(std::max<int64_t>(p.steps, 1));
    const std::string why = cuda ? "the device is busy only " + percent(1.0 - overhead) + " of a profiled step"
                                 : percent(overhead) + " of a profiled step is framework overhead (" + ms(outside_ops_s / static_cast<double>(std::max<int64_t>(p.steps, 1))) +
                                       " ms of " + ms(per_step) + " ms outside ATen ops, plus " +
                                       std::to_string(p.op_calls / std::max<int64_t>(p.steps, 1)) + " op calls a step at " +
                                       format_fixed(1e6 * p.op_call_s, 1) + " us each, measured here)";
    return verdict("host_overhead", "host-overhead-bound",
                   why + "; larger batches amortise it; " + achieved_text,
                   evidence);
  }
  double gemm_share = 0;
  if (cuda) {
    double kernel_s = 0;
    for (const auto& k : p.kernels) kernel_s += k.self_s;
    gemm_share = kernel_s > 0 ? p.gemm_device_s / kernel_s : 0.0;
  } else {
    gemm_share = p.ops_s > 0 ? p.gemm_s / p.ops_s : 0.0;
  }
  evidence["gemm_share"] = gemm_share;
  if (gemm_share >= kComputeBoundGemmShare) {
    // Near the peak only fewer or cheaper FLOPs help; far below it the GEMMs are too small to fill
    // the device (a larger batch gives them more rows). Judged on their own rate: their FLOPs over
    // their own time, not the step's.
    const double gemm_time_s = cuda ? p.gemm_device_s : p.gemm_s;
    const bool own_rate = peak_measured && gemm_time_s > 0 && p.gemm_flops > 0;
    const double own_fraction = own_rate ? p.gemm_flops / gemm_time_s / p.peak_flops_per_s : 0.0;
    evidence["gemm_peak_fraction"] = own_rate ? nlohmann::json(own_fraction) : nlohmann::json(nullptr);
    std::string help;
    if (own_rate && own_fraction >= kNearPeakShare)
      help = "; over their own time they run at " + percent(own_fraction) + " of the peak, so fewer FLOPs" +
             (run.amp ? " or a narrower precision (amp)" : "") + " would help";
    else if (own_rate)
      help = "; over their own time they run at only " + percent(own_fraction) + " of the peak, too small to fill the " + (cuda ? "GPU" : "cores") +
             ": a larger batch" + (run.channels_last ? " or channels_last=true" : "") + " would help";
    return verdict("compute", "compute-bound" + peak_headline,
                   "matrix multiplies and convolutions take " + percent(gemm_share) + " of the " + (cuda ? "kernel" : "op") + " time; " +
                       achieved_text + help,
                   evidence);
  }
  std::string cuts = "fused kernels";  // what would cut the traffic: the knobs still to try, and the model's own ops
  if (run.channels_last) cuts += std::string(run.amp ? ", " : " or ") + "channels_last=true";
  if (run.amp) cuts += " or a narrower precision (amp)";
  return verdict("memory", "memory-bound",
                 "matrix multiplies and convolutions take only " + percent(gemm_share) + " of the " + (cuda ? "kernel" : "op") +
                     " time; the rest are elementwise, copy and reduction ops, whose speed is set by memory traffic (" + cuts +
                     " would cut it); " + achieved_text,
                 evidence);
}

nlohmann::json to_json(const BottleneckVerdict& v) {
  return {{"kind", v.kind}, {"headline", v.headline}, {"sentence", v.sentence}, {"evidence", v.evidence}};
}

BottleneckVerdict verdict_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonFields j(json, "report", where);
  BottleneckVerdict v;
  v.kind = j.required_text("kind");
  v.headline = j.text("headline");
  v.sentence = j.text("sentence");
  v.evidence = j.object("evidence").json();
  return v;
}

}  // namespace dyno
