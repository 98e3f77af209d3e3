#include "dyno/reports/comparison.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <random>
#include <stdexcept>

#include "dyno/reports/user_error.h"

namespace dyno {

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  // Acklam's rational approximation refined by one Newton step: |error| < 1e-12 in (0, 1).
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p outside (0, 1)");
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

namespace {

std::vector<double> logs(const std::vector<double>& values, const char* which) {
  std::vector<double> out;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v))
      throw UserError("compare", std::string(which) + " has a figure " + std::to_string(v) + " that is not a positive number");
    out.push_back(std::log(v));
  }
  return out;
}

// Regression on the log scale -> relative regression.
double relative(double log_shift) { return std::exp(log_shift) - 1.0; }

// The shared end of both estimators. `sorted` holds the values whose median is the
// Hodges-Lehmann estimate (pairwise differences, or Walsh averages); the count of positive ones
// is the rank statistic, with mean size/2 and standard deviation `null_sd` when there is no
// shift (normal approximation, continuity corrected); the interval takes the order statistics
// k and size-1-k of `sorted`. `range_coverage`: the exact confidence of the whole range (k = 0).
ShiftEstimate from_sorted(const std::vector<double>& sorted, double null_sd, double confidence, double range_coverage) {
  ShiftEstimate s;
  const double total = static_cast<double>(sorted.size());
  const size_t mid = sorted.size() / 2;
  s.regression = relative(sorted.size() % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]));
  double positive = 0;
  for (double v : sorted) positive += v > 0 ? 1.0 : v == 0 ? 0.5 : 0.0;
  s.p_value = null_sd > 0 ? 1.0 - normal_cdf((positive - total / 2.0 - 0.5) / null_sd) : 1.0;
  const double z = normal_quantile(0.5 + confidence / 2.0);
  s.short_of_confidence = range_coverage < confidence;
  const long k = std::max(0L, static_cast<long>(std::floor(total / 2.0 - z * null_sd)));
  const size_t lo = std::min(static_cast<size_t>(k), sorted.size() - 1), hi = sorted.size() - 1 - lo;
  s.regression_low = relative(sorted[lo]);
  s.regression_high = relative(sorted[hi]);
  return s;
}

}  // namespace

ShiftEstimate estimate_shift(const std::vector<double>& baseline, const std::vector<double>& candidate, bool higher_is_better,
                             double confidence) {
  if (baseline.size() < 2 || candidate.size() < 2)
    throw UserError("compare", "need at least 2 repetitions on each side (baseline " + std::to_string(baseline.size()) +
                                   ", candidate " + std::to_string(candidate.size()) + ")");
  const auto x = logs(baseline, "the baseline"), y = logs(candidate, "the candidate");
  // d = how much worse the candidate is, on the log scale, for every pair.
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double b : x)
    for (double c : y) d.push_back(higher_is_better ? b - c : c - b);
  std::sort(d.begin(), d.end());
  const double n = static_cast<double>(x.size()), m = static_cast<double>(y.size()), nm = n * m;
  // Mann-Whitney: U counts the positive pairwise differences.
  // The whole range misses the shift when all n of one side's ranks lie below (or above) the other's.
  const double arrangements = std::exp(std::lgamma(n + m + 1) - std::lgamma(n + 1) - std::lgamma(m + 1));
  ShiftEstimate s = from_sorted(d, std::sqrt(nm * (n + m + 1) / 12.0), confidence, 1.0 - 2.0 / arrangements);
  s.baseline_count = static_cast<int>(x.size());
  s.candidate_count = static_cast<int>(y.size());
  return s;
}

ShiftEstimate estimate_paired_shift(const std::vector<double>& baseline, const std::vector<double>& candidate, bool higher_is_better,
                                    double confidence) {
  if (baseline.size() != candidate.size() || baseline.size() < 3)
    throw UserError("compare", "paired comparison needs the same number (>= 3) of baseline and candidate figures, got " +
                                   std::to_string(baseline.size()) + " and " + std::to_string(candidate.size()));
  const auto x = logs(baseline, "the baseline"), y = logs(candidate, "the candidate");
  std::vector<double> d;
  for (size_t i = 0; i < x.size(); ++i) d.push_back(higher_is_better ? x[i] - y[i] : y[i] - x[i]);
  std::vector<double> walsh;
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = i; j < d.size(); ++j) walsh.push_back(0.5 * (d[i] + d[j]));
  std::sort(walsh.begin(), walsh.end());
  const double n = static_cast<double>(d.size());
  // Wilcoxon signed rank: T+ equals the number of positive Walsh averages.
  // The whole range misses the shift when every difference has the same sign.
  ShiftEstimate s = from_sorted(walsh, std::sqrt(n * (n + 1) * (2 * n + 1) / 24.0), confidence, 1.0 - std::pow(0.5, n - 1));
  s.baseline_count = s.candidate_count = static_cast<int>(d.size());
  return s;
}

std::string verdict(const ShiftEstimate& s, const CompareOptions& o) {
  if (s.p_value < o.alpha && s.regression >= o.threshold) return "FAIL";
  if (s.regression_high < o.threshold && !s.short_of_confidence) return "PASS";
  return "INCONCLUSIVE";
}

std::vector<bool> holm_rejections(const std::vector<double>& p_values, double alpha) {
  std::vector<size_t> order(p_values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  std::vector<bool> rejected(p_values.size(), false);
  for (size_t k = 0; k < order.size() && p_values[order[k]] < alpha / static_cast<double>(order.size() - k); ++k) rejected[order[k]] = true;
  return rejected;
}

double sequential_look_alpha(double alpha, const std::vector<int>& looks) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("sequential_look_alpha: alpha outside (0, 1)");
  if (looks.empty() || looks.front() < 1 || !std::is_sorted(looks.begin(), looks.end()) ||
      std::adjacent_find(looks.begin(), looks.end()) != looks.end())
    throw std::invalid_argument("sequential_look_alpha: looks must be increasing positive sample sizes");
  if (looks.size() == 1) return alpha;
  if (alpha < kSmallestAlpha) throw std::invalid_argument("sequential_look_alpha: alpha below kSmallestAlpha for more than one look");
  // Under no change the statistic at each look is a standardised sum of independent increments:
  // the constant boundary is the (1 - alpha) quantile of the largest of them over the looks.
  constexpr int kPaths = 200000;  // (kSmallestAlpha x kPaths = 100 paths beyond the boundary)
  std::mt19937_64 random(20260324);
  auto standard_normal = [&] {  // Box-Muller on the engine's own (standardised) output
    const double u1 = (static_cast<double>(random() >> 11) + 0.5) * 0x1.0p-53, u2 = static_cast<double>(random() >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  };
  std::vector<double> largest(kPaths);
  for (double& m : largest) {
    double sum = 0;
    int count = 0;
    m = -HUGE_VAL;
    for (int n : looks) {
      sum += standard_normal() * std::sqrt(static_cast<double>(n - count));
      count = n;
      m = std::max(m, sum / std::sqrt(static_cast<double>(n)));
    }
  }
  const auto at = largest.begin() + static_cast<long>((1 - alpha) * kPaths);
  std::nth_element(largest.begin(), at, largest.end());
  return 1 - normal_cdf(*at);
}

namespace {

// The regularised incomplete beta function I_x(a, b), by its continued fraction (modified Lentz).
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(1 - x, b, a);  // where the fraction converges fast
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x)) / a;
  constexpr double kTiny = 1e-300;
  auto step = [](double numerator, double& c, double& d) {
    d = 1 + numerator * d;
    c = 1 + numerator / c;
    d = 1 / (std::abs(d) < kTiny ? kTiny : d);
    c = std::abs(c) < kTiny ? kTiny : c;
    return c * d;
  };
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double f = d;
  for (int m = 1; m <= 500; ++m) {
    f *= step(m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), c, d);
    const double delta = step(-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)), c, d);
    f *= delta;
    if (std::abs(delta - 1) < 1e-15) break;
  }
  return front * f;
}

// P(T > t) for Student's t with v degrees of freedom, t >= 0.
double student_t_upper_tail(double t, double v) { return 0.5 * incomplete_beta(v / (v + t * t), v / 2, 0.5); }

}  // namespace

double student_t_quantile(double p, double degrees_of_freedom) {
  if (!(p > 0 && p < 1) || !(degrees_of_freedom > 0)) throw std::invalid_argument("student_t_quantile: p outside (0, 1) or degrees of freedom <= 0");
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, degrees_of_freedom);
  const double v = degrees_of_freedom, tail = 1 - p;
  // Newton on the upper tail from the normal quantile, kept inside a bracket that bisection narrows.
  const double density_scale = std::exp(std::lgamma((v + 1) / 2) - std::lgamma(v / 2)) / std::sqrt(v * M_PI);
  double lo = 0, hi = std::max(1.0, normal_quantile(p));
  while (student_t_upper_tail(hi, v) > tail) hi *= 2;
  double t = hi;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double excess = student_t_upper_tail(t, v) - tail;  // > 0: t is below the quantile
    (excess > 0 ? lo : hi) = t;
    const double density = density_scale * std::pow(1 + t * t / v, -(v + 1) / 2);
    const double next = t + excess / density;
    t = next > lo && next < hi ? next : (lo + hi) / 2;
  }
  return t;
}

}  // namespace dyno
