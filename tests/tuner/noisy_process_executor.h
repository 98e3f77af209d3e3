// The synthetic objective (synthetic_executor.h) measured the way a shared machine measures it:
// each execution is a new process with its own speed (a between-process factor, log-normal, and
// now and then a slow spell), and its windows scatter around that speed. Seeded: the same seed
// gives the same measurements in the same order.
#pragma once

#include <cmath>
#include <random>

#include "synthetic_executor.h"
#include "dyno/tuner/trial.h"

namespace dyno::testing {

struct ProcessNoise {
  double between_process = 0.06;  // sigma of log(process speed / true speed)
  double slow_spell_chance = 0.10;
  double slow_spell_factor = 0.75;
  double within_process = 0.03;   // sigma of a window around its process's speed
  int windows_per_unit = 16;
};

class NoisyProcessExecutor : public TrialExecutor {
 public:
  NoisyProcessExecutor(uint64_t seed, ProcessNoise noise) : rng_(seed * 1000003ULL + 11), noise_(noise) {}

  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.wall_time_s = static_cast<double>(request.units);
    t.peak_memory_bytes = point.value("batch_size", int64_t{64}) * 1000;
    const double truth = SyntheticExecutor::value(point);
    if (truth <= 0) {
      t.outcome = Outcome::Oom;
      t.reason = "synthetic out of memory";
      return t;
    }
    std::normal_distribution<double> between(0.0, noise_.between_process), within(0.0, noise_.within_process);
    std::bernoulli_distribution slow(noise_.slow_spell_chance);
    const double process_speed = truth * std::exp(between(rng_)) * (slow(rng_) ? noise_.slow_spell_factor : 1.0);
    for (int64_t w = 0; w < noise_.windows_per_unit * request.units; ++w) t.windows.push_back(process_speed * (1.0 + within(rng_)));
    set_throughput_from_windows(t);
    if (request.stop_below > 0 && t.ci_high < request.stop_below) {
      t.reason = "stopped early";
      t.outpaced_by = request.race_id;
      t.wall_time_s *= 0.3;  // a lost race stops after its first few windows
    }
    return t;
  }

 private:
  std::mt19937_64 rng_;
  ProcessNoise noise_;
};

}  // namespace dyno::testing
