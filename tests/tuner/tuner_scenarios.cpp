// dyno_tuner_scenarios: how often each strategy finds the optimum of the synthetic objective when
// every trial is a process with its own speed (between-process noise and slow spells:
// noisy_process_executor.h), over N seeds. Issue #19's goal: staged and halving within 3% of the
// optimum in at least 19 of 20 seeds. A benchmark of the tuner's decisions, not a test: it prints
// the figures against the goal.
//   build/tests/dyno_tuner_scenarios [SEEDS] [BETWEEN_PROCESS_SIGMA] [SLOW_SPELL_CHANCE]
// Environment: DYNO_SCENARIO_STRATEGY=staged runs that strategy alone; DYNO_SCENARIO_JOURNALS=DIR
// writes each run's journal to DIR/<strategy>-<seed>.jsonl, to read the decisions of a miss;
// DYNO_SCENARIO_INDIFFERENCE and DYNO_SCENARIO_MAX_PROCESSES replace DecisionRule's indifference and
// cap (tuner/decision.h), to measure what they trade between trials and quality.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "noisy_process_executor.h"
#include "dyno/tuner/tuner.h"

namespace {

using namespace dyno;

nlohmann::json start() {
  return {{"threads", 1}, {"num_workers", 0}, {"batch_size", 64}, {"amp", "off"}, {"set_to_none", false}, {"channels_last", false}};
}

void run_seeds(const std::string& strategy, int64_t max_trials, int seeds, const testing::ProcessNoise& noise) {
  if (const char* only = std::getenv("DYNO_SCENARIO_STRATEGY"); only && strategy != only) return;
  const double optimum = testing::SyntheticExecutor::value(testing::synthetic_optimum());
  int within = 0;
  int64_t trials = 0;
  double spent = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    testing::NoisyProcessExecutor executor(static_cast<uint64_t>(seed), noise);
    TunerOptions options;
    options.strategy = strategy;
    options.max_trials = max_trials;
    options.seed = static_cast<uint64_t>(seed);
    if (const char* dir = std::getenv("DYNO_SCENARIO_JOURNALS")) options.journal_path = std::string(dir) + "/" + strategy + "-" + std::to_string(seed) + ".jsonl";
    if (const char* value = std::getenv("DYNO_SCENARIO_INDIFFERENCE")) options.decision.indifference = std::atof(value);
    if (const char* value = std::getenv("DYNO_SCENARIO_MAX_PROCESSES")) options.decision.max_processes = static_cast<size_t>(std::atoi(value));
    Tuner tuner(testing::synthetic_space(), start(), executor, options);
    tuner.run();
    const Trial* best = tuner.best();
    const double found = best ? testing::SyntheticExecutor::value(best->point) : 0.0;
    within += found >= 0.97 * optimum;
    trials += tuner.executed_trials();
    spent += tuner.spent_s();
    // Where the pick differs from the optimum.
    std::string off;
    const nlohmann::json best_point = testing::synthetic_optimum();
    if (best)
      for (const auto& [knob, value] : best_point.items())
        if (best->point.value(knob, value) != value) off += " " + knob + "=" + best->point[knob].dump();
    std::printf("%-8s seed %2d: %5.1f%% of the optimum in %3lld trials%s\n", strategy.c_str(), seed, 100.0 * found / optimum,
                static_cast<long long>(tuner.executed_trials()), off.c_str());
  }
  std::printf("%-8s %d of %d seeds within 3%% of the optimum (goal: 19 of 20), %.1f trials a seed on average (the grid: %lld), %.1f%% of the grid's time\n\n",
              strategy.c_str(), within, seeds, static_cast<double>(trials) / seeds, static_cast<long long>(testing::synthetic_space().grid_size()),
              100.0 * spent / seeds / static_cast<double>(testing::synthetic_space().grid_size()));
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 20;
  testing::ProcessNoise noise;
  if (argc > 2) noise.between_process = std::atof(argv[2]);
  if (argc > 3) noise.slow_spell_chance = std::atof(argv[3]);
  if (seeds < 1 || noise.between_process < 0 || noise.slow_spell_chance < 0 || noise.slow_spell_chance > 1) {
    std::fprintf(stderr, "usage: dyno_tuner_scenarios [SEEDS >= 1] [BETWEEN_PROCESS_SIGMA >= 0] [SLOW_SPELL_CHANCE in 0..1]\n");
    return 2;
  }
  std::printf("synthetic objective (tests/tuner/synthetic_executor.h): between-process sigma %.3f, slow spells (x%.2f) in %.0f%% of "
              "processes, windows within a process sigma %.3f\n\n",
              noise.between_process, noise.slow_spell_factor, 100 * noise.slow_spell_chance, noise.within_process);
  run_seeds("staged", 0, seeds, noise);
  run_seeds("halving", 0, seeds, noise);  // every grid point in the first rung
  run_seeds("random", 30, seeds, noise);
  return 0;
}
