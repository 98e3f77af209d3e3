#include "dyno/tuner/posterior.h"

#include <algorithm>
#include <cmath>

#include "dyno/reports/comparison.h"

namespace dyno {

double Posterior::mean() const {
  double m = 0;
  for (size_t k = 0; k < weights.size(); ++k) m += weights[k] * means[k];
  return m;
}

double Posterior::quantile(double q, double widen) const {
  if (means.empty()) return 0.0;
  auto cdf = [&](double x) {
    double p = 0;
    for (size_t k = 0; k < weights.size(); ++k) {
      const double s = sds[k] * widen;
      p += weights[k] * (s > 0 ? normal_cdf((x - means[k]) / s) : (x >= means[k] ? 1.0 : 0.0));
    }
    return p;
  };
  double lo = means[0], hi = means[0];
  for (size_t k = 0; k < means.size(); ++k) {
    lo = std::min(lo, means[k] - 12 * sds[k] * widen);
    hi = std::max(hi, means[k] + 12 * sds[k] * widen);
  }
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < q ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double Posterior::expected_shortfall() const {
  double loss = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    const double m = means[k], s = sds[k];
    if (s <= 0) {
      loss += weights[k] * std::max(0.0, -m);
      continue;
    }
    const double z = m / s;
    loss += weights[k] * (s * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI) - m * 0.5 * std::erfc(z / std::sqrt(2.0)));
  }
  return loss;
}

Posterior difference(const Posterior& a, const Posterior& b) {
  Posterior d;
  double total = 0;
  for (size_t i = 0; i < a.weights.size(); ++i)
    for (size_t j = 0; j < b.weights.size(); ++j)
      if (const double w = a.weights[i] * b.weights[j]; w > 1e-12) {
        d.weights.push_back(w);
        d.means.push_back(a.means[i] - b.means[j]);
        d.sds.push_back(std::sqrt(a.sds[i] * a.sds[i] + b.sds[j] * b.sds[j]));
        total += w;
      }
  for (double& w : d.weights) w /= total;
  return d;
}

}  // namespace dyno
