// A deterministic synthetic objective with a known optimum, for testing strategies without
// training anything: throughput is a product of per-knob factors with one interaction (bf16
// moves the best batch from 256 to 512), batch 1024 runs out of memory, and at low budget
// levels the measurement carries a deterministic pseudo-noise that shrinks as the level grows.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "dyno/tuner/search_space.h"
#include "dyno/tuner/trial_executor.h"

namespace dyno::testing {

inline SearchSpace synthetic_space() {
  SearchSpace s;
  s.set_axis("threads", {1, 2, 4});
  s.set_axis("num_workers", {0, 1, 2, 3});
  s.set_axis("batch_size", {16, 32, 64, 128, 256, 512, 1024});
  s.set_axis("amp", {"off", "bf16"});
  s.set_axis("set_to_none", {false, true});
  s.set_axis("channels_last", {false, true});
  return s;
}

inline nlohmann::json synthetic_optimum() {
  return {{"threads", 2}, {"num_workers", 2}, {"batch_size", 512}, {"amp", "bf16"}, {"set_to_none", true}, {"channels_last", true}};
}

class SyntheticExecutor : public TrialExecutor {
 public:
  double noise_at_level_one = 0.0;  // relative amplitude of the pseudo-noise at budget level 1
  int executions = 0;

  static double value(const nlohmann::json& p) {
    static const std::map<int64_t, double> batch = {{16, 100}, {32, 180}, {64, 300}, {128, 420}, {256, 480}, {512, 470}, {1024, 0}};
    static const std::map<int64_t, double> workers = {{0, 1.0}, {1, 1.3}, {2, 1.4}, {3, 1.35}};
    static const std::map<int64_t, double> threads = {{1, 1.0}, {2, 1.6}, {4, 1.5}};
    const auto b = p.value("batch_size", int64_t{64});
    double v = batch.at(b) * workers.at(p.value("num_workers", int64_t{0})) * threads.at(p.value("threads", int64_t{1}));
    if (p.value("amp", std::string("off")) == "bf16") v *= b >= 512 ? 1.3 : 1.2;
    if (p.value("channels_last", false)) v *= 1.1;
    if (p.value("set_to_none", false)) v *= 1.05;
    if (p.value("host_allocator", std::string("system")) == "retain") v *= 1.15;
    return v;
  }

  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    ++executions;
    const int64_t budget_level = request.budget_level;
    Trial t;
    t.point = point;
    t.budget_level = budget_level;
    t.wall_time_s = 1.0 * static_cast<double>(request.units);
    t.peak_memory_bytes = point.value("batch_size", int64_t{64}) * 1000;
    if (point.value("batch_size", int64_t{64}) >= 1024) {
      t.outcome = Outcome::Oom;
      t.reason = "synthetic out of memory";
      return t;
    }
    const double noise = noise_at_level_one / static_cast<double>(budget_level) *
                         std::sin(static_cast<double>(std::hash<std::string>{}(point.dump()) % 1000));
    t.samples_per_second = value(point) * (1 + noise);
    t.ci_low = t.samples_per_second * 0.99;
    t.ci_high = t.samples_per_second * 1.01;
    // A lost race stops after a fifth of the trial.
    if (request.stop_below > 0 && t.ci_high < request.stop_below) {
      t.wall_time_s *= 0.2;
      t.reason = "stopped early";
      t.outpaced_by = request.race_id;
    }
    return t;
  }
};

}  // namespace dyno::testing
