// Change points of a series of figures over revisions, by circular binary segmentation (Olshen et
// al. 2004): the stretch [a, b) of a segment whose mean differs most from the rest of it, by the
// two-sample t (variance pooled over both), is a change (at a, and at b unless it reaches the
// segment's end) when a permutation test (up to 999 shuffles of the segment, a fixed seed) gives p < alpha; each part is then searched the
// same way. A stretch that runs to an end is a single step; one inside, a change and its reversal.
// Parts keep at least `min_segment` points. No distribution is assumed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dyno {

struct ChangePoint {
  size_t index = 0;    // the first point after the change
  double before = 0;   // mean of the segment before, and after
  double after = 0;
  double p_value = 1;
};

std::vector<ChangePoint> change_points(const std::vector<double>& series, double alpha = 0.01, size_t min_segment = 3, uint64_t seed = 0);

}  // namespace dyno
