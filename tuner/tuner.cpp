#include "tuner/tuner.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "reports/atomic_file.h"
#include "reports/user_error.h"
#include "tuner/journal.h"
#include "tuner/strategy.h"

namespace dyno {

Tuner::Tuner(SearchSpace space, nlohmann::json start_point, TrialExecutor& executor, TunerOptions options)
    : space_(std::move(space)), start_point_(std::move(start_point)), executor_(executor), options_(std::move(options)) {
  if (options_.resume) load_journal();
}

void Tuner::load_journal() {
  for (auto& t : read_journal(options_.journal_path).trials) {
    by_key_[t.key] = trials_.size();
    trials_.push_back(std::move(t));
  }
  resumed_ = !trials_.empty();
}

void Tuner::append_to_journal(const Trial& trial) {
  if (options_.journal_path.empty()) return;
  append_line_durably(options_.journal_path, nlohmann::json{{"kind", "trial"}, {"trial", to_json(trial)}}.dump());
}

int64_t Tuner::executed_trials() const {
  int64_t n = 0;
  for (const auto& t : trials_) n += !t.after_search();
  return n;
}

double Tuner::spent_s() const {
  double s = 0;
  for (const auto& t : trials_)
    if (!t.after_search()) s += t.wall_time_s;
  return s;
}

bool Tuner::budget_left() const {
  if (options_.max_trials > 0 && executed_trials() >= options_.max_trials) return false;
  if (options_.budget_s > 0 && spent_s() >= options_.budget_s) return false;
  return true;
}

int64_t Tuner::complexity(const nlohmann::json& point) const {
  int64_t n = 0;
  for (const auto& [knob, value] : point.items())
    if (!start_point_.contains(knob) || start_point_[knob] != value) ++n;
  return n;
}

Trial Tuner::measure(const nlohmann::json& point, const std::string& stage, int64_t budget_level, const Trial* race) {
  return measure_losses_up_to(point, stage, budget_level, race, 0);
}

Trial Tuner::measure_losses_up_to(const nlohmann::json& point, const std::string& stage, int64_t budget_level,
                                  const Trial* race, int64_t loss_windows) {
  const std::string key = trial_key(point, budget_level);
  if (auto it = by_key_.find(key); it != by_key_.end()) return trials_[it->second];
  if (!budget_left()) throw BudgetExhausted{};
  const bool throughput = options_.objective == "throughput";
  // A throughput measurement at level L continues the point's highest measured lower level: it
  // runs the missing units only, in a new process (another moment of a noisy machine), and the
  // windows are pooled. (Time-to-target levels are seeds; seeds_objective pools those.)
  // (trials_ does not change until the guard below, so `lower` stays valid across execute().)
  const Trial* lower = throughput ? highest_lower_level(point, budget_level) : nullptr;
  TrialRequest request{budget_level, budget_level - (lower ? lower->budget_level : 0), 0.0, loss_windows};
  if (throughput && race && race->ok()) {
    request.stop_below = race->ci_low;
    request.race_id = race->id;
  }
  // While this trial waits for its guard reference, the reference takes the next id (and folder).
  const int64_t id = static_cast<int64_t>(trials_.size()) + 1 + awaiting_reference_;
  Trial trial = executor_.execute(point, request, "trial-" + std::to_string(id));
  if (trial.outcome == "interrupted") throw TuningInterrupted{};
  trial.id = id;
  trial.key = key;
  trial.stage = stage;
  if (trial.ok() && lower && !trial.windows.empty()) {
    trial.windows.insert(trial.windows.begin(), lower->windows.begin(), lower->windows.end());
    trial.pooled_with = lower->id;
    set_throughput_from_windows(trial);
  }
  trial.objective = trial.samples_per_second;
  if (!throughput) trial.objective = seeds_objective(trial);
  if (!throughput || (trial.ci_low == 0 && trial.ci_high == 0)) trial.ci_low = trial.ci_high = trial.objective;

  // A trial that reached its target has shown the convergence the guard stands in for: the guard
  // checks throughput trials, which measure speed over a few windows of training.
  if (trial.ok() && throughput) {
    // A raced candidate that lost is not adopted: a reference that would have to be measured for
    // it is deferred (the trial is guard_pending; its own trajectory is still checked).
    const bool lost_race = throughput && race && race->ok() && !better(trial, *race);
    const auto reference = trial.losses.empty() ? std::nullopt : reference_losses(point, budget_level, trial.losses.size(), !lost_race, trial.guard_pending);
    if (auto reason = options_.guard.check(trial.losses, reference ? &*reference : nullptr)) {
      trial.outcome = "rejected";
      trial.reason = *reason;
      trial.guard_pending = false;
    } else if (trial.guard_pending) {
      trial.reason += std::string(trial.reason.empty() ? "" : "; ") + "fp32 reference not measured: it lost to trial " +
                      std::to_string(race->id) + " (a reference is measured for a candidate that can be chosen)";
    }
  }
  by_key_[key] = trials_.size();
  trials_.push_back(trial);
  append_to_journal(trial);
  if (options_.on_trial) options_.on_trial(trials_.back(), *this);
  return trials_.back();
}

// The point's highest budget level below `budget_level` that measured fine and kept its windows.
const Trial* Tuner::highest_lower_level(const nlohmann::json& point, int64_t budget_level) const {
  for (int64_t level = budget_level - 1; level >= 1; --level)
    if (const Trial* t = find(point, level); t && t->ok() && !t->windows.empty()) return t;
  return nullptr;
}

const Trial* Tuner::find(const nlohmann::json& point, int64_t budget_level) const {
  const auto it = by_key_.find(trial_key(point, budget_level));
  return it == by_key_.end() ? nullptr : &trials_[it->second];
}

// The fp32 loss trajectory `point` (just measured, `windows` loss windows) is compared with, or
// nullopt when there is none to compare with: the point is fp32 already, it passed the guard at a
// lower budget level (its reference would have to be measured again, as a long trial), or no
// budget is left. A measured trial on the same trajectory serves; otherwise the reference is
// measured now, over the first windows only (ConvergenceGuard::reference_windows), and journaled
// before the candidate, so a resume finds it; or, when `may_measure` is false, not measured, and
// `deferred` is set.
std::optional<std::vector<double>> Tuner::reference_losses(const nlohmann::json& point, int64_t budget_level, size_t windows,
                                                           bool may_measure, bool& deferred) {
  const auto reference = options_.guard.reference_point(point);
  if (!reference) return std::nullopt;
  for (int64_t level = 1; level < budget_level; ++level)
    if (const Trial* earlier = find(point, level); earlier && earlier->ok() && !earlier->guard_pending) return std::nullopt;
  for (const auto& t : trials_)
    if (t.ok() && t.budget_level == budget_level && !t.losses.empty() && ConvergenceGuard::same_trajectory(t.point, *reference)) return t.losses;
  if (!may_measure) {
    deferred = true;
    return std::nullopt;
  }
  // While the candidate waits, its reference takes the next id (and trial folder).
  struct Awaiting {
    int64_t& count;
    explicit Awaiting(int64_t& c) : count(++c) {}
    ~Awaiting() { --count; }
  } awaiting(awaiting_reference_);
  try {
    const auto needed = static_cast<int64_t>(options_.guard.reference_windows(windows));
    const Trial& ref = measure_losses_up_to(*reference, kGuardReferenceStage, budget_level, nullptr, needed);
    if (ref.ok()) return ref.losses;
  } catch (const BudgetExhausted&) {
    // No budget for the reference: the candidate is judged on its own trajectory.
  }
  return std::nullopt;
}

// Time to target: level L of a point is its L-th seed, so its objective is over all L seeds,
// L / (sum of their times); 0 when any of them missed the target.
double Tuner::seeds_objective(const Trial& trial) const {
  if (!trial.time_to_target_s || *trial.time_to_target_s <= 0) return 0.0;
  double total = *trial.time_to_target_s;
  for (int64_t level = 1; level < trial.budget_level; ++level) {
    const Trial* earlier = find(trial.point, level);
    if (!earlier || !earlier->ok() || !earlier->time_to_target_s || *earlier->time_to_target_s <= 0) return 0.0;
    total += *earlier->time_to_target_s;
  }
  return static_cast<double>(trial.budget_level) / total;
}

Trial Tuner::verify(TrialExecutor& executor, const nlohmann::json& point, const std::string& label, int64_t budget_level,
                          const std::string& stage) {
  const std::string key = stage + ":" + label + ":" + point_key(point);
  if (auto it = by_key_.find(key); it != by_key_.end()) return trials_[it->second];
  const int64_t id = static_cast<int64_t>(trials_.size()) + 1;
  TrialRequest request;
  request.budget_level = budget_level;
  Trial trial = executor.execute(point, request, stage + "-" + label);
  if (trial.outcome == "interrupted") throw TuningInterrupted{};
  trial.id = id;
  trial.key = key;
  trial.stage = stage;
  trial.objective = trial.time_to_target_s ? 1.0 / std::max(*trial.time_to_target_s, 1e-9) : 0.0;
  by_key_[key] = trials_.size();
  trials_.push_back(trial);
  append_to_journal(trial);
  if (options_.on_trial) options_.on_trial(trials_.back(), *this);
  return trials_.back();
}

bool Tuner::better(const Trial& a, const Trial& b) const {
  if (a.ok() != b.ok()) return a.ok();
  if (!a.ok()) return false;
  // A race decided on the loser's own windows stands (pooling can widen its interval into a tie).
  if (a.id != 0 && b.outpaced_by == a.id) return true;
  if (b.id != 0 && a.outpaced_by == b.id) return false;
  if (a.ci_low > b.ci_high) return true;
  if (b.ci_low > a.ci_high) return false;
  // A tie: prefer the simpler configuration, then (when asked) the smaller batch, then the one that
  // needs materially less memory.
  const int64_t ca = complexity(a.point), cb = complexity(b.point);
  if (ca != cb) return ca < cb;
  if (options_.ties_prefer_smaller_batch) {
    const auto ba = a.point.find("batch_size"), bb = b.point.find("batch_size");
    if (ba != a.point.end() && bb != b.point.end() && ba->is_number() && bb->is_number() && *ba != *bb) return *ba < *bb;
  }
  if (a.peak_memory_bytes > 0 && b.peak_memory_bytes > 0) {
    const double saving = static_cast<double>(b.peak_memory_bytes - a.peak_memory_bytes);
    const double material = std::max(0.05 * static_cast<double>(std::max(a.peak_memory_bytes, b.peak_memory_bytes)),
                                      TunerOptions::kMaterialMemoryShare * static_cast<double>(options_.memory_capacity_bytes));
    if (saving > material) return true;
    if (-saving > material) return false;
  }
  return a.objective > b.objective;
}

// The highest level measured decides, but a point that failed at a level above the one it is
// judged at is not chosen (a horizon that missed the target on seed 3 does not win on its first
// two seeds); when nothing at a level qualifies, the level below decides. A trial a strategy took
// at a higher level to settle one comparison (kSettleStage) makes that level the deciding one
// only once a confirmation has reached it (it may then serve as a finalist's measurement): when
// the budget ends the search before its confirmation, the level below, where every point was
// measured, decides.
const Trial* Tuner::best() const {
  int64_t top_level = 0, max_level = 0;
  for (const auto& t : trials_) {
    if (t.choosable() && (t.role() != TrialRole::Settle || t.budget_level <= confirmed_level_)) top_level = std::max(top_level, t.budget_level);
    max_level = std::max(max_level, t.budget_level);
  }
  auto failed_above = [&](const Trial& t) {
    for (int64_t l = t.budget_level + 1; l <= max_level; ++l)
      if (const Trial* higher = find(t.point, l); higher && !higher->ok()) return true;
    return false;
  };
  for (int64_t level = top_level; level >= 1; --level)
    if (const Trial* winner = best_where([&](const Trial& t) { return t.budget_level == level && t.choosable() && !failed_above(t); }))
      return winner;
  return nullptr;
}

const Trial* Tuner::best_where(const std::function<bool(const Trial&)>& admit) const {
  const Trial* winner = nullptr;
  for (const auto& t : trials_) {
    if (!t.candidate() || !admit(t)) continue;
    if (!winner || better(t, *winner)) winner = &t;
  }
  return winner;
}

void Tuner::confirm_best(size_t count, int64_t level) {
  confirmed_level_ = std::max(confirmed_level_, level);
  std::vector<const Trial*> ranked;
  for (const auto& t : trials_)
    if (t.candidate() && t.budget_level == 1) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Trial* a, const Trial* b) { return a->objective > b->objective; });
  std::vector<nlohmann::json> points;  // distinct, fastest first (copies: measure() grows trials_)
  for (const Trial* t : ranked)
    if (std::find(points.begin(), points.end(), t->point) == points.end()) points.push_back(t->point);
  // Throughput: each finalist races the best confirmed so far (a clearly slower one stops early).
  // When none of the `count` finalists passes every level, the next points in rank order are
  // confirmed until one does (at most `count` more).
  std::vector<std::optional<Trial>> leader(static_cast<size_t>(level) + 1);
  bool one_passed = false;
  for (size_t i = 0; i < points.size() && i < 2 * count && (i < count || !one_passed); ++i) {
    bool passed = true;
    for (int64_t l = 2; l <= level && passed; ++l) {
      auto& lead = leader[static_cast<size_t>(l)];
      const Trial& t = measure(points[i], "confirm", l, options_.objective == "throughput" && lead ? &*lead : nullptr);
      passed = t.choosable();
      if (passed && (!lead || better(t, *lead))) lead = t;
    }
    one_passed = one_passed || passed;
  }
}

std::vector<const Trial*> Tuner::pareto_front() const {
  std::vector<const Trial*> front;
  // Only configurations a user could take: measured, and past the convergence guard.
  auto eligible = [](const Trial& t) { return t.ok() && !t.after_search() && !t.guard_pending; };
  for (const auto& t : trials_) {
    if (!eligible(t)) continue;
    bool dominated = false;
    for (const auto& u : trials_) {
      if (!eligible(u) || &u == &t) continue;
      if (u.objective >= t.objective && u.peak_memory_bytes <= t.peak_memory_bytes &&
          (u.objective > t.objective || u.peak_memory_bytes < t.peak_memory_bytes)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(&t);
  }
  std::sort(front.begin(), front.end(), [](const Trial* a, const Trial* b) { return a->peak_memory_bytes < b->peak_memory_bytes; });
  return front;
}

void Tuner::run() {
  auto strategy = make_strategy(options_.strategy);
  try {
    strategy->run(*this);
  } catch (const BudgetExhausted&) {
    // The budget decides when to stop; what was measured stands.
  }
}

nlohmann::json journal_header(const TunerOptions& options, const SearchSpace& space, const nlohmann::json& base_config) {
  return {{"kind", "header"},      {"strategy", options.strategy}, {"objective", options.objective},
          {"seed", options.seed},  {"space", space.to_json()},     {"base_config", base_config}};
}

}  // namespace dyno
