#include "reports/change_points.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace dyno {
namespace {

constexpr int kPermutations = 999;

struct Stretch {
  size_t begin = 0, end = 0;
  double t = 0;
};

// The stretch [a, b) of v[lo, hi) whose mean differs most from the rest's, by Welch's t (prefix
// sums: each candidate in constant time).
Stretch best_stretch(const std::vector<double>& v, size_t lo, size_t hi, size_t min_segment) {
  const size_t n = hi - lo;
  std::vector<double> sum(n + 1, 0), squares(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + v[lo + i];
    squares[i + 1] = squares[i] + v[lo + i] * v[lo + i];
  }
  Stretch best;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + min_segment; b <= n; ++b) {
      const size_t inside = b - a, outside = n - inside;
      // Every part the stretch leaves (before it, after it) keeps min_segment points.
      if (outside < min_segment || (a > 0 && a < min_segment) || (b < n && n - b < min_segment)) continue;
      const double s1 = sum[b] - sum[a], q1 = squares[b] - squares[a];
      const double s2 = sum[n] - s1, q2 = squares[n] - q1;
      const double n1 = static_cast<double>(inside), n2 = static_cast<double>(outside);
      const double m1 = s1 / n1, m2 = s2 / n2;
      // Variances with a floor, so that two flat stretches at different levels still differ.
      const double floor = std::max({std::abs(m1), std::abs(m2), 1e-300}) * 1e-9;
      const double v1 = std::max((q1 - n1 * m1 * m1) / std::max(n1 - 1, 1.0), floor * floor);
      const double v2 = std::max((q2 - n2 * m2 * m2) / std::max(n2 - 1, 1.0), floor * floor);
      const double t = std::abs(m1 - m2) / std::sqrt(v1 / n1 + v2 / n2);
      if (t > best.t) best = {lo + a, lo + b, t};
    }
  return best;
}

double mean(const std::vector<double>& v, size_t lo, size_t hi) {
  double s = 0;
  for (size_t i = lo; i < hi; ++i) s += v[i];
  return s / static_cast<double>(hi - lo);
}

void segment(const std::vector<double>& v, size_t lo, size_t hi, double alpha, size_t min_segment, std::mt19937_64& rng, std::vector<ChangePoint>& out) {
  if (hi - lo < 2 * min_segment) return;
  const Stretch found = best_stretch(v, lo, hi, min_segment);
  if (found.t <= 0) return;
  std::vector<double> shuffled(v.begin() + static_cast<std::ptrdiff_t>(lo), v.begin() + static_cast<std::ptrdiff_t>(hi));
  int as_large = 0;
  for (int p = 0; p < kPermutations; ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    if (best_stretch(shuffled, 0, shuffled.size(), min_segment).t >= found.t) ++as_large;
  }
  const double p_value = (as_large + 1.0) / (kPermutations + 1.0);
  if (p_value >= alpha) return;
  std::vector<size_t> cuts = {lo};
  if (found.begin > lo) cuts.push_back(found.begin);
  if (found.end < hi) cuts.push_back(found.end);
  cuts.push_back(hi);
  for (size_t i = 1; i + 1 < cuts.size(); ++i)
    out.push_back({cuts[i], mean(v, cuts[i - 1], cuts[i]), mean(v, cuts[i], cuts[i + 1]), p_value});
  for (size_t i = 0; i + 1 < cuts.size(); ++i) segment(v, cuts[i], cuts[i + 1], alpha, min_segment, rng, out);
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, double alpha, size_t min_segment, uint64_t seed) {
  std::vector<ChangePoint> out;
  std::mt19937_64 rng(seed);
  segment(series, 0, series.size(), alpha, std::max<size_t>(1, min_segment), rng, out);
  std::sort(out.begin(), out.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return out;
}

}  // namespace dyno
