// fashion-cnn's model: two conv blocks (3x3 conv without bias -> BatchNorm -> ReLU -> 2x2 max pool;
// the BN shift makes a conv bias redundant) and two linear layers with dropout between them.
#pragma once

#include "dyno/workloads/segmented_model.h"

namespace dyno {

// conv_bias=true puts the redundant bias back (for the "bias before BN" benchmark).
SegmentedModel make_conv_net(int64_t classes, bool conv_bias = false);

}  // namespace dyno
