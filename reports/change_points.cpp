#include "dyno/reports/change_points.h"

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

// The stretch [a, b) of v[lo, hi) whose mean differs most from the rest's, by the two-sample t
// with the variance pooled over both (prefix sums of the centred figures: each candidate in
// constant time). A variance of the stretch's own (Welch's) would let a few nearly equal points
// anywhere outweigh a real step. With `enough`, the first stretch whose t reaches it ends the scan.
Stretch best_stretch(const std::vector<double>& v, size_t lo, size_t hi, size_t min_segment, double enough = 0) {
  const size_t n = hi - lo;
  double centre = 0, scale = 1e-300;
  for (size_t i = lo; i < hi; ++i) {
    centre += v[i] / static_cast<double>(n);
    scale = std::max(scale, std::abs(v[i]));
  }
  std::vector<double> sum(n + 1, 0), inverse(n + 1, 0);
  double squares = 0;
  for (size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + (v[lo + i] - centre);
    squares += (v[lo + i] - centre) * (v[lo + i] - centre);
    inverse[i + 1] = 1.0 / static_cast<double>(i + 1);
  }
  // The pooled variance has a floor, so that two flat stretches at different levels still differ.
  const double df = static_cast<double>(std::max<size_t>(n, 3) - 2);
  const double floor = scale * 1e-9 * scale * 1e-9 * df;
  double best_t2 = 0;
  const double enough_t2 = enough * enough;
  Stretch best;
  for (size_t a = 0; a < n; ++a)
    for (size_t b = a + min_segment; b <= n; ++b) {
      const size_t inside = b - a, outside = n - inside;
      // Every part the stretch leaves (before it, after it) keeps min_segment points.
      if (outside < min_segment || (a > 0 && a < min_segment) || (b < n && n - b < min_segment)) continue;
      // The rest's sum is -s1 (centred): t^2 = difference^2 / (pooled variance x (1/n1 + 1/n2)),
      // the pooled variance being the sum of squares within both over n - 2.
      const double s1 = sum[b] - sum[a], both = inverse[inside] + inverse[outside];
      const double within = std::max(squares - s1 * s1 * both, floor);
      const double t2 = s1 * s1 * both * df / within;
      if (t2 > best_t2) {
        best_t2 = t2;
        best = {lo + a, lo + b, std::sqrt(t2)};
      }
      if (enough > 0 && t2 >= enough_t2) return best;
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
  // Shuffles stop once as many have reached found.t as make p >= alpha: the answer is then known
  // (a sequential Monte Carlo test, Besag and Clifford 1991; the p of a change is the full test's).
  int as_large = 0;
  for (int p = 0; p < kPermutations && as_large + 1.0 < alpha * (kPermutations + 1.0); ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    if (best_stretch(shuffled, 0, shuffled.size(), min_segment, found.t).t >= found.t) ++as_large;
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
