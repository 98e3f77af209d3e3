// Statistically sound comparison of two sets of per-repetition figures (throughput of each run,
// time of each benchmark repetition), for `dyno compare` and `dyno check`.
//
// The shift is estimated on the log scale, so it reads as a relative change: Hodges-Lehmann
// (median of all pairwise differences; of the Walsh averages for paired ABBA data), with a
// distribution-free confidence interval from the Mann-Whitney / Wilcoxon signed-rank statistic
// and a one-sided p-value for "the candidate is worse". Verdicts:
//   FAIL          significant at `alpha` AND the estimated regression is at least `threshold`;
//   PASS          the upper confidence bound of the regression is below `threshold`, at the
//                 stated confidence (too few repetitions for it give no PASS);
//   INCONCLUSIVE  anything else (too few or too noisy repetitions to tell).
#pragma once

#include <string>
#include <vector>

namespace dyno {

struct ShiftEstimate {
  double regression = 0;        // estimated relative regression: 0.05 = 5% more time per item (throughput / 1.05)
  double regression_low = 0;    // confidence interval of that
  double regression_high = 0;
  double p_value = 1;           // one-sided: probability of a shift this large if there were none
  // Too few repetitions for the confidence: even the whole range falls short of it (at 99%: fewer
  // than 8 pairs; n and m runs with C(n + m, n) below 200, as 3 x 3, 4 x 5 or 3 against 8); the
  // interval is that range, and gives no PASS.
  bool short_of_confidence = false;
  int candidate_count = 0;
  int baseline_count = 0;
};

struct CompareOptions {
  double threshold = 0.05;
  double alpha = 0.01;
  double confidence = 0.99;
};

// higher_is_better: throughput (a drop is a regression); false: times (a rise is a regression).
ShiftEstimate estimate_shift(const std::vector<double>& baseline, const std::vector<double>& candidate, bool higher_is_better,
                             double confidence);
// Pairs (baseline[i], candidate[i]) measured back to back (ABBA blocks).
ShiftEstimate estimate_paired_shift(const std::vector<double>& baseline, const std::vector<double>& candidate,
                                    bool higher_is_better, double confidence);

std::string verdict(const ShiftEstimate& shift, const CompareOptions& options);  // PASS | FAIL | INCONCLUSIVE

// Holm's step-down test over several metrics' one-sided p-values: which hypotheses of no change
// are rejected while keeping the chance of any false rejection among them at `alpha` (the
// smallest p against alpha/m, the next against alpha/(m-1), ..., stopping at the first kept).
std::vector<bool> holm_rejections(const std::vector<double>& p_values, double alpha);

// The significance level each look of a sequential test uses so that, with no change, the chance
// of a rejection at any of the looks is `alpha` (Pocock's constant boundary): a re-run that tests
// again after every block would otherwise reject more often than alpha over all its looks.
// `looks` are the cumulative sample sizes at which the test may be made, increasing; one look
// gives alpha itself. The boundary is found by simulating the looks' standardised sums with a
// fixed seed, so the same looks give the same level on every run.
double sequential_look_alpha(double alpha, const std::vector<int>& looks);
// The smallest alpha with more than one look whose sequential level the simulation tells (100 of
// its paths beyond it).
inline constexpr double kSmallestAlpha = 5e-4;

// Standard normal helpers (exposed for tests).
double normal_cdf(double z);
double normal_quantile(double p);
// Student's t quantile for any positive (also fractional) degrees of freedom: the root of the
// distribution function (the regularised incomplete beta), to about 1e-12 relative.
double student_t_quantile(double p, double degrees_of_freedom);

}  // namespace dyno
