// Small robust statistics used for throughput figures: medians and quantiles of per-window or
// per-repetition samples, so that one slow window on a noisy machine does not move the figure.
#pragma once

#include <cstddef>
#include <vector>

namespace dyno {

double quantile(std::vector<double> values, double q);  // linear interpolation; NaN when empty
double median(const std::vector<double>& values);
// Interquartile range divided by the median: a relative spread that ignores outliers.
double relative_iqr(const std::vector<double>& values);

struct Interval {
  double low = 0;
  double high = 0;
};

// Distribution-free confidence interval for the median from order statistics (binomial ranks):
// no normality assumption, robust to the odd slow window. With fewer than kFewestWindowsFor95
// values it cannot reach 95% and returns [min, max].
Interval median_confidence_interval(const std::vector<double>& values, double confidence = 0.95);
// The fewest values whose median's 95% interval exists ([min, max] covers 1 - 2 / 2^n: 96.9% at
// 6); early stops on throughput windows wait for this many, in `dyno train` and for a program alike.
constexpr size_t kFewestWindowsFor95 = 6;
// Half-width of that interval divided by the median.
double relative_ci_half_width(const std::vector<double>& values, double confidence = 0.95);

}  // namespace dyno
