// Activation checkpointing of one model segment: the forward pass runs without keeping the
// segment's intermediate activations; backward re-runs the segment (with the RNG and autocast
// state of the original forward, and BatchNorm buffers restored afterwards) and back-propagates
// through the recomputation. Gradients equal those of the plain run.
//
// Contract: the segment must outlive the backward pass of the returned tensor (it does: the
// engine owns the model for the whole run).
#pragma once

#include <torch/nn/modules/container/sequential.h>

namespace dyno {

torch::Tensor checkpointed_forward(torch::nn::Sequential& segment, const torch::Tensor& input);

}  // namespace dyno
