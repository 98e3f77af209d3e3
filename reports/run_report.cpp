#include "reports/run_report.h"

#include <cmath>

#include "reports/atomic_file.h"
#include "reports/user_error.h"

namespace dyno {
namespace {

// JSON has no NaN: a value that was not measured (or was not finite) is written as null.
nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json curve_to_json(const std::vector<CurvePoint>& curve) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : curve) j.push_back({{"step", p.step}, {"epoch", p.epoch}, {"time_s", p.time_s}, {"value", number_or_null(p.value)}});
  return j;
}

// A number, or NaN where the report has null (a value that was not finite when written).
double number_at(const nlohmann::json& j, const char* key, double missing = 0.0) {
  if (!j.contains(key)) return missing;
  return j[key].is_number() ? j[key].get<double>() : std::nan("");
}

std::vector<CurvePoint> curve_from_json(const nlohmann::json& j) {
  std::vector<CurvePoint> curve;
  for (const auto& p : j)
    curve.push_back({p.value("step", int64_t{0}), number_at(p, "epoch"), number_at(p, "time_s"), number_at(p, "value")});
  return curve;
}

template <typename T>
T required(const nlohmann::json& j, const char* key, const char* where) {
  if (!j.contains(key))
    throw UserError("report", std::string(where) + " has no '" + key + "' field; is this a dyno run report?");
  return j.at(key).get<T>();
}

}  // namespace

void check_schema_version(const nlohmann::json& json, const std::string& what) {
  if (!json.is_object() || !json.contains("schema_version") || !json["schema_version"].is_string())
    throw UserError("report", what + " has no schema_version; is it a dyno report?");
  std::string version = json["schema_version"];
  int major = 0;
  try {
    major = std::stoi(version.substr(0, version.find('.')));
  } catch (...) {
    throw UserError("report", what + ": schema_version '" + version + "' is not MAJOR.MINOR");
  }
  if (major != kReportSchemaMajor)
    throw UserError("report", what + ": schema_version '" + version + "' has major version " + std::to_string(major) +
                                  "; this dyno reads major version " + std::to_string(kReportSchemaMajor) +
                                  " (any minor); use a dyno release that matches");
}

nlohmann::json to_json(const RunReport& r) {
  const auto& e = r.environment;
  const auto& s = r.summary;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [name, p] : r.phases)
    phases[name] = {{"total_s", p.total_s}, {"per_step_ms", p.per_step_ms}, {"fraction", p.fraction}};
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rank : r.ranks)
    ranks.push_back({{"rank", rank.rank}, {"samples_per_second", rank.samples_per_second}, {"wall_time_s", rank.wall_time_s}});
  return {
      {"schema_version", r.schema_version},
      {"kind", "run"},
      {"outcome", r.outcome},
      {"outcome_reason", r.outcome_reason},
      {"config", r.config},
      {"environment",
       {{"dyno_revision", e.dyno_revision}, {"libtorch_version", e.libtorch_version}, {"cuda_version", e.cuda_version},
        {"cudnn_version", e.cudnn_version}, {"device", e.device}, {"device_name", e.device_name},
        {"cpu_model", e.cpu_model}, {"cores", e.cores}, {"memory_bytes", e.memory_bytes}, {"threads", e.threads}, {"host", e.host}}},
      {"summary",
       {{"throughput_unit", s.throughput_unit},
        {"samples_per_second", number_or_null(s.samples_per_second)},
        {"samples_per_second_spread", number_or_null(s.samples_per_second_spread)},
        {"time_to_target_s", s.time_to_target_s ? nlohmann::json(*s.time_to_target_s) : nlohmann::json(nullptr)},
        {"final_metric", {{"name", s.metric_name}, {"value", number_or_null(s.final_metric)}, {"higher_is_better", s.higher_is_better}}},
        {"target", s.target},
        {"target_reached", s.target_reached},
        {"peak_memory_bytes", s.peak_memory_bytes},
        {"peak_memory_kind", s.peak_memory_kind},
        {"steps", s.steps},
        {"epochs", s.epochs},
        {"wall_time_s", s.wall_time_s},
        {"stop_reason", s.stop_reason}}},
      {"throughput_windows", r.throughput_windows},
      {"curves", {{"loss", curve_to_json(r.loss_curve)}, {"metric", curve_to_json(r.metric_curve)}, {"lr", curve_to_json(r.lr_curve)}}},
      {"phases", phases},
      {"world_size", r.world_size},
      {"ranks", ranks},
  };
}

RunReport report_from_json(const nlohmann::json& j) {
  check_schema_version(j, "run report");
  RunReport r;
  r.schema_version = j["schema_version"];
  r.outcome = required<std::string>(j, "outcome", "run report");
  r.outcome_reason = j.value("outcome_reason", "");
  r.config = j.value("config", nlohmann::json::object());
  if (j.contains("environment")) {
    const auto& e = j["environment"];
    auto& o = r.environment;
    o.dyno_revision = e.value("dyno_revision", "");
    o.libtorch_version = e.value("libtorch_version", "");
    o.cuda_version = e.value("cuda_version", "");
    o.cudnn_version = e.value("cudnn_version", "");
    o.device = e.value("device", "");
    o.device_name = e.value("device_name", "");
    o.cpu_model = e.value("cpu_model", "");
    o.cores = e.value("cores", int64_t{0});
    o.memory_bytes = e.value("memory_bytes", int64_t{0});
    o.threads = e.value("threads", int64_t{0});
    o.host = e.value("host", "");
  }
  const auto& s = j.at("summary");
  auto& o = r.summary;
  o.throughput_unit = s.value("throughput_unit", "samples");
  if (!s.contains("samples_per_second")) throw UserError("report", "summary has no 'samples_per_second' field; is this a dyno run report?");
  o.samples_per_second = number_at(s, "samples_per_second");
  o.samples_per_second_spread = number_at(s, "samples_per_second_spread");
  if (s.contains("time_to_target_s") && !s["time_to_target_s"].is_null()) o.time_to_target_s = s["time_to_target_s"].get<double>();
  if (s.contains("final_metric")) {
    o.metric_name = s["final_metric"].value("name", "");
    const auto& value = s["final_metric"]["value"];
    o.final_metric = value.is_number() ? value.get<double>() : std::nan("");
    o.higher_is_better = s["final_metric"].value("higher_is_better", true);
  }
  o.target = s.value("target", 0.0);
  o.target_reached = s.value("target_reached", false);
  o.peak_memory_bytes = s.value("peak_memory_bytes", int64_t{0});
  o.peak_memory_kind = s.value("peak_memory_kind", "");
  o.steps = s.value("steps", int64_t{0});
  o.epochs = s.value("epochs", 0.0);
  o.wall_time_s = s.value("wall_time_s", 0.0);
  o.stop_reason = s.value("stop_reason", "");
  if (j.contains("throughput_windows"))
    for (const auto& w : j["throughput_windows"]) r.throughput_windows.push_back(w.is_number() ? w.get<double>() : std::nan(""));
  if (j.contains("curves")) {
    const auto& c = j["curves"];
    if (c.contains("loss")) r.loss_curve = curve_from_json(c["loss"]);
    if (c.contains("metric")) r.metric_curve = curve_from_json(c["metric"]);
    if (c.contains("lr")) r.lr_curve = curve_from_json(c["lr"]);
  }
  if (j.contains("phases"))
    for (const auto& [name, p] : j["phases"].items())
      r.phases[name] = {p.value("total_s", 0.0), p.value("per_step_ms", 0.0), p.value("fraction", 0.0)};
  r.world_size = j.value("world_size", int64_t{1});
  if (j.contains("ranks"))
    for (const auto& rank : j["ranks"])
      r.ranks.push_back({rank.value("rank", int64_t{0}), rank.value("samples_per_second", 0.0), rank.value("wall_time_s", 0.0)});
  return r;
}

void write_report(const std::string& path, const RunReport& report) {
  write_file_atomically(path, to_json(report).dump(2) + "\n");
}

RunReport read_report(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "report");
  try {
    return report_from_json(j);
  } catch (const nlohmann::json::exception& e) {
    throw UserError("report", "'" + path + "' is malformed: " + e.what());
  }
}

}  // namespace dyno
