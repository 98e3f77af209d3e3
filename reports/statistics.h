// Small robust statistics used for throughput figures: medians and quantiles of per-window or
// per-repetition samples, so that one slow window on a noisy machine does not move the figure.
#pragma once

#include <vector>

namespace dyno {

double quantile(std::vector<double> values, double q);  // linear interpolation; NaN when empty
double median(const std::vector<double>& values);
// Interquartile range divided by the median: a relative spread that ignores outliers.
double relative_iqr(const std::vector<double>& values);

}  // namespace dyno
