#include "dyno/reports/run_report.h"

#include <cmath>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

// JSON has no NaN: a value that was not measured (or was not finite) is written as null.
nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json curve_to_json(const std::vector<CurvePoint>& curve) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : curve) j.push_back({{"step", p.step}, {"epoch", p.epoch}, {"time_s", p.time_s}, {"value", number_or_null(p.value)}});
  return j;
}

// A number, or NaN where the report has null (a value that was not finite when written); any
// other value is refused, named.
double number_at(const JsonFields& j, const char* key, double missing = 0.0) {
  if (!j.json().contains(key)) return missing;
  const nlohmann::json& value = j.json()[key];
  if (value.is_null()) return std::nan("");
  if (!value.is_number()) j.fail(key, "a number (null where it was not finite)");
  return value.get<double>();
}

std::vector<CurvePoint> curve_from_json(const JsonFields& curves, const char* name) {
  std::vector<CurvePoint> curve;
  if (!curves.has(name)) return curve;
  if (!curves.json()[name].is_array()) curves.fail(name, "an array of {step, epoch, time_s, value}");
  size_t i = 0;
  for (const auto& point : curves.json()[name]) {
    const JsonFields p(point, "report", curves.where() + "." + name + "[" + std::to_string(i++) + "]");
    curve.push_back({p.integer("step"), number_at(p, "epoch"), number_at(p, "time_s"), number_at(p, "value")});
  }
  return curve;
}

}  // namespace

void check_schema_version(const nlohmann::json& json, const std::string& what) {
  if (!json.is_object() || !json.contains("schema_version"))
    throw UserError("report", what + " has no schema_version; is it a dyno report?");
  if (!json["schema_version"].is_string())
    throw UserError("report", what + ": schema_version is " + json["schema_version"].dump() + ", not a \"MAJOR.MINOR\" string");
  const std::string version = json["schema_version"];
  const size_t dot = version.find('.');
  const auto digits = [](const std::string& text) { return !text.empty() && text.size() < 9 && text.find_first_not_of("0123456789") == std::string::npos; };
  if (dot == std::string::npos || !digits(version.substr(0, dot)) || !digits(version.substr(dot + 1)))
    throw UserError("report", what + ": schema_version '" + version + "' is not MAJOR.MINOR");
  const int major = std::stoi(version.substr(0, dot));
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
        {"host_huge_page_bytes", s.host_huge_page_bytes},
        {"steps", s.steps},
        {"skipped_steps", s.skipped_steps},
        {"epochs", s.epochs},
        {"wall_time_s", s.wall_time_s},
        {"stop_reason", s.stop_reason}}},
      {"throughput_windows", r.throughput_windows},
      {"curves", {{"loss", curve_to_json(r.loss_curve)}, {"metric", curve_to_json(r.metric_curve)}, {"lr", curve_to_json(r.lr_curve)}}},
      {"phases", phases},
      {"world_size", r.world_size},
      {"ranks", ranks},
      {"profile", r.profile ? to_json(*r.profile) : nlohmann::json(nullptr)},
      {"verdict", r.verdict ? to_json(*r.verdict) : nlohmann::json(nullptr)},
  };
}

RunReport report_from_json(const nlohmann::json& json, const std::string& where) {
  check_schema_version(json, where);
  const JsonFields j(json, "report", where);
  RunReport r;
  r.schema_version = j.text("schema_version");
  if (const auto outcome = outcome_from_string(j.required_text("outcome"))) r.outcome = *outcome;
  else j.fail("outcome", "one of " + outcome_names());
  r.outcome_reason = j.text("outcome_reason");
  r.config = j.object("config").json();
  const JsonFields e = j.object("environment");
  auto& env = r.environment;
  env.dyno_revision = e.text("dyno_revision");
  env.libtorch_version = e.text("libtorch_version");
  env.cuda_version = e.text("cuda_version");
  env.cudnn_version = e.text("cudnn_version");
  env.device = e.text("device");
  env.device_name = e.text("device_name");
  env.cpu_model = e.text("cpu_model");
  env.cores = e.integer("cores");
  env.memory_bytes = e.integer("memory_bytes");
  env.threads = e.integer("threads");
  env.host = e.text("host");
  if (!j.has("summary")) throw UserError("report", where + " has no 'summary' field; is this a dyno run report?");
  const JsonFields s = j.object("summary");
  auto& o = r.summary;
  o.throughput_unit = s.text("throughput_unit", "samples");
  if (!s.json().contains("samples_per_second"))
    throw UserError("report", where + ": summary has no 'samples_per_second' field; is this a dyno run report?");
  o.samples_per_second = number_at(s, "samples_per_second");
  o.samples_per_second_spread = number_at(s, "samples_per_second_spread");
  if (s.has("time_to_target_s")) o.time_to_target_s = s.number("time_to_target_s");
  if (s.has("final_metric")) {
    const JsonFields m = s.object("final_metric");
    o.metric_name = m.text("name");
    o.final_metric = number_at(m, "value", std::nan(""));
    o.higher_is_better = m.flag("higher_is_better", true);
  }
  o.target = s.number("target");
  o.target_reached = s.flag("target_reached");
  o.peak_memory_bytes = s.integer("peak_memory_bytes");
  o.peak_memory_kind = s.text("peak_memory_kind");
  o.host_huge_page_bytes = s.integer("host_huge_page_bytes");
  o.steps = s.integer("steps");
  o.skipped_steps = s.integer("skipped_steps");
  o.epochs = s.number("epochs");
  o.wall_time_s = s.number("wall_time_s");
  o.stop_reason = s.text("stop_reason");
  r.throughput_windows = j.numbers("throughput_windows");
  const JsonFields c = j.object("curves");
  r.loss_curve = curve_from_json(c, "loss");
  r.metric_curve = curve_from_json(c, "metric");
  r.lr_curve = curve_from_json(c, "lr");
  for (const auto& [name, p] : j.object("phases").json().items()) {
    const JsonFields phase(p, "report", where + ": phases." + name);
    r.phases[name] = {phase.number("total_s"), phase.number("per_step_ms"), phase.number("fraction")};
  }
  r.world_size = j.integer("world_size", 1);
  if (j.has("ranks")) {
    if (!j.json()["ranks"].is_array()) j.fail("ranks", "an array of per-rank objects");
    for (const auto& rank : j.json()["ranks"]) {
      const JsonFields k(rank, "report", where + ": ranks[]");
      r.ranks.push_back({k.integer("rank"), k.number("samples_per_second"), k.number("wall_time_s")});
    }
  }
  if (j.has("profile")) r.profile = profile_from_json(j.json()["profile"], where + ": profile");
  if (j.has("verdict")) r.verdict = verdict_from_json(j.json()["verdict"], where + ": verdict");
  return r;
}

void write_report(const std::string& path, const RunReport& report) {
  write_file_atomically(path, to_json(report).dump(2) + "\n");
}

RunReport read_report(const std::string& path) {
  return report_from_json(read_json_file(path, "report"), "'" + path + "'");
}

}  // namespace dyno
