#include "dyno/reports/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dyno {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double median(const std::vector<double>& values) { return quantile(values, 0.5); }

double relative_iqr(const std::vector<double>& values) {
  double m = median(values);
  if (!(m != 0)) return std::numeric_limits<double>::quiet_NaN();
  return (quantile(values, 0.75) - quantile(values, 0.25)) / std::fabs(m);
}

Interval median_confidence_interval(const std::vector<double>& values, double confidence) {
  if (values.empty()) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  // P(X_(j) <= median <= X_(n-j+1)) = 1 - 2 * P(Binomial(n, 1/2) < j). Find the largest such j.
  // The probabilities in log space: 0.5^n underflows from n = 1075 windows on.
  std::vector<double> cdf(n + 1);
  const double dn = static_cast<double>(n), log_all = std::lgamma(dn + 1) - dn * std::log(2.0);
  double sum = 0;
  for (size_t k = 0; k <= n; ++k) {
    const double dk = static_cast<double>(k);
    sum += std::exp(log_all - std::lgamma(dk + 1) - std::lgamma(dn - dk + 1));
    cdf[k] = sum;
  }
  size_t j = 0;  // 0 = no interval reaches the confidence: use the extremes
  for (size_t candidate = 1; candidate <= n / 2; ++candidate)
    if (1.0 - 2.0 * cdf[candidate - 1] >= confidence) j = candidate;
  if (j == 0) return {sorted.front(), sorted.back()};
  return {sorted[j - 1], sorted[n - j]};
}

double relative_ci_half_width(const std::vector<double>& values, double confidence) {
  const double m = median(values);
  if (!(m != 0)) return std::numeric_limits<double>::infinity();
  Interval ci = median_confidence_interval(values, confidence);
  return (ci.high - ci.low) / 2.0 / std::fabs(m);
}

}  // namespace dyno
