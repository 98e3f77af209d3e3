#include "dyno/reports/technique_claims.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "dyno/reports/figure_set.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"

namespace dyno {

const std::vector<TechniqueClaim>& technique_claims() {
  static const std::vector<TechniqueClaim> claims = {
      {2, "DataLoader workers", "2x for one epoch with 4 workers and pinned memory (Migacz)", "loader/workers_0", "loader/workers_2"},
      {2, "Pinned host memory, non-blocking copy", "part of the 2x above (Migacz)", "h2d_copy/pageable_blocking", "h2d_copy/pinned_non_blocking"},
      {4, "AMP: bf16 autocast, matmul", "~2x, up to 5.5x on V100 (Huang et al.)", "matmul/fp32", "matmul/bf16_autocast"},
      {4, "AMP: bf16 autocast, conv", "2x to 3x", "conv/fp32", "conv/bf16_autocast"},
      {5, "Fused AdamW", "fused Adam ~5% faster than unfused (APEX)", "adamw/per_parameter", "adamw/fused"},
      {6, "cuDNN autotuner", "+70% conv forward, +27% forward+backward (Migacz)", "cudnn_conv/benchmark_off", "cudnn_conv/benchmark_on"},
      {7, "Avoid per-step host sync (.item())", "\"relatively expensive\"", "sync/per_step_item", "sync/deferred"},
      {8, "Activation checkpointing", "activation memory O(N) -> ~O(sqrt N), extra compute", "checkpoint/plain", "checkpoint/checkpointed"},
      {11, "zero_grad(set_to_none=True)", "\"modest\"", "zero_grad/zero_fill", "zero_grad/set_to_none"},
      {12, "Wrap memory instead of copying", "avoids a copy", "wrap_memory/copy", "wrap_memory/from_blob"},
      {13, "Anomaly detection off", "debug APIs slow training", "anomaly/on", "anomaly/off"},
      {14, "Gradient clipping (cost)", "steadier convergence; costs a norm per step", "clip/on", "clip/off"},
      {15, "No conv bias before BatchNorm", "fewer parameters, small speed-up", "conv_bn/with_bias", "conv_bn/no_bias"},
      {16, "No autograd during validation", "less memory, faster eval", "eval/with_autograd", "eval/no_grad"},
      {18, "Fused point-wise ops (TorchScript GELU)", "5x for a fused GELU (Migacz)", "gelu/eager_composite", "gelu/torchscript"},
      {25, "channels_last memory format", "device dependent", "conv_memory_format/contiguous", "conv_memory_format/channels_last"},
  };
  return claims;
}

std::vector<TechniqueRow> technique_rows(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array())
    throw UserError("report", "not a Google Benchmark JSON result (no \"benchmarks\" list); run dyno_bench_techniques --benchmark_out=FILE");
  // Each benchmark's real time per repetition, in ns whatever its unit; the table states the baseline's unit.
  struct Acc {
    std::vector<double> ns;
    std::string unit;
    std::string error;
  };
  std::map<std::string, Acc> by_name;
  size_t index = 0;
  for (const auto& entry : j["benchmarks"]) {
    const std::string at = where + ".benchmarks[" + std::to_string(index++) + "]";
    const JsonFields b(entry, "report", at);
    const std::string name = b.text("run_name", b.text("name"));
    auto& acc = by_name[name];
    if (b.flag("error_occurred")) {
      acc.error = b.text("error_message", "error");
      continue;
    }
    if (b.text("run_type", "iteration") != "iteration" || !b.has("real_time")) continue;
    acc.unit = b.text("time_unit", "ns");
    acc.ns.push_back(b.positive_number("real_time") * google_benchmark_ns_per(acc.unit, "report", at));
  }
  // A result with none of the techniques' benchmarks is another program's: a table of "missing" rows would hide that.
  bool any = false;
  for (const auto& claim : technique_claims()) any = any || by_name.count(claim.baseline_benchmark) || by_name.count(claim.technique_benchmark);
  if (!any)
    throw UserError("report", where + " holds none of dyno_bench_techniques' benchmarks; run dyno_bench_techniques --benchmark_out=FILE");
  std::vector<TechniqueRow> rows;
  for (const auto& claim : technique_claims()) {
    TechniqueRow row;
    row.claim = claim;
    auto base = by_name.find(claim.baseline_benchmark), tech = by_name.find(claim.technique_benchmark);
    if (base == by_name.end() || tech == by_name.end()) {
      row.status = "missing";
    } else if (!base->second.error.empty() || !tech->second.error.empty()) {
      row.status = !tech->second.error.empty() ? tech->second.error : base->second.error;
    } else if (!base->second.ns.empty() && !tech->second.ns.empty()) {
      row.unit = base->second.unit;
      const double ns_per = google_benchmark_ns_per(row.unit, "report", where);
      row.baseline_time = median(base->second.ns) / ns_per;
      row.technique_time = median(tech->second.ns) / ns_per;
      row.speedup = row.technique_time > 0 ? row.baseline_time / row.technique_time : 0;
      row.status = "measured";
    } else {
      row.status = "missing";
    }
    rows.push_back(row);
  }
  return rows;
}

std::string technique_table_text(const std::vector<TechniqueRow>& rows) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%3s  %-40s %10s  %-12s %-12s  %s\n", "#", "technique", "measured", "baseline", "technique", "claimed");
  out << line;
  for (const auto& r : rows) {
    if (r.status == "measured") {
      char base[32], tech[32], speed[32];
      std::snprintf(base, sizeof base, "%.3g %s", r.baseline_time, r.unit.c_str());
      std::snprintf(tech, sizeof tech, "%.3g %s", r.technique_time, r.unit.c_str());
      std::snprintf(speed, sizeof speed, "%.2fx", r.speedup);
      std::snprintf(line, sizeof line, "%3d  %-40s %10s  %-12s %-12s  %s\n", r.claim.number, r.claim.technique.c_str(), speed, base, tech,
                    r.claim.claim.c_str());
    } else {
      std::snprintf(line, sizeof line, "%3d  %-40s %10s  %-25s  %s\n", r.claim.number, r.claim.technique.c_str(), "-",
                    r.status.substr(0, 25).c_str(), r.claim.claim.c_str());
    }
    out << line;
    if (r.status != "measured" && r.status.size() > 25) out << "     (" << r.status << ")\n";
  }
  out << "measured = baseline time / technique time on this machine (> 1 means the technique is faster).\n";
  return out.str();
}

}  // namespace dyno
