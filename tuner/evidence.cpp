#include "tuner/evidence.h"

#include <numeric>

namespace dyno {

double PointEvidence::mean() const {
  if (figures.empty()) return 0.0;
  return std::accumulate(figures.begin(), figures.end(), 0.0) / static_cast<double>(figures.size());
}

}  // namespace dyno
