// Fashion-MNIST as training examples: a split read by load_fashion_mnist, as an ImageSource that
// normalises with the data set's mean and deviation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dyno/workloads/example_source.h"

namespace dyno {

// split: "train" or "t10k"; limit > 0 keeps the first `limit` examples. Throws UserError as
// load_fashion_mnist does.
std::shared_ptr<const ExampleSource> fashion_mnist_source(const std::string& split, int64_t limit = 0);

}  // namespace dyno
