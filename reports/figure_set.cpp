#include "dyno/reports/figure_set.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/machine_fingerprint.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

FigureSet from_google_benchmark(const JsonFields& j, const std::string& what) {
  FigureSet set;
  set.kind = "google-benchmark";
  const JsonFields context = j.object("context");
  set.environment = {{"host", context.text("host_name")}, {"cores", context.integer("num_cpus")}, {"mhz_per_cpu", context.number("mhz_per_cpu")}};
  if (context.has("dyno_environment")) set.environment = context.object("dyno_environment").json();
  for (const auto& benchmark : j.json()["benchmarks"]) {
    const JsonFields b(benchmark, "compare", what + ": a benchmark");
    const std::string name = b.text("run_name", b.text("name"));
    if (b.flag("error_occurred")) {
      set.errors[name] = b.text("error_message", "error");
      continue;
    }
    if (b.text("run_type", "iteration") != "iteration") continue;
    if (!b.has("real_time")) throw UserError("compare", what + ": benchmark '" + name + "' has no real_time");
    const JsonFields figures(benchmark, "compare", what + ": benchmark '" + name + "'");
    // In nanoseconds whatever the benchmark's unit: a benchmark whose unit changed between the
    // two files is still compared like with like.
    const double ns_per = google_benchmark_ns_per(b.text("time_unit", "ns"), "compare", what + ": benchmark '" + name + "'");
    auto& time = set.metrics[name + " real_time"];
    time.higher_is_better = false;
    time.unit = "ns";
    time.values.push_back(figures.positive_number("real_time") * ns_per);
    if (b.has("items_per_second") && b.number("items_per_second") != 0) {  // (0: it processed no items, SetItemsProcessed(0))
      auto& items = set.metrics[name + " items_per_second"];
      items.higher_is_better = true;
      items.unit = "items/s";
      items.values.push_back(figures.positive_number("items_per_second"));
    }
  }
  if (set.metrics.empty()) throw UserError("compare", what + " holds no benchmark iterations");
  return set;
}

}  // namespace

double google_benchmark_ns_per(const std::string& unit, const std::string& area, const std::string& what) {
  static const std::map<std::string, double> ns_per = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  const auto it = ns_per.find(unit);
  if (it == ns_per.end()) throw UserError(area, what + " has time_unit '" + unit + "'; Google Benchmark's are ns, us, ms and s");
  return it->second;
}

FigureSet figure_set_from_json(const nlohmann::json& json, const std::string& what) {
  if (!json.is_object()) throw UserError("compare", what + " is not a JSON object");
  const JsonFields j(json, "compare", what);
  if (j.has("benchmarks") && json["benchmarks"].is_array()) return from_google_benchmark(j, what);
  check_schema_version(json, what);
  const std::string kind = j.text("kind", "run");
  FigureSet set;
  set.kind = kind;
  set.environment = j.object("environment").json();
  if (j.has("config")) set.config = j.object("config").json();
  if (kind == "run") {
    RunReport r = report_from_json(json, what);
    set.figure = "window";  // each figure one window of the run, not a run's own figure
    auto& m = set.metrics["samples_per_second"];
    m.unit = r.summary.throughput_unit + "/s";
    // A long run's windows: kMostRunWindows of them drawn at random with a fixed seed (each still
    // one window, so both sides keep a window's distribution, and no period of the run aliases
    // with a stride): the shift's estimate takes every pair, n x m.
    std::vector<size_t> kept(r.throughput_windows.size());
    std::iota(kept.begin(), kept.end(), size_t{0});
    if (kept.size() > kMostRunWindows) {
      std::mt19937_64 random(20261126);
      for (size_t i = 0; i < kMostRunWindows; ++i) std::swap(kept[i], kept[i + random() % (kept.size() - i)]);
      kept.resize(kMostRunWindows);
      std::sort(kept.begin(), kept.end());
    }
    for (size_t i : kept) {
      if (const double w = r.throughput_windows[i]; !(w > 0) || !std::isfinite(w))
        throw UserError("compare", what + ": throughput_windows[" + std::to_string(i) + "] is " + nlohmann::json(w).dump() + "; expected a throughput above 0");
      m.values.push_back(r.throughput_windows[i]);
    }
  } else if (kind == "check" && j.has("failure")) {  // its candidate failed: a FAIL, where it is the candidate
    set.errors["samples_per_second"] = "the check's candidate failed: " + j.text("failure");
  } else if (kind == "check" && j.text("verdict", "") == "NOT_COMPARABLE") {
    throw UserError("compare", what + " is a NOT_COMPARABLE check: it measured nothing (the machine differed from its baseline's)");
  } else if (kind == "baseline" || kind == "check") {
    auto& m = set.metrics["samples_per_second"];
    m.unit = j.text("unit", "samples/s");
    if (m.unit.size() < 3 || m.unit.compare(m.unit.size() - 2, 2, "/s") != 0)
      throw UserError("compare", what + ": unit '" + m.unit + "' is not a throughput (items per second, as samples/s)");
    set.figure = j.text("figure", kind == "baseline" ? "median" : "");  // baselines from before the field held medians
    m.values = j.throughputs("runs", 1);
  } else {
    throw UserError("compare", what + " is a '" + kind + "' report; compare takes run reports, check baselines or Google Benchmark JSON");
  }
  return set;
}

FigureSet load_figure_set(const std::string& path) { return figure_set_from_json(read_json_file(path, "compare"), "'" + path + "'"); }

std::vector<std::string> environment_differences(const nlohmann::json& a, const nlohmann::json& b) {
  const auto first = MachineFingerprint::of(a), second = MachineFingerprint::of(b);
  std::vector<std::string> out;
  for (const auto& key : first.differing_fields(second))
    out.push_back(key + ": " + first.fields()[key].dump() + " vs " + second.fields()[key].dump());
  return out;
}

std::vector<std::string> config_differences(const nlohmann::json& a, const nlohmann::json& b, const std::string& area) {
  const nlohmann::json none;
  if (a.empty() || b.empty()) return {};  // (a file that does not say: nothing to tell)
  if (a.value("workload", none) != b.value("workload", none) && a.contains("workload") && b.contains("workload"))
    throw UserError(area, "the workloads differ (" + a["workload"].dump() + " vs " + b["workload"].dump() +
                              "): their throughputs are not one measurement; compare runs of one workload");
  std::vector<std::string> out;
  for (const auto& [key, value] : a.items())
    if (key != "save_state" && key != "resume_state" && b.value(key, none) != value) out.push_back(key + ": " + value.dump() + " vs " + b.value(key, none).dump());
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) out.push_back(key + ": null vs " + value.dump());
  return out;
}

}  // namespace dyno
