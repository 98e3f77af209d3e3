// Fashion-MNIST's IDX files (workloads/fashion_mnist.h), after decoding: the first byte picks
// the image reader or the label reader, the rest is the file.
#include "fuzz_reader.h"
#include "dyno/workloads/fashion_mnist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> file(data + 1, data + size);
  return dyno::fuzz_reader([&] {
    if (data[0] % 2 == 0) dyno::parse_idx_images(std::move(file), "images.gz");
    else dyno::parse_idx_labels(file, "labels.gz");
  });
}
