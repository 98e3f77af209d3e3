// Tuner: the bookkeeping every search strategy shares, and its one way of deciding (docs/tuner.md).
// Strategies ask measure(point) and compare(a, b); the Tuner runs each trial once (memoised by
// point and budget level), applies the convergence guard, journals it and enforces the budget.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dyno/tuner/convergence_guard.h"
#include "dyno/tuner/decision.h"
#include "dyno/tuner/evidence.h"
#include "dyno/tuner/noise_model.h"
#include "dyno/tuner/search_space.h"
#include "dyno/tuner/trial.h"
#include "dyno/tuner/trial_executor.h"

namespace dyno {

// Thrown by measure() when the trial or time budget is spent; strategies let it propagate.
struct BudgetExhausted {};
// Thrown by measure() when the user interrupted the run (the journal is intact: resume later).
struct TuningInterrupted {};

struct TunerOptions {
  std::string strategy = "staged";
  std::string objective = "throughput";  // throughput | time-to-target
  bool throughput() const { return objective == "throughput"; }  // else time to target: a process is a seed
  int64_t max_trials = 0;                // 0 = no limit
  double budget_s = 0;                   // sum of trial wall times; 0 = no limit
  uint64_t seed = 0;
  // The memory the trials share (--memory-limit, else the device's; 0 = unknown): a tie-break.
  int64_t memory_capacity_bytes = 0;
  static constexpr double kMaterialMemoryShare = 0.02;
  // Time to target's phase 1: a larger batch must be shown better (docs/tuner.md, "Time to target").
  bool ties_prefer_smaller_batch = false;
  DecisionRule decision;
  std::string journal_path;              // empty = no journal
  bool resume = false;
  ConvergenceGuard guard;
  std::function<void(const Trial&, const class Tuner&)> on_trial;  // progress reporting
};

class Tuner {
 public:
  Tuner(SearchSpace space, nlohmann::json start_point, TrialExecutor& executor, TunerOptions options);

  // Measures `point` at `budget_level` (once: memoised) in one process (docs/tuner.md, "Budget
  // levels"); with `race`, the trial may stop once it cannot beat race's point (race_bar).
  Trial measure(const nlohmann::json& point, const std::string& stage, int64_t budget_level = 1, const Trial* race = nullptr,
                int64_t loss_windows = 0);
  // Measures `point` in one more process (the level above its highest measured one).
  Trial measure_again(const nlohmann::json& point, const std::string& stage);
  // A run of a chosen point after the search ("verify", "profile"): journaled, outside the budget.
  Trial verify(TrialExecutor& executor, const nlohmann::json& point, const std::string& label, int64_t budget_level = 1,
                      const std::string& stage = kVerifyStage);
  // Runs the named strategy until it is done or the budget is spent.
  void run();

  // Every process that measured `point` in this run so far (on a resume: so far in the replay).
  PointEvidence evidence(const nlohmann::json& point) const;
  // The between-process noise, fitted to every point measured more than once (NoiseModel::fit).
  NoiseModel noise() const;
  // The estimate in the objective's units (samples/s, or 1 / seconds to the target), under noise().
  double estimated_objective(const nlohmann::json& point) const;
  // decide(a, b) on the evidence as it stands.
  Comparison judge(const nlohmann::json& a, const nlohmann::json& b) const { return decide(evidence(a), evidence(b), noise(), options_.decision); }
  // decide(a, b), measuring the less-measured point once more until it is answered(), both have
  // DecisionRule::max_processes or the budget is short (reserve); then settled. Never "not known".
  Verdict compare(const nlohmann::json& a, const nlohmann::json& b, const std::string& stage);
  // The processes the strategy needs after the current comparison: compare() leaves them in the budget.
  void reserve(int64_t processes) { reserved_ = processes; }
  // Whether `a` is preferred to `b` given their verdict: the better one, or for equivalent points
  // the tie-breaks (docs/tuner.md, rule 8).
  bool preferred(Verdict verdict, const nlohmann::json& a, const nlohmann::json& b) const;
  // The final race (docs/tuner.md) of at most `max_rounds` rounds; its winner is best() from then on.
  void final_race(std::vector<nlohmann::json> points, int64_t max_rounds);
  // `points` less those with a failed process or no evidence, the highest estimate first, then the
  // simpler, then by key: a strict weak ordering (pairwise verdicts are not one).
  std::vector<nlohmann::json> ranked(const std::vector<nlohmann::json>& points) const;
  std::vector<nlohmann::json> leading_points(size_t count) const;  // the `count` measured candidates ranked first
  // The latest trial of the race's winner, else of the highest estimate; nullptr when none succeeded.
  const Trial* best() const;
  // The point's trial at its highest budget level, or nullptr.
  const Trial* latest(const nlohmann::json& point) const;
  // The configurations ranked() over the search's processes, each with the most peak memory any of
  // them needed, by that memory: one is on the front when ranked before every one needing no more.
  std::vector<std::pair<nlohmann::json, int64_t>> pareto_front() const;

  const SearchSpace& space() const { return space_; }
  const nlohmann::json& start_point() const { return start_point_; }
  const TunerOptions& options() const { return options_; }
  const std::vector<Trial>& trials() const { return trials_; }
  int64_t executed_trials() const;  // trials that count against the budget (a resumed journal's once replayed)
  double spent_s() const;
  // Whether the budget left covers `processes` more trials (time at the mean trial time so far).
  bool budget_covers(int64_t processes) const;
  int64_t complexity(const nlohmann::json& point) const;  // knobs changed from the start point
  bool resumed_from_journal() const { return resumed_; }
  bool visible(const Trial& trial) const;  // part of this run: measured in it, or replayed from the journal

 private:
  const Trial* find(const nlohmann::json& point, int64_t budget_level) const;
  std::optional<std::vector<double>> reference_losses(const nlohmann::json& point, int64_t budget_level, size_t windows);
  double race_bar(const nlohmann::json& point) const;
  Verdict settled(const Comparison& comparison, const nlohmann::json& a, const nlohmann::json& b) const;
  std::optional<Trial> recall(const std::string& key);  // the memoised trial, now visible to a replay
  Trial record(Trial trial);                            // memoised, journaled, reported

  SearchSpace space_;
  nlohmann::json start_point_;
  TrialExecutor& executor_;
  TunerOptions options_;
  std::vector<Trial> trials_;
  std::map<std::string, size_t> by_key_;
  // A resumed run replays its search: a journaled trial counts as evidence only once the replay
  // has asked for it again, so every decision sees what it saw the first time.
  std::vector<bool> replayed_;
  bool resumed_ = false;
  int64_t next_id_ = 1;             // of the next trial executed (and its folder, trial-<id>)
  int64_t reserved_ = 0;            // processes the strategy needs after this comparison (reserve)
  std::optional<nlohmann::json> race_winner_;
  // noise() at a count of visible trials (only a trial becoming visible changes what it fits): every
  // decision asks for it, the fit runs once per change.
  mutable std::optional<std::pair<size_t, NoiseModel>> noise_cache_;
};

// The journal's first line: what the run was (--resume refuses another) and what its decisions weighed.
nlohmann::json journal_header(const TunerOptions& options, const SearchSpace& space, const nlohmann::json& base_config);

}  // namespace dyno
