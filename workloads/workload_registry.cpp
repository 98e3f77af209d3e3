#include "dyno/workloads/workload_registry.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include <c10/util/Exception.h>

#include "dyno/reports/knob.h"
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
    Workload w = in_workload_code("the DYNO_WORKLOAD in " + r.source_file, r.factory);
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
  const std::string in = "'" + w.name + "' (in " + source_file + "): ";
  if (!(w.target >= 0) || (w.metric_name == "accuracy" && w.target > 1))
    throw UserError("workload", in + "target " + nlohmann::json(w.target).dump() + " is not " +
                                    (w.metric_name == "accuracy" ? "an accuracy in (0, 1]" : "a loss above 0") + ", nor 0 (no target)");
  // The recipe is the workload's own: a knob's value is checked where a user sets it, these here.
  const Recipe& r = w.recipe;
  auto refuse = [&](const std::string& field, const nlohmann::json& value, const std::string& valid) {
    throw UserError("workload", in + "recipe." + field + " is " + value.dump() + "; " + valid);
  };
  // A recipe's optimizer and schedule are the knobs' choices but "auto" (which means the recipe's).
  for (const auto& [field, value] : {std::pair<std::string, std::string>{"optimizer", r.optimizer}, {"schedule", r.schedule}}) {
    std::vector<std::string> valid = find_knob(field)->choices;
    valid.erase(std::remove(valid.begin(), valid.end(), "auto"), valid.end());
    if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
      std::string listed = "give " + valid.front();
      for (size_t i = 1; i < valid.size(); ++i) listed += (i + 1 < valid.size() ? ", " : " or ") + valid[i];
      refuse(field, value, listed);
    }
  }
  if (!(r.lr > 0) || !std::isfinite(r.lr)) refuse("lr", r.lr, "give a positive learning rate");
  if (r.epochs < 1) refuse("epochs", r.epochs, "give 1 or more");
  if (r.reference_batch_size < 1) refuse("reference_batch_size", r.reference_batch_size, "give the batch the LR was tuned for, 1 or more");
  if (!(r.weight_decay >= 0) || !std::isfinite(r.weight_decay)) refuse("weight_decay", r.weight_decay, "give 0 or more");
  if (!(r.momentum >= 0 && r.momentum < 1)) refuse("momentum", r.momentum, "give a value in [0, 1)");
  if (!(r.warmup_fraction >= 0 && r.warmup_fraction < 1)) refuse("warmup_fraction", r.warmup_fraction, "give a share in [0, 1)");
}

std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

std::string exception_text(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    const std::string what = c10_error->what_without_backtrace();
    return what.substr(0, what.find('\n'));
  }
  std::string what = e.what();
  while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
  return what.substr(what.rfind('\n') + 1);
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
  return reference ? "fashion-mlp" : workloads.size() == 1 ? workloads.front().name : "";
}

const Workload& workload_or_throw(const std::string& name) {
  std::string names;
  for (const auto& w : all_workloads()) {
    if (w.name == name) return w;
    names += (names.empty() ? "" : ", ") + w.name;
  }
  if (names.empty())
    throw UserError("config", "this binary registers no workload (a DYNO_WORKLOAD in a static library is dropped by the linker: put it in an "
                              "OBJECT library or the executable's own sources); train a --model file (workload=" + std::string(kTorchScriptWorkload) + ")");
  if (name.empty())
    throw UserError("config", "workload: none named, and this binary has " + std::to_string(all_workloads().size()) + " (" + names +
                                  "); name one with -w NAME (or --set workload=NAME)");
  throw UserError("config", "workload: '" + name + "' is not one of " + names + " (see `workloads`), nor " + kTorchScriptWorkload + " (a --model file)");
}

Workload workload_for(const RunConfig& config) {
  if (config.workload == kTorchScriptWorkload) return scripted_workload(config);
  if (!config.model_file.empty())
    throw UserError("config", "model_file: '" + config.model_file + "' is set but workload is '" + config.workload + "'; set workload=" +
                                  kTorchScriptWorkload + " (train --model does) or leave model_file empty");
  return workload_or_throw(config.workload);
}

}  // namespace dyno
