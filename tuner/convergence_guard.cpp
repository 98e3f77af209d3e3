#include "dyno/tuner/convergence_guard.h"

#include "dyno/reports/knob.h"

#include <cmath>
#include <sstream>

namespace dyno {
namespace {

// Mean of the last quarter (at least one window) of the first `length` windows: less noisy than one.
double tail_mean(const std::vector<double>& losses, size_t length) {
  const size_t n = std::max<size_t>(1, length / 4);
  double sum = 0;
  for (size_t i = length - n; i < length; ++i) sum += losses[i];
  return sum / static_cast<double>(n);
}

std::string fmt(double v) {
  std::ostringstream out;
  out.precision(4);
  out << v;
  return out.str();
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::json>> ConvergenceGuard::full_precision_values() {
  std::vector<std::pair<std::string, nlohmann::json>> values;
  for (const auto& knob : all_knobs())
    if (knob.role == KnobRole::Numerics) values.emplace_back(knob.name, knob.default_value());
  return values;
}

std::optional<nlohmann::json> ConvergenceGuard::reference_point(const nlohmann::json& point) const {
  nlohmann::json reference = point;
  for (const auto& [knob, exact] : exact_values)
    if (point.contains(knob) && point[knob] != exact) reference[knob] = exact;
  if (reference == point) return std::nullopt;
  return reference;
}

bool ConvergenceGuard::same_trajectory(const nlohmann::json& a, const nlohmann::json& b) {
  auto arithmetic = [](const nlohmann::json& point) {
    nlohmann::json kept = nlohmann::json::object();
    for (const auto& [knob, value] : point.items())
      if (const Knob* k = find_knob(knob); !k || !k->speed_only) kept[knob] = value;
    return kept;
  };
  return arithmetic(a) == arithmetic(b);
}

std::optional<std::string> ConvergenceGuard::check(const std::vector<double>& candidate,
                                                   const std::vector<double>* reference) const {
  for (size_t i = 0; i < candidate.size(); ++i)
    if (!std::isfinite(candidate[i])) return "convergence guard: loss is " + fmt(candidate[i]) + " at window " + std::to_string(i + 1);
  if (candidate.size() >= 2) {
    const double first = candidate.front(), last = tail_mean(candidate, candidate.size());
    if (!(last < first)) return "convergence guard: loss did not fall (" + fmt(first) + " -> " + fmt(last) + ")";
  }
  if (reference && !reference->empty() && !candidate.empty()) {
    // Over the windows both measured: later losses are lower.
    const size_t n = std::min(candidate.size(), reference->size());
    const double mine = tail_mean(candidate, n), theirs = tail_mean(*reference, n);
    if (mine > theirs * (1 + relative_tolerance) + absolute_tolerance)
      return "convergence guard: final loss " + fmt(mine) + " is above the fp32 reference's " + fmt(theirs) +
             " beyond tolerance (x" + fmt(1 + relative_tolerance) + " + " + fmt(absolute_tolerance) + ")";
  }
  return std::nullopt;
}

}  // namespace dyno
