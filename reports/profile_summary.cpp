#include "dyno/reports/profile_summary.h"

#include <algorithm>

#include "dyno/reports/json_fields.h"

namespace dyno {
namespace {

nlohmann::json rows_to_json(const std::vector<OpRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows)
    out.push_back({{"name", r.name}, {"calls", r.calls}, {"self_s", r.self_s}, {"total_s", r.total_s}, {"flops", r.flops},
                   {"input_shapes", r.input_shapes}});
  return out;
}

std::vector<OpRow> rows_from_json(const JsonFields& profile, const char* key, const std::string& where) {
  std::vector<OpRow> rows;
  if (!profile.has(key)) return rows;
  if (!profile.json()[key].is_array()) profile.fail(key, "an array of {name, calls, self_s, total_s, flops, input_shapes}");
  for (const auto& row : profile.json()[key]) {
    const JsonFields r(row, "report", where + "." + key + "[]");
    rows.push_back({r.required_text("name"), r.integer("calls"), r.number("self_s"), r.number("total_s"), r.number("flops"),
                    r.text("input_shapes")});
  }
  return rows;
}

}  // namespace

double ProfileSummary::table_self_s() const {
  double sum = 0;
  for (const auto& r : ops) sum += r.self_s;
  return sum;
}

std::vector<OpRow> top_rows(std::vector<OpRow> rows, size_t keep) {
  std::sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.self_s != b.self_s ? a.self_s > b.self_s : a.name < b.name; });
  if (rows.size() <= keep) return rows;
  OpRow other;
  other.name = "[other]";
  for (size_t i = keep; i < rows.size(); ++i) {
    other.calls += rows[i].calls;
    other.self_s += rows[i].self_s;
    other.total_s += rows[i].total_s;
    other.flops += rows[i].flops;
  }
  rows.resize(keep);
  rows.push_back(other);
  return rows;
}

nlohmann::json to_json(const ProfileSummary& p) {
  return {{"steps", p.steps},
          {"wall_s", p.wall_s},
          {"trace", p.trace_path},
          {"ops", rows_to_json(p.ops)},
          {"kernels", rows_to_json(p.kernels)},
          {"ops_s", p.ops_s},
          {"op_calls", p.op_calls},
          {"gemm_s", p.gemm_s},
          {"gemm_flops", p.gemm_flops},
          {"convolution_flops", p.convolution_flops},
          {"communication_s", p.communication_s},
          {"device_busy_s", p.device_busy_s},
          {"gemm_device_s", p.gemm_device_s},
          {"data_wait_s", p.data_wait_s},
          {"peak", {{"precision", p.peak_precision}, {"flops_per_s", p.peak_flops_per_s}, {"op_call_s", p.op_call_s}}}};
}

ProfileSummary profile_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonFields j(json, "report", where);
  ProfileSummary p;
  p.steps = j.integer("steps");
  p.wall_s = j.number("wall_s");
  p.trace_path = j.text("trace");
  p.ops = rows_from_json(j, "ops", where);
  p.kernels = rows_from_json(j, "kernels", where);
  p.ops_s = j.number("ops_s");
  p.op_calls = j.integer("op_calls");
  p.gemm_s = j.number("gemm_s");
  p.data_wait_s = j.number("data_wait_s");
  p.gemm_flops = j.number("gemm_flops");
  p.convolution_flops = j.number("convolution_flops");
  p.communication_s = j.number("communication_s");
  p.device_busy_s = j.number("device_busy_s");
  p.gemm_device_s = j.number("gemm_device_s");
  const JsonFields peak = j.object("peak");
  p.peak_precision = peak.text("precision");
  p.peak_flops_per_s = peak.number("flops_per_s");
  p.op_call_s = peak.number("op_call_s");
  return p;
}

}  // namespace dyno
