#include "dyno/tuner/noise_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dyno {

namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

double log_add(double x, double y) {
  if (x == kNone) return y;
  if (y == kNone) return x;
  const double hi = std::max(x, y);
  return hi + std::log1p(std::exp(std::min(x, y) - hi));
}

// log of the sum, over every set S of `k` of the terms, of exp(sum of a_i over S), for k = 0..n,
// leaving out term `skip` (none when it is out of range).
std::vector<double> log_subset_sums(const std::vector<double>& a, size_t skip) {
  std::vector<double> sums(a.size() + 1, kNone);
  sums[0] = 0.0;
  size_t taken = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i == skip) continue;
    ++taken;
    for (size_t k = taken; k >= 1; --k) sums[k] = log_add(sums[k], sums[k - 1] + a[i]);
  }
  return sums;
}

// Which processes of one point ran slow, under the model's current parameters. With d_i the
// figures' deviations from their mean, a set S of k slow processes (each raised by the shift c)
// leaves the squares SS_S = SS_0 + 2c sum_S d_i + c^2 k (n - k) / n, and its weight is
// p^k (1 - p)^(n - k) exp(-SS_S / (2 sigma^2)); summed over the sets of each size k.
struct SlowSpells {
  std::vector<double> weights;    // of k = 0..n slow processes, normalised
  std::vector<double> inclusion;  // P(process i ran slow); filled when asked

  SlowSpells(const std::vector<double>& deviations, double sigma, double chance, double shift, bool with_inclusion) {
    const size_t n = deviations.size();
    if (chance <= 0) {  // a model without slow spells: none ran slow
      weights = {1.0};
      if (with_inclusion) inclusion.assign(n, 0.0);
      return;
    }
    const double var = sigma * sigma;
    std::vector<double> a(n);
    for (size_t i = 0; i < n; ++i) a[i] = -shift * deviations[i] / var;
    const std::vector<double> sums = log_subset_sums(a, n);
    std::vector<double> log_w(n + 1);
    double total = kNone;
    for (size_t k = 0; k <= n; ++k) {
      const double kd = static_cast<double>(k), nd = static_cast<double>(n);
      log_w[k] = kd * std::log(chance) + (nd - kd) * std::log1p(-chance) - shift * shift * kd * (nd - kd) / (2 * nd * var) + sums[k];
      total = log_add(total, log_w[k]);
    }
    weights.resize(n + 1);
    for (size_t k = 0; k <= n; ++k) weights[k] = std::exp(log_w[k] - total);
    if (!with_inclusion) return;
    // P(i slow) = sum over k of P(k) * exp(a_i) * (sets of k - 1 among the others) / (sets of k).
    inclusion.assign(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const std::vector<double> others = log_subset_sums(a, i);
      for (size_t k = 1; k <= n; ++k)
        if (weights[k] > 0 && sums[k] != kNone) inclusion[i] += weights[k] * std::exp(a[i] + others[k - 1] - sums[k]);
    }
  }
};

std::vector<double> deviations_of(const PointEvidence& point) {
  const double mean = point.mean();
  std::vector<double> d;
  for (double f : point.figures) d.push_back(f - mean);
  return d;
}

}  // namespace

NoiseModel NoiseModel::fit(const std::vector<PointEvidence>& points, bool slow_spells) {
  std::vector<std::vector<double>> repeated;
  double processes = 0, dof = 0;
  for (const auto& p : points)
    if (!p.failed && p.processes() >= 2) {
      repeated.push_back(deviations_of(p));
      processes += static_cast<double>(p.processes());
      dof += static_cast<double>(p.processes() - 1);
    }
  NoiseModel model;
  model.degrees_of_freedom_ = kPriorSigmaWeight + dof;
  if (!slow_spells) model.slow_chance_ = 0;
  if (repeated.empty()) return model;
  // Expectation-maximisation: each point's expected slow processes, then the parameters, until settled.
  for (int iteration = 0; iteration < 100; ++iteration) {
    // Over every repeated point: SS_0, the slow processes' deviations, their count, k (n - k) / n.
    double squares = 0, cross = 0, slow = 0, spread = 0;
    for (const auto& d : repeated) {
      const SlowSpells s(d, model.sigma_, model.slow_chance_, model.slow_shift_, true);
      const auto n = static_cast<double>(d.size());
      for (size_t i = 0; i < d.size(); ++i) {
        squares += d[i] * d[i];
        cross += d[i] * s.inclusion[i];
      }
      for (size_t k = 0; k < s.weights.size(); ++k) {
        const auto kd = static_cast<double>(k);
        slow += s.weights[k] * kd;
        spread += s.weights[k] * kd * (n - kd) / n;
      }
    }
    squares += 2 * model.slow_shift_ * cross + model.slow_shift_ * model.slow_shift_ * spread;  // the expected SS_S
    NoiseModel next = model;
    next.sigma_ = std::max(1e-4, std::sqrt((kPriorSigmaWeight * kPriorSigma * kPriorSigma + squares) / model.degrees_of_freedom_));
    if (slow_spells) next.slow_chance_ = std::clamp((kPriorSlowWeight * kPriorSlowChance + slow) / (kPriorSlowWeight + processes), 1e-4, 0.5);
    // The shift that minimises the expected squares: SS_S falls with c by -2 sum_S d_i.
    next.slow_shift_ = std::clamp((kPriorShiftWeight * kPriorSlowShift - cross) / (kPriorShiftWeight + spread), 0.01, 2.0);
    const bool settled = std::abs(next.sigma_ - model.sigma_) < 1e-7 && std::abs(next.slow_chance_ - model.slow_chance_) < 1e-7 &&
                         std::abs(next.slow_shift_ - model.slow_shift_) < 1e-7;
    next.slow_seen_ = slow;
    model = next;
    if (settled) break;
  }
  return model;
}

Posterior NoiseModel::posterior(const PointEvidence& point) const {
  Posterior p;
  if (point.figures.empty()) return p;
  const SlowSpells s(deviations_of(point), sigma_, slow_chance_, slow_shift_, false);
  const auto n = static_cast<double>(point.processes());
  p.weights = s.weights;
  const double own = spell_spread(), shared = shift_sd();
  for (size_t k = 0; k < s.weights.size(); ++k) {
    const auto kd = static_cast<double>(k);
    p.means.push_back(point.mean() + slow_shift_ * kd / n);
    p.sds.push_back(std::sqrt(sigma_ * sigma_ * n + own * own * kd + shared * shared * kd * kd) / n);
  }
  return p;
}

}  // namespace dyno
