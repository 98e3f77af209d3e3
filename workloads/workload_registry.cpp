#include "dyno/workloads/workload_registry.h"

#include <algorithm>
#include <map>

#include "dyno/reports/run_config.h"
#include "dyno/reports/user_error.h"
#include "dyno/workloads/scripted_workload.h"

namespace dyno {
namespace {

struct Registration {
  WorkloadFactory factory;
  std::string source_file;
};

std::vector<Registration>& registrations() {
  static std::vector<Registration> table;
  return table;
}

std::vector<Workload> build_workloads() {
  std::vector<Workload> workloads;
  std::map<std::string, std::string> defined_in;
  for (const auto& r : registrations()) {
    Workload w = r.factory();
    check_registrable(w, r.source_file);
    auto [it, inserted] = defined_in.emplace(w.name, r.source_file);
    if (!inserted)
      throw UserError("workload", "'" + w.name + "' is registered twice (" + it->second + " and " + r.source_file +
                                      "); give each DYNO_WORKLOAD a unique name");
    workloads.push_back(std::move(w));
  }
  std::sort(workloads.begin(), workloads.end(), [](const Workload& a, const Workload& b) { return a.name < b.name; });
  return workloads;
}

}  // namespace

void check_registrable(const Workload& w, const std::string& source_file) {
  if (w.name.empty()) throw UserError("workload", "a DYNO_WORKLOAD in " + source_file + " has no name; set Workload::name");
  if (w.name == kTorchScriptWorkload)
    throw UserError("workload", "'" + w.name + "' (in " + source_file + ") is reserved for --model files; choose another name");
  if (!w.build_model || !w.load_data) throw UserError("workload", "'" + w.name + "' (in " + source_file + ") needs both build_model and load_data");
  // The metric decides which way the target is reached: a name the engine does not compute, or a
  // loss "reached" from below, would stop every run at its first evaluation.
  if (w.metric_name != "accuracy" && w.metric_name != "val_loss")
    throw UserError("workload", "'" + w.name + "' (in " + source_file + "): metric_name '" + w.metric_name +
                                    "' is not one of accuracy, val_loss (the two the engine evaluates)");
  if (w.higher_is_better != (w.metric_name == "accuracy"))
    throw UserError("workload", "'" + w.name + "' (in " + source_file + "): metric_name " + w.metric_name + " with higher_is_better " +
                                    (w.higher_is_better ? "true" : "false") + "; accuracy is higher-is-better, val_loss lower-is-better");
}

bool register_workload(WorkloadFactory factory, const char* source_file) noexcept {
  registrations().push_back({std::move(factory), source_file});
  return true;
}

const std::vector<Workload>& all_workloads() {
  static const std::vector<Workload> workloads = build_workloads();
  return workloads;
}

std::string default_workload() {
  const auto& workloads = all_workloads();
  const bool reference = std::any_of(workloads.begin(), workloads.end(), [](const Workload& w) { return w.name == "fashion-mlp"; });
  return !reference && workloads.size() == 1 ? workloads.front().name : "fashion-mlp";
}

const Workload& workload_or_throw(const std::string& name) {
  std::string names;
  for (const auto& w : all_workloads()) {
    if (w.name == name) return w;
    names += (names.empty() ? "" : ", ") + w.name;
  }
  throw UserError("config", "workload: '" + name + "' is not one of " + (names.empty() ? "(none registered)" : names) +
                                " (see `workloads`), nor " + kTorchScriptWorkload + " (a --model file)");
}

Workload workload_for(const RunConfig& config) {
  if (config.workload == kTorchScriptWorkload) return scripted_workload(config);
  if (!config.model_file.empty())
    throw UserError("config", "model_file: '" + config.model_file + "' is set but workload is '" + config.workload + "'; set workload=" +
                                  kTorchScriptWorkload + " (train --model does) or leave model_file empty");
  return workload_or_throw(config.workload);
}

}  // namespace dyno
