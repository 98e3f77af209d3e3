// text-transformer's model: a decoder-only, pre-LayerNorm character Transformer (learned token and
// position embeddings, causal self-attention through scaled_dot_product_attention, GELU MLP).
#pragma once

#include "dyno/workloads/segmented_model.h"

namespace dyno {

struct CharTransformerOptions {
  int64_t vocabulary = 96;
  int64_t context = 64;
  int64_t width = 128;
  int64_t heads = 4;
  int64_t layers = 4;
  double dropout = 0.1;
};

SegmentedModel make_char_transformer(const CharTransformerOptions& options);

}  // namespace dyno
