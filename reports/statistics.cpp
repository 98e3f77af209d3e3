#include "reports/statistics.h"

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

}  // namespace dyno
