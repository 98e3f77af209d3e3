#include "dyno/tuner/tuner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/comparison.h"
#include "dyno/reports/statistics.h"
#include "dyno/tuner/journal.h"
#include "dyno/tuner/strategy.h"

namespace dyno {
namespace {

// Whether a's batch is the smaller; nullopt when either has none or they are the same.
std::optional<bool> smaller_batch(const nlohmann::json& a, const nlohmann::json& b) {
  const auto ba = a.find("batch_size"), bb = b.find("batch_size");
  if (ba == a.end() || bb == b.end() || !ba->is_number() || !bb->is_number() || *ba == *bb) return std::nullopt;
  return *ba < *bb;
}

// A time-to-target trial's objective: 1 / its time to the target; 0 when it missed the target.
double per_second_to_target(const Trial& t) { return t.time_to_target_s && *t.time_to_target_s > 0 ? 1.0 / *t.time_to_target_s : 0.0; }

}  // namespace

Tuner::Tuner(SearchSpace space, nlohmann::json start_point, TrialExecutor& executor, TunerOptions options)
    : space_(std::move(space)), start_point_(std::move(start_point)), executor_(executor), options_(std::move(options)) {
  if (!options_.resume) return;
  auto journaled = read_journal(options_.journal_path).trials;
  for (size_t i = 0; i < journaled.size(); ++i) {
    auto& t = journaled[i];
    next_id_ = std::max(next_id_, t.id + 1);  // a trial run again takes a new id: its folder is not the old one's
    // A guard reference is journaled just before its candidate, under the next id; one whose
    // candidate was not journaled (a kill came between them) runs again with its candidate.
    if (t.role() == TrialRole::GuardReference && (i + 1 == journaled.size() || journaled[i + 1].id + 1 != t.id)) continue;
    const bool searched = t.key == trial_key(t.point, t.budget_level);  // a search's trial, not a verification's
    for (auto item : t.point.items())  // its numbers as the axes write them (an older journal's 64.0 is 64)
      if (const auto* axis = searched ? space_.find(item.key()) : nullptr) for (const auto& v : axis->values) if (v == item.value()) item.value() = v;
    if (searched) t.key = trial_key(t.point, t.budget_level);
    by_key_[t.key] = trials_.size();
    trials_.push_back(std::move(t));
    replayed_.push_back(false);
  }
  resumed_ = !trials_.empty();
}

std::optional<Trial> Tuner::recall(const std::string& key) {
  const auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  // A guard reference, held just before the trial it was measured for, came into view with it.
  if (const size_t i = it->second; i > 0 && trials_[i - 1].role() == TrialRole::GuardReference) replayed_[i - 1] = true;
  replayed_[it->second] = true;
  return trials_[it->second];
}

Trial Tuner::record(Trial trial) {
  by_key_[trial.key] = trials_.size();
  trials_.push_back(std::move(trial));
  replayed_.push_back(true);
  if (!options_.journal_path.empty())
    append_line_durably(options_.journal_path, nlohmann::json{{"kind", "trial"}, {"trial", to_json(trials_.back())}}.dump());
  if (options_.on_trial) options_.on_trial(trials_.back(), *this);
  return trials_.back();
}

int64_t Tuner::executed_trials() const {
  return std::count_if(trials_.begin(), trials_.end(), [&](const Trial& t) { return visible(t) && !t.after_search(); });
}

double Tuner::spent_s() const {
  return std::accumulate(trials_.begin(), trials_.end(), 0.0, [&](double s, const Trial& t) { return visible(t) && !t.after_search() ? s + t.wall_time_s : s; });
}

bool Tuner::budget_covers(int64_t processes) const {
  const int64_t done = executed_trials();
  if (options_.max_trials > 0 && done + processes > options_.max_trials) return false;
  return options_.budget_s <= 0 || done == 0 || spent_s() * static_cast<double>(done + processes) / static_cast<double>(done) <= options_.budget_s;
}

int64_t Tuner::complexity(const nlohmann::json& point) const {
  const auto knobs = point.items();
  return std::count_if(knobs.begin(), knobs.end(), [&](const auto& knob) { return start_point_.value(knob.key(), nlohmann::json()) != knob.value(); });
}

Trial Tuner::measure_again(const nlohmann::json& point, const std::string& stage) {
  const Trial* top = latest(point);
  return measure(point, stage, top ? top->budget_level + 1 : 1);
}

Trial Tuner::measure(const nlohmann::json& point, const std::string& stage, int64_t budget_level, const Trial* race,
                     int64_t loss_windows) {
  const std::string key = trial_key(point, budget_level);
  // A trial new to this run spends the budget, journaled or not: a resume stops where a first run would.
  if (const auto seen = by_key_.find(key); (seen == by_key_.end() || !replayed_[seen->second]) &&
      ((options_.max_trials > 0 && executed_trials() >= options_.max_trials) || (options_.budget_s > 0 && spent_s() >= options_.budget_s)))
    throw BudgetExhausted{};
  if (auto known = recall(key)) {  // (a guard's reference the search now asks for is the search's measurement)
    if (known->stage == kGuardReferenceStage && stage != kGuardReferenceStage) known->stage = trials_[by_key_[key]].stage = stage;
    return *known;
  }
  const bool throughput = options_.throughput();
  TrialRequest request{budget_level, budget_level, 0.0, loss_windows};
  for (int64_t level = budget_level - 1; throughput && level >= 1 && request.units == budget_level; --level)
    if (const Trial* lower = find(point, level); lower && lower->ok()) request.units = budget_level - level;
  if (throughput && race && race->ok()) {
    request.stop_below = race_bar(race->point);
    request.race_id = race->id;
  }
  const int64_t id = next_id_++;  // its guard reference, measured while it waits, takes the next
  Trial trial = executor_.execute(point, request, "trial-" + std::to_string(id));
  if (trial.outcome == Outcome::Interrupted) throw TuningInterrupted{};
  trial.id = id;
  trial.key = key;
  trial.stage = stage;
  trial.objective = throughput ? trial.samples_per_second : per_second_to_target(trial);
  if (!throughput || (trial.ci_low == 0 && trial.ci_high == 0)) trial.ci_low = trial.ci_high = trial.objective;

  // The guard checks throughput trials: one that reached its target has shown its convergence.
  if (trial.ok() && throughput) {
    const auto reference = trial.losses.empty() ? std::nullopt : reference_losses(point, budget_level, trial.losses.size());
    if (auto reason = options_.guard.check(trial.losses, reference ? &*reference : nullptr)) {
      trial.outcome = Outcome::Rejected;
      trial.reason = *reason;
    }
  }
  return record(std::move(trial));
}

// The bar a process racing `point` stops under (docs/tuner.md, "Early stops"): the point's lower
// bound less the noise's interval for one process.
double Tuner::race_bar(const nlohmann::json& point) const {
  const PointEvidence e = evidence(point);
  if (e.failed || e.figures.empty()) return 0.0;
  const NoiseModel n = noise();
  const double t = student_t_quantile(0.5 + options_.decision.confidence / 2.0, n.degrees_of_freedom());
  return std::exp(e.mean() - t * n.sigma() / std::sqrt(static_cast<double>(e.processes())) - t * n.sigma());
}

const Trial* Tuner::find(const nlohmann::json& point, int64_t budget_level) const {
  const auto it = by_key_.find(trial_key(point, budget_level));
  return it == by_key_.end() ? nullptr : &trials_[it->second];
}

// The fp32 losses `point` is compared with: a measured trial's on the same trajectory, else the
// reference's, measured now; nullopt when fp32, passed at a lower level, or out of budget.
std::optional<std::vector<double>> Tuner::reference_losses(const nlohmann::json& point, int64_t budget_level, size_t windows) {
  const auto reference = options_.guard.reference_point(point);
  if (!reference) return std::nullopt;
  for (int64_t level = 1; level < budget_level; ++level)
    if (const Trial* earlier = find(point, level); earlier && earlier->ok()) return std::nullopt;
  for (const auto& t : trials_)
    if (t.ok() && visible(t) && t.budget_level == budget_level && !t.losses.empty() && ConvergenceGuard::same_trajectory(t.point, *reference)) return t.losses;
  if (!budget_covers(2) && !find(*reference, budget_level)) return std::nullopt;  // the candidate, not yet recorded, and its reference
  try {
    const auto needed = static_cast<int64_t>(options_.guard.reference_windows(windows));
    const Trial& ref = measure(*reference, kGuardReferenceStage, budget_level, nullptr, needed);
    if (ref.ok()) return ref.losses;
  } catch (const BudgetExhausted&) {
    // No budget for the reference: the candidate is judged on its own trajectory.
  }
  return std::nullopt;
}

Trial Tuner::verify(TrialExecutor& executor, const nlohmann::json& point, const std::string& label, int64_t budget_level,
                          const std::string& stage) {
  const std::string key = stage + ":" + label + ":" + point_key(point);
  if (const auto known = recall(key)) return *known;
  const int64_t id = next_id_++;  // in its folder's name when a journaled run of another point took the label's (a resume)
  const bool taken = std::any_of(trials_.begin(), trials_.end(), [&](const Trial& t) { return t.key.rfind(stage + ":" + label + ":", 0) == 0; });
  Trial trial = executor.execute(point, TrialRequest{budget_level}, stage + "-" + label + (taken ? "-" + std::to_string(id) : ""));
  if (trial.outcome == Outcome::Interrupted) throw TuningInterrupted{};
  trial.id = id;
  trial.key = key;
  trial.stage = stage;
  trial.objective = per_second_to_target(trial);
  return record(std::move(trial));
}

bool Tuner::visible(const Trial& trial) const { return replayed_[by_key_.at(trial.key)]; }

// One figure per process, guard references included (verification keys start with their stage).
PointEvidence Tuner::evidence(const nlohmann::json& point) const {
  PointEvidence e;
  const std::string prefix = point_key(point) + "@";
  const bool throughput = options_.throughput();
  for (const auto& t : trials_) {
    if (t.key.compare(0, prefix.size(), prefix) != 0 || !visible(t)) continue;
    const double figure = throughput ? (t.windows.empty() ? t.samples_per_second : median(t.windows)) : per_second_to_target(t);
    if (!t.ok() || (!throughput && figure <= 0)) e.failed = true;  // a failure, or a seed that missed the target
    else if (figure > 0) e.figures.push_back(std::log(figure));
  }
  return e;
}

NoiseModel Tuner::noise() const {
  const auto visible_count = static_cast<size_t>(std::count(replayed_.begin(), replayed_.end(), true));
  if (noise_cache_ && noise_cache_->first == visible_count) return noise_cache_->second;
  std::map<std::string, nlohmann::json> points;
  for (const auto& t : trials_)
    if (t.ok() && !t.after_search() && visible(t)) points.emplace(point_key(t.point), t.point);
  std::vector<PointEvidence> evidence_of;
  for (const auto& entry : points) evidence_of.push_back(evidence(entry.second));
  noise_cache_.emplace(visible_count, NoiseModel::fit(evidence_of, options_.throughput()));
  return noise_cache_->second;
}

double Tuner::estimated_objective(const nlohmann::json& point) const { return std::exp(noise().posterior(evidence(point)).mean()); }

Verdict Tuner::compare(const nlohmann::json& a, const nlohmann::json& b, const std::string& stage) {
  for (;;) {
    const Comparison c = judge(a, b);
    const Verdict choice = settled(c, a, b);  // what stopping now chooses: its expected loss decides (a smaller batch's too)
    const size_t na = evidence(a).processes(), nb = evidence(b).processes();
    if (answered(c, options_.decision, choice) || std::min(na, nb) >= options_.decision.max_processes || !budget_covers(1 + reserved_)) return choice;
    measure_again(na <= nb ? a : b, stage);  // budget_covers: never BudgetExhausted
  }
}

// A difference not known goes to the smaller batch (ties_prefer_smaller_batch), else settle().
Verdict Tuner::settled(const Comparison& c, const nlohmann::json& a, const nlohmann::json& b) const {
  if (c.verdict == Verdict::Unknown && options_.ties_prefer_smaller_batch)
    if (const auto a_smaller = smaller_batch(a, b)) return *a_smaller ? Verdict::FirstBetter : Verdict::SecondBetter;
  return settle(c);
}

bool Tuner::preferred(Verdict verdict, const nlohmann::json& a, const nlohmann::json& b) const {
  if (verdict == Verdict::Unknown) verdict = settled(judge(a, b), a, b);
  if (verdict != Verdict::Equivalent) return verdict == Verdict::FirstBetter;
  const int64_t ca = complexity(a), cb = complexity(b);
  if (ca != cb) return ca < cb;
  if (options_.ties_prefer_smaller_batch)
    if (const auto a_smaller = smaller_batch(a, b)) return *a_smaller;
  const Trial *ta = latest(a), *tb = latest(b);
  if (ta && tb && ta->peak_memory_bytes > 0 && tb->peak_memory_bytes > 0) {
    const double saving = static_cast<double>(tb->peak_memory_bytes - ta->peak_memory_bytes);
    const double material = std::max(0.05 * static_cast<double>(std::max(ta->peak_memory_bytes, tb->peak_memory_bytes)),
                                      TunerOptions::kMaterialMemoryShare * static_cast<double>(options_.memory_capacity_bytes));
    if (std::abs(saving) > material) return saving > 0;
  }
  return estimated_objective(a) > estimated_objective(b);
}

void Tuner::final_race(std::vector<nlohmann::json> points, int64_t max_rounds) {
  auto leader = [&] { return *std::max_element(points.begin(), points.end(), [&](const auto& x, const auto& y) { return estimated_objective(x) < estimated_objective(y); }); };
  auto drop = [&](const std::function<bool(const nlohmann::json&)>& out) { points.erase(std::remove_if(points.begin(), points.end(), out), points.end()); };
  auto decided = [&](int64_t left) {  // (a tie within the resolution goes on while the tie-breaks prefer the other point)
    const nlohmann::json lead = leader();
    auto done = [&](const auto& p, const Comparison& c) {
      const DecisionRule& rule = options_.decision;
      const bool tie_goes_on = preferred(Verdict::Equivalent, p, lead) && equivalence_reachable(c, rule, static_cast<double>(evidence(p).processes()), static_cast<double>(left));
      return answered(c, rule) || (c.high - c.low <= 2 * rule.resolution && !tie_goes_on);
    };
    return std::all_of(points.begin(), points.end(), [&](const auto& p) { return p == lead || done(p, judge(p, lead)); });
  };
  for (const auto& p : points)
    if (evidence(p).figures.empty()) measure(p, "race");
  drop([&](const nlohmann::json& p) { return evidence(p).failed; });
  const bool every_round = !options_.throughput();
  // At least one round (the leading estimates are biased upward: the winner's curse); after it, only within the budget.
  auto go_on = [&](int64_t round) { return (round == 0 || budget_covers(static_cast<int64_t>(points.size()))) && (every_round ? !points.empty() : points.size() > 1 && (round == 0 || !decided(max_rounds - round))); };
  for (int64_t round = 0; round < max_rounds && go_on(round); ++round) {
    // Interleaved: each round starts one point further along, so no point always runs first.
    if (round > 0) std::rotate(points.begin(), points.begin() + 1, points.end());
    for (const auto& p : points) measure_again(p, "race");
    drop([&](const nlohmann::json& p) { return evidence(p).failed; });
    if (points.empty() || every_round) continue;
    const nlohmann::json lead = leader();
    drop([&](const nlohmann::json& p) { return p != lead && judge(p, lead).verdict == Verdict::SecondBetter; });
  }
  if (points.empty()) return;
  // Equivalent is judge()'s verdict, never settle()'s.
  const nlohmann::json lead = leader();
  nlohmann::json winner = lead;
  for (const auto& p : points)
    if (p != lead && judge(p, lead).verdict == Verdict::Equivalent && preferred(Verdict::Equivalent, p, winner)) winner = p;
  race_winner_ = winner;
}

std::vector<nlohmann::json> Tuner::ranked(const std::vector<nlohmann::json>& points) const {
  const NoiseModel n = noise();
  std::vector<std::tuple<double, int64_t, std::string, nlohmann::json>> order;
  for (const auto& point : points)
    if (const PointEvidence e = evidence(point); !e.failed && !e.figures.empty())
      order.emplace_back(-n.posterior(e).mean(), complexity(point), point_key(point), point);
  std::sort(order.begin(), order.end());  // distinct points differ by key
  std::vector<nlohmann::json> best_first;
  for (auto& entry : order) best_first.push_back(std::move(std::get<3>(entry)));
  return best_first;
}

std::vector<nlohmann::json> Tuner::leading_points(size_t count) const {
  std::map<std::string, nlohmann::json> points;
  for (const auto& t : trials_)
    if (t.candidate() && visible(t)) points.emplace(point_key(t.point), t.point);
  std::vector<nlohmann::json> candidates;
  for (auto& entry : points) candidates.push_back(std::move(entry.second));
  std::vector<nlohmann::json> leading = ranked(candidates);
  if (leading.size() > count) leading.resize(count);
  return leading;
}

const Trial* Tuner::latest(const nlohmann::json& point) const {
  const Trial* top = nullptr;
  const std::string prefix = point_key(point) + "@";
  for (const auto& t : trials_)
    if (t.key.compare(0, prefix.size(), prefix) == 0 && visible(t) && (!top || t.budget_level > top->budget_level)) top = &t;
  return top;
}

const Trial* Tuner::best() const {
  if (race_winner_ && !evidence(*race_winner_).failed) return latest(*race_winner_);  // (a later process of it may have failed)
  const auto leading = leading_points(1);
  return leading.empty() ? nullptr : latest(leading.front());
}

std::vector<std::pair<nlohmann::json, int64_t>> Tuner::pareto_front() const {
  std::map<std::string, int64_t> memory;  // by point: the most any process of it needed
  std::vector<nlohmann::json> points;
  for (const auto& t : trials_)
    if (t.candidate() && visible(t)) {
      const auto [it, first] = memory.emplace(point_key(t.point), t.peak_memory_bytes);
      if (first) points.push_back(t.point);
      it->second = std::max(it->second, t.peak_memory_bytes);
    }
  std::vector<std::pair<nlohmann::json, int64_t>> front;  // the best first, each needing less memory than the one before
  for (const auto& point : ranked(points))
    if (const int64_t bytes = memory.at(point_key(point)); front.empty() || bytes < front.back().second) front.emplace_back(point, bytes);
  std::reverse(front.begin(), front.end());
  return front;
}

void Tuner::run() {
  try {
    make_strategy(options_.strategy)->run(*this);
  } catch (const BudgetExhausted&) {  // the budget decides when to stop; what was measured stands
  }
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DecisionRule, margin, confidence, max_processes, indifference, resolution)  // (the journal header's)

nlohmann::json journal_header(const TunerOptions& options, const SearchSpace& space, const nlohmann::json& base_config) {
  return {{"kind", "header"}, {"strategy", options.strategy}, {"objective", options.objective}, {"seed", options.seed}, {"space", space.to_json()}, {"base_config", base_config},
          {"memory_capacity_bytes", options.memory_capacity_bytes}, {"decision_rule", options.decision}};
}

}  // namespace dyno
