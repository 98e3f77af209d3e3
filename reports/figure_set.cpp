#include "reports/figure_set.h"

#include "reports/atomic_file.h"
#include "reports/machine_fingerprint.h"
#include "reports/run_report.h"
#include "reports/user_error.h"

namespace dyno {
namespace {

FigureSet from_google_benchmark(const nlohmann::json& j, const std::string& what) {
  FigureSet set;
  set.kind = "google-benchmark";
  const auto& context = j.value("context", nlohmann::json::object());
  set.environment = {{"host", context.value("host_name", "")}, {"cores", context.value("num_cpus", 0)},
                     {"mhz_per_cpu", context.value("mhz_per_cpu", 0)}};
  if (context.contains("dyno_environment")) set.environment = context["dyno_environment"];
  for (const auto& b : j["benchmarks"]) {
    if (b.value("run_type", "iteration") != "iteration" || b.contains("error_occurred")) continue;
    const std::string name = b.value("run_name", b.value("name", ""));
    if (!b.contains("real_time") || !b["real_time"].is_number())
      throw UserError("compare", what + ": benchmark '" + name + "' has no numeric real_time");
    auto& time = set.metrics[name + " real_time"];
    time.higher_is_better = false;
    time.unit = b.value("time_unit", "ns");
    time.values.push_back(b["real_time"].get<double>());
    if (b.contains("items_per_second") && b["items_per_second"].is_number()) {
      auto& items = set.metrics[name + " items_per_second"];
      items.higher_is_better = true;
      items.unit = "items/s";
      items.values.push_back(b["items_per_second"].get<double>());
    }
  }
  if (set.metrics.empty()) throw UserError("compare", what + " holds no benchmark iterations");
  return set;
}

}  // namespace

FigureSet figure_set_from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw UserError("compare", what + " is not a JSON object");
  if (j.contains("benchmarks") && j["benchmarks"].is_array()) return from_google_benchmark(j, what);
  check_schema_version(j, what);
  const std::string kind = j.value("kind", "run");
  FigureSet set;
  set.kind = kind;
  set.environment = j.value("environment", nlohmann::json::object());
  if (kind == "run") {
    RunReport r = report_from_json(j);
    auto& m = set.metrics["samples_per_second"];
    m.unit = r.summary.throughput_unit + "/s";
    m.values = r.throughput_windows;
  } else if (kind == "baseline" || kind == "check") {
    if (!j.contains("runs") || !j["runs"].is_array())
      throw UserError("compare", what + " has no 'runs' list of per-run figures");
    auto& m = set.metrics["samples_per_second"];
    m.unit = j.value("unit", "samples/s");
    for (const auto& v : j["runs"]) {
      if (!v.is_number()) throw UserError("compare", what + ": run figure " + v.dump() + " is not a number");
      m.values.push_back(v.get<double>());
    }
  } else {
    throw UserError("compare", what + " is a '" + kind + "' report; compare takes run reports, check baselines or Google Benchmark JSON");
  }
  return set;
}

FigureSet load_figure_set(const std::string& path) {
  const nlohmann::json j = read_json_file(path, "compare");
  try {
    return figure_set_from_json(j, "'" + path + "'");
  } catch (const nlohmann::json::exception& e) {
    throw UserError("compare", "'" + path + "' is malformed: " + e.what());
  }
}

std::vector<std::string> environment_differences(const nlohmann::json& a, const nlohmann::json& b) {
  const auto first = MachineFingerprint::of(a), second = MachineFingerprint::of(b);
  std::vector<std::string> out;
  for (const auto& key : first.differing_fields(second))
    out.push_back(key + ": " + first.fields()[key].dump() + " vs " + second.fields()[key].dump());
  return out;
}

}  // namespace dyno
