// Tuner: the bookkeeping every search strategy shares. Strategies ask measure(point) and never
// time anything; the Tuner runs the trial through its executor (once: results are memoised by
// point and budget level), applies the convergence guard, appends each finished trial to the
// journal (flushed, so a killed run resumes with nothing lost or repeated), enforces the budget,
// and compares trials noise-aware: overlapping 95% intervals are a tie, broken toward the
// simpler (fewer knobs changed from the start point), then (when asked) the smaller batch, then the
// cheaper config (clearly less memory, by an amount that matters on the device: see
// TunerOptions::memory_capacity_bytes), and last the higher median.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/convergence_guard.h"
#include "tuner/search_space.h"
#include "tuner/trial.h"
#include "tuner/trial_executor.h"

namespace dyno {

// The stage of a trial a strategy measures at a higher budget level to settle one comparison
// during its search (not a confirmation): see Tuner::best().

// Thrown by measure() when the trial or time budget is spent; strategies let it propagate.
struct BudgetExhausted {};
// Thrown by measure() when the user interrupted the run (the journal is intact: resume later).
struct TuningInterrupted {};

struct TunerOptions {
  std::string strategy = "staged";
  std::string objective = "throughput";  // throughput | time-to-target
  int64_t max_trials = 0;                // 0 = no limit
  double budget_s = 0;                   // sum of trial wall times; 0 = no limit
  uint64_t seed = 0;
  // The memory the trials share: --memory-limit, else the device's (RAM on the CPU). A tie is
  // broken toward less memory only when the saving is material, 5% of the larger figure and
  // kMaterialMemoryShare of this; below that the higher median wins. (A 61 MiB saving, b128
  // against b256 bf16 on a 24 GiB machine, chose the smaller batch on every tie, ~15% slower.)
  // 0 = unknown: any 5% saving breaks a tie.
  int64_t memory_capacity_bytes = 0;
  static constexpr double kMaterialMemoryShare = 0.02;
  // A tie is broken toward the smaller batch before memory and the median (after simplicity): set
  // for the throughput phase of a time-to-target run, where a larger batch takes fewer steps per
  // epoch and usually more epochs to reach the target (session 9's cnn-ttt2: bf16 b1024 tied with
  // b512 and won on its median; none of phase 2's 16 trials at 1024 reached the target in the cap).
  bool ties_prefer_smaller_batch = false;
  std::string journal_path;              // empty = no journal
  bool resume = false;
  ConvergenceGuard guard;
  std::function<void(const Trial&, const class Tuner&)> on_trial;  // progress reporting
};

class Tuner {
 public:
  Tuner(SearchSpace space, nlohmann::json start_point, TrialExecutor& executor, TunerOptions options);

  // Measures `point` at `budget_level` (once: memoised). A throughput measurement at level L > 1
  // continues the point's highest lower level (runs the missing level-1 units, pools the windows).
  // With `race`, the trial may stop as soon as it is clearly slower than that trial (its whole
  // interval below race's): the decision Tuner::better would make is already known. A raced
  // throughput candidate that is not preferred to `race` gets no fp32 reference measured for it
  // (guard_pending): it is not adopted, and a higher level that measures it checks it then.
  // (A copy: the tuner's trial list grows with every measurement, so a reference into it would not last.)
  Trial measure(const nlohmann::json& point, const std::string& stage, int64_t budget_level = 1, const Trial* race = nullptr);
  // A run of a chosen point after the search, with another executor: a verification to the
  // target (stage "verify") or a profile (stage "profile"). Journaled, memoised under
  // "<stage>:<label>:" keys, not counted against the search budget. `budget_level` picks the seed
  // of an executor whose level L is the L-th seed.
  Trial verify(TrialExecutor& executor, const nlohmann::json& point, const std::string& label, int64_t budget_level = 1,
                      const std::string& stage = kVerifyStage);
  // Runs the named strategy until it is done or the budget is spent.
  void run();

  // a is preferred to b (see the header comment). Failed trials lose to any ok trial.
  bool better(const Trial& a, const Trial& b) const;
  // The preferred ok trial (at the highest budget level measured; a point that failed at a
  // higher level than the trial's is passed over), or nullptr.
  const Trial* best() const;
  // The preferred candidate among those `admit` accepts, or nullptr.
  const Trial* best_where(const std::function<bool(const Trial&)>& admit) const;
  // Confirmation: the `count` fastest distinct points of budget level 1 are measured again at
  // levels 2 to `level` (stage "confirm"; a point that fails at one level is not measured at the
  // next; for throughput, each races the best confirmed before it; when none passes every level,
  // up to `count` more points are, in rank order, until one does), so that best() chooses among
  // the top level's measurements only: the fastest of many
  // short, noisy trials is biased upward. Level 2 is a second process pooled with the first
  // (throughput) or the next seed, with an objective over both seeds (time to target; level 3:
  // three seeds, and so on).
  void confirm_best(size_t count, int64_t level = 2);
  // Throughput up, peak memory down, over ok trials past the guard (not guard_pending).
  std::vector<const Trial*> pareto_front() const;

  const SearchSpace& space() const { return space_; }
  const nlohmann::json& start_point() const { return start_point_; }
  const TunerOptions& options() const { return options_; }
  const std::vector<Trial>& trials() const { return trials_; }
  int64_t executed_trials() const;  // trials that count against the budget
  double spent_s() const;
  bool budget_left() const;
  int64_t complexity(const nlohmann::json& point) const;  // knobs changed from the start point
  bool resumed_from_journal() const { return resumed_; }

 private:
  // measure(), asking for only the first `loss_windows` windows of the loss trajectory (0 = all).
  Trial measure_losses_up_to(const nlohmann::json& point, const std::string& stage, int64_t budget_level, const Trial* race,
                                    int64_t loss_windows);
  const Trial* find(const nlohmann::json& point, int64_t budget_level) const;
  const Trial* highest_lower_level(const nlohmann::json& point, int64_t budget_level) const;
  std::optional<std::vector<double>> reference_losses(const nlohmann::json& point, int64_t budget_level, size_t windows, bool may_measure,
                                                     bool& deferred);
  double seeds_objective(const Trial& trial) const;
  void append_to_journal(const Trial& trial);
  void load_journal();

  SearchSpace space_;
  nlohmann::json start_point_;
  TrialExecutor& executor_;
  TunerOptions options_;
  std::vector<Trial> trials_;
  std::map<std::string, size_t> by_key_;
  bool resumed_ = false;
  int64_t awaiting_reference_ = 0;  // trials executed but waiting for their guard reference
  int64_t confirmed_level_ = 1;     // the highest level confirm_best() was asked for (see best())
};

// The journal's first line: what the run was, so --resume can refuse a mismatched one.
nlohmann::json journal_header(const TunerOptions& options, const SearchSpace& space, const nlohmann::json& base_config);

}  // namespace dyno
