// fashion-mlp's model: 784-256-128-10 with ReLU (the published MLP baseline is 256-128-100).
#pragma once

#include "dyno/workloads/segmented_model.h"

namespace dyno {

SegmentedModel make_mlp(int64_t inputs, const std::vector<int64_t>& hidden, int64_t classes);

}  // namespace dyno
