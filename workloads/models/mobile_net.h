// fashion-mobilenet's model: a small MobileNet-style net of depthwise-separable conv blocks
// (3x3 depthwise -> BN -> ReLU -> 1x1 pointwise -> BN -> ReLU) with squeeze-excitation gates.
#pragma once

#include "dyno/workloads/segmented_model.h"

namespace dyno {

SegmentedModel make_mobile_net(int64_t classes);

}  // namespace dyno
