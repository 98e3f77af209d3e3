#include "dyno/workloads/fashion_mnist_source.h"

#include <torch/torch.h>

#include "dyno/workloads/fashion_mnist.h"
#include "dyno/workloads/image_source.h"

namespace dyno {

std::shared_ptr<const ExampleSource> fashion_mnist_source(const std::string& split, int64_t limit) {
  auto data = std::make_shared<FashionMnistSplit>(load_fashion_mnist(split, limit));
  // The tensor holds the decoded pixels themselves (no copy), and `data` as long as it lives.
  auto images = torch::from_blob(data->images.pixels.data(), {data->images.count, 1, data->images.rows, data->images.cols},
                                 [data](void*) {}, torch::kUInt8);
  auto labels = torch::from_blob(data->labels.data(), {static_cast<int64_t>(data->labels.size())}, torch::kUInt8).to(torch::kLong);
  return std::make_shared<ImageSource>(images, labels, kFashionMnistMean, kFashionMnistStd);
}

}  // namespace dyno
