#include "tuner/evidence.h"

#include <cmath>
#include <numeric>

#include "reports/comparison.h"

namespace dyno {

double PointEvidence::estimate() const {
  if (figures.empty()) return 0.0;
  return std::accumulate(figures.begin(), figures.end(), 0.0) / static_cast<double>(figures.size());
}

void NoiseModel::add(const PointEvidence& point) {
  if (point.processes() < 2) return;
  const double mean = point.estimate();
  for (double f : point.figures) sum_of_squares_ += (f - mean) * (f - mean);
  degrees_of_freedom_ += static_cast<double>(point.processes() - 1);
}

double NoiseModel::variance() const {
  return (kPriorWeight * kPriorSigma * kPriorSigma + sum_of_squares_) / degrees_of_freedom();
}

double student_t_quantile(double p, double degrees_of_freedom) {
  const double pi = 3.14159265358979323846;
  if (degrees_of_freedom <= 1.0) return std::tan(pi * (p - 0.5));
  if (degrees_of_freedom <= 2.0) return (2 * p - 1) / std::sqrt(2 * p * (1 - p));
  const double z = normal_quantile(p), v = degrees_of_freedom;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v * v * v * v);
}

}  // namespace dyno
