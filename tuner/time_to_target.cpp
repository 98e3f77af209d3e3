#include "dyno/tuner/time_to_target.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <tuple>

#include "dyno/tuner/strategy.h"
#include "dyno/tuner/tuner.h"

namespace dyno {

SearchSpace take_convergence_axes(SearchSpace& space, const ConvergenceDefaults& defaults) {
  nlohmann::json axes = space.take_convergence_axes().to_json()["axes"];
  auto given = [&](const char* knob) { return axes.contains(knob) || space.find(knob); };
  if (!given("epochs") && defaults.recipe_epochs > 0) {
    const int64_t r = defaults.recipe_epochs;
    std::vector<int64_t> epochs;
    for (int64_t e : {r / 6, r / 4, r / 3})
      if (e >= 1 && e < r && std::find(epochs.begin(), epochs.end(), e) == epochs.end()) epochs.push_back(e);
    epochs.push_back(0);  // the recipe's
    axes["epochs"] = epochs;
  }
  if (!given("schedule")) axes["schedule"] = {"auto", "onecycle"};
  // Label smoothing lifts accuracy a little on a short horizon, which can move an accuracy target
  // one evaluation earlier; it raises the training loss, so a loss target does not get it.
  if (defaults.accuracy_target && !given("label_smoothing")) axes["label_smoothing"] = {0.0, 0.1};
  return SearchSpace::from_json({{"axes", axes}});
}

std::vector<int64_t> larger_batches(const SearchSpace& throughput_space, const nlohmann::json& winner, int64_t recipe_batch) {
  if (!throughput_space.find("batch_size") || throughput_space.knob("batch_size").role != KnobRole::Batch || !winner.contains("batch_size")) return {};
  const int64_t best = winner["batch_size"].get<int64_t>();
  if (best < recipe_batch) return {};
  std::vector<int64_t> larger;
  for (const nlohmann::json& value : throughput_space.find("batch_size")->values)
    if (const int64_t b = value.is_number_integer() ? value.get<int64_t>() : 0; b > recipe_batch) larger.push_back(b);
  std::sort(larger.begin(), larger.end());
  larger.erase(std::unique(larger.begin(), larger.end()), larger.end());
  // The next batch above the recipe's at least: phase 1 gives a throughput tie to the smaller batch.
  larger.erase(std::upper_bound(larger.begin() + std::min<size_t>(1, larger.size()), larger.end(), best), larger.end());
  return larger;
}

namespace {

// How far two counts of epochs to the target may differ and be the same training (an epoch's
// last batch may be partial, and batches differ in it).
constexpr double kSameEpochs = 0.01;

// Whether two runs reached the target after the same training: as many epochs, within kSameEpochs.
bool same_work(const Trial& a, const Trial& b) {
  return a.epochs_to_target > 0 && b.epochs_to_target > 0 &&
         std::abs(a.epochs_to_target - b.epochs_to_target) <= kSameEpochs * std::max(a.epochs_to_target, b.epochs_to_target);
}

// `runs`, fastest first, with a run that did the same work as a faster one moved before it when
// its margin is larger: the surer on other seeds.
std::vector<const Trial*> surest_first(const std::vector<const Trial*>& runs) {
  std::vector<const Trial*> order;
  for (const Trial* t : runs)
    order.insert(std::find_if(order.begin(), order.end(), [&](const Trial* u) { return same_work(*t, *u) && t->target_margin > u->target_margin; }), t);
  return order;
}

// The first-seed candidates of `stages` (of any, when none are given), fastest first. (Not best(),
// which a refinement itself moves: a resume repeats nothing.)
std::vector<const Trial*> first_seeds(const Tuner& tuner, std::initializer_list<const char*> stages = {}) {
  std::vector<const Trial*> runs;
  for (const auto& t : tuner.trials())
    if (t.candidate() && t.budget_level == 1 && tuner.visible(t) &&
        (stages.size() == 0 || std::any_of(stages.begin(), stages.end(), [&](const char* s) { return t.stage == s; })))
      runs.push_back(&t);
  std::sort(runs.begin(), runs.end(), [](const Trial* a, const Trial* b) { return std::tie(b->objective, a->key) < std::tie(a->objective, b->key); });
  return runs;
}

// Where a refinement over the trials of `stages` starts; nullptr when none reached the target.
const Trial* refinement_start(const Tuner& tuner, std::initializer_list<const char*> stages) {
  const auto runs = surest_first(first_seeds(tuner, stages));
  return runs.empty() || !runs.front()->time_to_target_s ? nullptr : runs.front();
}

}  // namespace

double search_time_cap(const Tuner& tuner, double cap_s) {
  const Trial* best = tuner.best();
  return best && best->time_to_target_s ? std::min(cap_s, *best->time_to_target_s * 1.3 + 5) : cap_s;
}

double race_time_cap(const Tuner& tuner, double cap_s) {
  const auto runs = first_seeds(tuner);
  return runs.empty() || !runs.front()->time_to_target_s ? cap_s : std::min(cap_s, *runs.front()->time_to_target_s * 2 + 10);
}

std::vector<nlohmann::json> race_finalists(const Tuner& tuner, size_t count) {
  std::vector<const Trial*> ranked;
  for (const auto& point : tuner.leading_points(SIZE_MAX)) ranked.push_back(tuner.latest(point));
  std::vector<nlohmann::json> finalists, others;  // the first of each horizon; the rest
  for (const Trial* t : surest_first(ranked)) {
    auto same_horizon = [&](const nlohmann::json& p) { return p.value("epochs", nlohmann::json()) == t->point.value("epochs", nlohmann::json()); };
    (std::none_of(finalists.begin(), finalists.end(), same_horizon) ? finalists : others).push_back(t->point);
  }
  finalists.insert(finalists.end(), others.begin(), others.end());
  if (finalists.size() > count) finalists.resize(count);
  return finalists;
}

double TargetPhase::next_time_cap(const Tuner& tuner) const { return racing_ ? race_time_cap(tuner, options_.cap_s) : search_time_cap(tuner, options_.cap_s); }

int64_t TargetPhase::expected_trials(const SearchSpace& space) const {
  const Axis* epochs = space.find("epochs");
  const auto horizons = static_cast<int64_t>(epochs ? epochs->values.size() : 1);
  int64_t neighbours = 0;  // of each LR, when it reaches the target
  for (const auto& axis : space.axes()) neighbours += axis.knob == "epochs" ? 0 : static_cast<int64_t>(axis.values.size()) - 1;
  const int64_t learning_rates = space.find("lr") || !options_.learning_rate ? 0 : 2 * 2 * (1 + neighbours);
  return space.grid_size() + static_cast<int64_t>(options_.batches.size()) * horizons + learning_rates +
         static_cast<int64_t>(Strategy::kFinalists) * race_rounds();
}

// `from` at `batch`: an LR of its own keeps its multiple of the recipe's LR at the point's batch
// (which lr_scaling moves with the batch), as the LR refinement set it.
nlohmann::json TargetPhase::at_batch(const nlohmann::json& from, int64_t batch) const {
  nlohmann::json point = from;
  point["batch_size"] = batch;
  if (!from.contains("lr") || !options_.learning_rate) return point;
  nlohmann::json recipe_there = from, recipe_here = point;
  recipe_there.erase("lr");
  recipe_here.erase("lr");
  const std::optional<double> there = options_.learning_rate(recipe_there), here = options_.learning_rate(recipe_here);
  if (there && here && *there > 0 && *here > 0) {
    char lr[32];  // four significant digits, as a user would write it
    std::snprintf(lr, sizeof lr, "%.4g", from["lr"].get<double>() * (*here / *there));
    point["lr"] = std::strtod(lr, nullptr);
  }
  return point;
}

double TargetPhase::horizon(const nlohmann::json& epochs) const {
  const auto e = epochs.get<double>();
  return e != 0 ? e : options_.recipe_epochs > 0 ? static_cast<double>(options_.recipe_epochs) : HUGE_VAL;
}

std::vector<nlohmann::json> TargetPhase::shorter_horizons(const Tuner& tuner, const nlohmann::json& point, double covering) const {
  std::vector<nlohmann::json> shorter;
  const Axis* epochs = tuner.space().find("epochs");
  if (!epochs || !point.contains("epochs") || !point["epochs"].is_number()) return shorter;
  for (const auto& e : epochs->values)
    if (e.is_number() && horizon(e) < horizon(point["epochs"]) && horizon(e) >= (1 - kSameEpochs) * covering) shorter.push_back(e);
  std::sort(shorter.begin(), shorter.end(), [&](const nlohmann::json& a, const nlohmann::json& b) { return horizon(a) < horizon(b); });
  return shorter;
}

// The surest-first point of the grid and the LR refinement at the larger batches (larger_batches),
// each at the point's horizon and every shorter one (at_batch: with its LR scaled as the recipe's).
void TargetPhase::refine_batch(Tuner& tuner) const {
  const Trial* best = refinement_start(tuner, {"grid", "refine-lr"});
  if (!best) return;
  const nlohmann::json from = best->point;  // (a copy: measure() grows the trials)
  for (int64_t batch : options_.batches) {
    nlohmann::json point = at_batch(from, batch);
    tuner.measure(point, "refine-batch");
    for (const auto& e : shorter_horizons(tuner, from)) {
      point["epochs"] = e;
      tuner.measure(point, "refine-batch");
    }
  }
}

// The grid's surest-first point with its peak LR doubled and halved (a short horizon often takes a
// higher one); an LR that reaches the target, with the other values of each axis but the horizon;
// each of those runs that reached the target before its horizon's end, on the shortest horizon that
// still covers the epochs it took: a schedule that ends there has annealed the LR by then.
void TargetPhase::refine_learning_rate(Tuner& tuner) const {
  if (tuner.space().find("lr") || !options_.learning_rate) return;
  const Trial* best = refinement_start(tuner, {"grid"});
  if (!best) return;
  const nlohmann::json from = best->point;
  const std::optional<double> lr = options_.learning_rate(from);
  if (!lr || *lr <= 0) return;
  for (double factor : {2.0, 0.5}) {
    nlohmann::json point = from;
    point["lr"] = *lr * factor;
    std::vector<Trial> runs = {tuner.measure(point, "refine-lr")};
    if (!runs.front().time_to_target_s) continue;
    for (const auto& axis : tuner.space().axes()) {
      if (axis.knob == "epochs") continue;
      for (const auto& value : axis.values) {
        nlohmann::json neighbour = point;
        neighbour[axis.knob] = value;
        if (neighbour != point) runs.push_back(tuner.measure(neighbour, "refine-lr"));
      }
    }
    for (const Trial& run : runs) {
      if (!run.time_to_target_s || run.epochs_to_target <= 0) continue;
      const auto covering = shorter_horizons(tuner, run.point, run.epochs_to_target);
      if (covering.empty()) continue;
      nlohmann::json ending_there = run.point;
      ending_there["epochs"] = covering.front();
      tuner.measure(ending_there, "refine-lr");
    }
  }
}

void TargetPhase::run(Tuner& tuner) {
  tuner.run();
  try {
    refine_learning_rate(tuner);
    refine_batch(tuner);
    racing_ = true;
    tuner.final_race(race_finalists(tuner, Strategy::kFinalists), race_rounds());
  } catch (const BudgetExhausted&) {  // what was measured stands
  }
}

}  // namespace dyno
