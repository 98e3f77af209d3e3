#include "dyno/tuner/staged_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "dyno/reports/knob.h"
#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

// Climber: the best point so far; try_value moves to a neighbour when Tuner::compare prefers it.
class Climber {
 public:
  explicit Climber(Tuner& tuner) : tuner_(tuner), current_(tuner.start_point()) {
    for (int64_t level = 1; level <= StagedSearch::kStartProcesses; ++level)  // (a failed start is not measured again)
      if (!tuner.measure(current_, "start", level).ok()) break;
  }

  struct Step {
    Trial trial;      // the candidate's first measurement
    Verdict verdict;  // the candidate against the best so far (Tuner::compare: settled when not known)
    bool decided;     // the evidence gave the verdict (not a settlement on the estimates)
    bool adopted;
  };

  // Measures `knob` = value from the current best and keeps it when preferred.
  Step try_value(const std::string& knob, const nlohmann::json& value, const std::string& stage) {
    nlohmann::json point = current_;
    point[knob] = value;
    // (refinement and regrowth, with no values planned, try one only while the race's first round stays covered)
    if (point == current_ || (untried_ == 0 && !tuner_.budget_covers(1 + Strategy::kFinalists))) return {*tuner_.latest(current_), Verdict::Equivalent, true, false};
    untried_ = std::max<int64_t>(untried_ - 1, 0);
    tuner_.reserve(untried_ + static_cast<int64_t>(Strategy::kFinalists));
    const Trial incumbent = *tuner_.latest(current_);
    Step step{tuner_.measure(point, stage, 1, &incumbent), Verdict::Unknown, false, false};
    step.verdict = tuner_.compare(point, current_, stage);
    step.decided = tuner_.judge(point, current_).verdict == step.verdict;
    step.adopted = tuner_.preferred(step.verdict, point, current_);
    const PointEvidence from = tuner_.evidence(current_), to = tuner_.evidence(point);
    std::vector<double>& effect = effects_[{knob, current_[knob].dump(), value.dump()}][point_key(point)];
    effect.clear();
    if (!from.failed && !to.failed)
      for (double f : to.figures) effect.push_back(f - from.mean());
    if (step.adopted) current_ = point;
    return step;
  }

  // The knob-effect model refinement prunes with (docs/tuner.md, "staged", step 6): whether the
  // value's expected gain here, its measured effect plus kInteraction, is below the indifference.
  bool predicted_to_lose(const std::string& knob, const nlohmann::json& value) const {
    const std::string here = current_[knob].dump(), there = value.dump();
    const NoiseModel noise = tuner_.noise();
    auto measured = [&](const std::string& from, const std::string& to) -> std::optional<Posterior> {
      const auto it = effects_.find({knob, from, to});
      if (it == effects_.end()) return std::nullopt;
      PointEvidence effect;
      for (const auto& [place, figures] : it->second) effect.figures.insert(effect.figures.end(), figures.begin(), figures.end());
      if (effect.figures.empty()) return std::nullopt;
      return noise.posterior(effect);
    };
    // The expected gain E[max(0, effect + kInteraction)], as the shortfall of its negation.
    std::optional<Posterior> loss = measured(there, here);  // log(here / there): the gain's negation
    const double sign = loss ? 1.0 : -1.0;
    if (!loss) loss = measured(here, there);
    if (!loss) return false;
    for (double& m : loss->means) m = sign * m - kInteraction;
    return loss->expected_shortfall() < tuner_.options().decision.indifference;
  }

  // The values the stages from here on have yet to try (Tuner::reserve keeps a process for each).
  void plan(int64_t values) { untried_ = values; }
  const nlohmann::json& current() const { return current_; }
  void move_to(const nlohmann::json& point) { current_ = point; }

 private:
  static constexpr double kInteraction = 0.10;  // on the log scale
  Tuner& tuner_;
  nlohmann::json current_;
  int64_t untried_ = 0;
  // (knob, from, to) -> where it was measured (the new point's key) -> log(to / from), one per process
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, std::vector<double>>> effects_;
};

constexpr double kOomMargin = 0.1;  // after an OOM, batches within this share of it are not tried

bool is_ordered(const Axis& axis) { return !axis.values.empty() && axis.values.front().is_number(); }

void grow_batch(Climber& climber, const SearchSpace& space, const std::string& stage) {
  const Axis* axis = space.find("batch_size");
  // (A program's own batch_size, declared in its space, is another role's knob: tried as any other.)
  if (!axis || space.knob(axis->knob).role != KnobRole::Batch) return;
  std::set<int64_t> sizes;
  for (const auto& v : axis->values) sizes.insert(v.get<int64_t>());
  int64_t good = climber.current()["batch_size"].get<int64_t>(), probe = good;
  double below = HUGE_VAL;  // the bisection's bound: the first size not better, less kOomMargin of one that failed on memory
  auto try_size = [&](int64_t size, const char* step) {
    const Climber::Step result = climber.try_value("batch_size", size, stage + step);
    if (result.adopted) good = size;
    else below = std::min(below, static_cast<double>(size) * (result.trial.outcome == Outcome::Oom ? 1 - kOomMargin : 1));
    return result;
  };
  // Growth (step 4): a size settled as worse on its estimates only is a size not better.
  for (int misses = 0; misses < 2;) {
    auto next = sizes.lower_bound(2 * probe);
    if (next == sizes.end()) next = sizes.upper_bound(probe);
    if (next == sizes.end()) break;
    probe = *next;
    const Climber::Step step = try_size(probe, "-grow");
    if (step.adopted) {
      misses = 0;
      below = HUGE_VAL;
    } else if (step.trial.outcome == Outcome::Oom || (step.verdict == Verdict::SecondBetter && step.decided)) {
      break;
    } else {
      ++misses;
    }
  }
  for (;;) {
    std::vector<int64_t> between;
    for (int64_t s : sizes)
      if (s > good && s < below) between.push_back(s);
    if (between.empty()) break;
    try_size(between[between.size() / 2], "-bisect");
  }
}

void refine(Climber& climber, const SearchSpace& space, const std::string& stage) {
  auto try_again = [&](const std::string& knob, const nlohmann::json& value) {
    if (!climber.predicted_to_lose(knob, value)) climber.try_value(knob, value, stage);
  };
  for (int round = 0; round < 3; ++round) {
    const nlohmann::json before = climber.current();
    for (const auto& axis : space.axes()) {
      if (is_ordered(axis)) {
        const nlohmann::json here = climber.current()[axis.knob];  // its neighbours by value, however the axis lists them
        const nlohmann::json *up = nullptr, *down = nullptr;
        for (const auto& v : axis.values) {
          if (v > here && (!up || v < *up)) up = &v;
          if (v < here && (!down || v > *down)) down = &v;
        }
        if (up) try_again(axis.knob, *up);
        if (down && climber.current()[axis.knob] == here) try_again(axis.knob, *down);
      } else {
        for (const auto& v : axis.values) try_again(axis.knob, v);
      }
    }
    if (climber.current() == before) break;
  }
}

}  // namespace

int64_t StagedSearch::expected_trials(const SearchSpace& space, int64_t max_trials) const {
  int64_t once = 1, neighbours = 0;  // the start point; then each other value once
  for (const auto& axis : space.axes()) {
    const auto n = static_cast<int64_t>(axis.values.size());
    if (space.knob(axis.knob).role == KnobRole::Process) neighbours += n - 1;  // and once more after the knobs
    once += axis.knob == "batch_size" ? std::min<int64_t>(n - 1, 4) : n - 1;
    if (axis.knob != "batch_size") neighbours += is_ordered(axis) ? std::min<int64_t>(n - 1, 2) : n - 1;
  }
  // A value that loses by less than a slow spell runs in a second process: about every value.
  const int64_t total = kStartProcesses + 2 * (once - 1) + neighbours + 1 + kFinalists * 2;
  return within_trial_limit(total, max_trials);
}

void StagedSearch::run(Tuner& tuner) {
  Climber climber(tuner);
  const SearchSpace& space = tuner.space();
  // A knob's stage is its role's; every other role is tried in the knobs stage.
  enum Stage { kProcess, kPipeline, kBatch, kKnobs, kProcessAgain };
  auto stage_of = [&space](const Axis& axis) {
    const KnobRole role = space.knob(axis.knob).role;
    return role == KnobRole::Process ? kProcess : role == KnobRole::Pipeline ? kPipeline : role == KnobRole::Batch ? kBatch : kKnobs;
  };
  // The values the stages from `first` on have yet to try (of the batch, the sizes above the current).
  auto untried_from = [&](Stage first) {
    int64_t n = 0;
    for (const auto& axis : space.axes()) {
      const auto others = static_cast<int64_t>(axis.values.size()) - 1;
      const nlohmann::json now = climber.current().value(axis.knob, nlohmann::json());
      if (stage_of(axis) == kProcess) n += first == kProcess ? 2 * others : others;
      else if (stage_of(axis) == kBatch && first <= kBatch) n += std::count_if(axis.values.begin(), axis.values.end(), [&](const auto& v) { return v > now; });
      else if (stage_of(axis) >= first) n += others;
    }
    return n;
  };
  auto try_stage = [&](Stage stage, const std::string& name) {
    for (const auto& axis : space.axes())
      if (stage_of(axis) == stage)
        for (const auto& v : axis.values) climber.try_value(axis.knob, v, name);
  };

  // The steps of docs/tuner.md, "staged", in order.
  climber.plan(untried_from(kProcess));
  try_stage(kProcess, "process");
  try_stage(kPipeline, "pipeline");
  climber.plan(untried_from(kBatch));
  grow_batch(climber, space, "batch");
  const nlohmann::json after_growth = climber.current();
  climber.plan(untried_from(kKnobs));
  try_stage(kKnobs, "knobs");
  climber.plan(untried_from(kProcessAgain));
  try_stage(kProcess, "process-again");
  climber.plan(0);
  refine(climber, space, "refine");
  // Without a move since, the regrowth and the second refinement would repeat memoised trials.
  const nlohmann::json before_regrow = climber.current();
  if (before_regrow != after_growth) grow_batch(climber, space, "batch-regrow");
  if (climber.current() != before_regrow) refine(climber, space, "refine-regrown");
  tuner.final_race(tuner.leading_points(kFinalists), kRaceRounds);
  // Step 8's second refinement and race.
  auto finalists = [&] { std::set<std::string> keys; for (const auto& p : tuner.leading_points(kFinalists)) keys.insert(point_key(p)); return keys; };
  if (const Trial* raced = tuner.best(); raced && raced->point != climber.current()) {
    const auto raced_points = finalists();
    climber.move_to(raced->point);
    refine(climber, space, "refine-raced");
    if (finalists() != raced_points) tuner.final_race(tuner.leading_points(kFinalists), kRaceRounds);
  }
}

}  // namespace dyno
