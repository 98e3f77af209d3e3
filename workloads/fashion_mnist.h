// Reads Fashion-MNIST straight from the Debian package's gzip-compressed IDX files
// (/usr/share/datasets/fashion-mnist, package dataset-fashion-mnist); no unpacking step (the
// decoded bytes are kept in the data cache, workloads/gzip_file.h).
// DYNO_FASHION_MNIST_DIR overrides the folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dyno {

struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, row-major
};

struct FashionMnistSplit {
  IdxImages images;
  std::vector<uint8_t> labels;
};

inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;
inline constexpr int kFashionClasses = 10;  // labels 0..9

std::string fashion_mnist_dir();
// split: "train" (60,000) or "t10k" (10,000). limit > 0 keeps the first `limit` examples.
FashionMnistSplit load_fashion_mnist(const std::string& split, int64_t limit = 0);

// Exposed for tests.
IdxImages parse_idx_images(std::vector<uint8_t> bytes, const std::string& path);
std::vector<uint8_t> parse_idx_labels(const std::vector<uint8_t>& bytes, const std::string& path);

}  // namespace dyno
