#include "dyno/workloads/fashion_mnist.h"

#include <cstdlib>
#include <utility>

#include "dyno/reports/user_error.h"
#include "dyno/workloads/gzip_file.h"

namespace dyno {
namespace {

uint32_t big_endian_u32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | uint32_t{b[at + 3]};
}

}  // namespace

std::string fashion_mnist_dir() {
  if (const char* dir = std::getenv("DYNO_FASHION_MNIST_DIR")) return dir;
  return "/usr/share/datasets/fashion-mnist";
}

IdxImages parse_idx_images(std::vector<uint8_t> bytes, const std::string& path) {
  if (bytes.size() < 16 || big_endian_u32(bytes, 0) != 0x00000803)
    throw UserError("data", "'" + path + "' is not an IDX image file (magic 0x00000803)");
  IdxImages images;
  images.count = big_endian_u32(bytes, 4);
  images.rows = big_endian_u32(bytes, 8);
  images.cols = big_endian_u32(bytes, 12);
  // rows * cols fits 64 bits (each is 32); count * that may not: compared by division instead.
  const uint64_t image_bytes = static_cast<uint64_t>(images.rows) * static_cast<uint64_t>(images.cols);
  const uint64_t pixel_bytes = bytes.size() - 16;
  if (image_bytes == 0 || pixel_bytes % image_bytes != 0 || pixel_bytes / image_bytes != static_cast<uint64_t>(images.count))
    throw UserError("data", "'" + path + "' does not hold its header's " + std::to_string(images.count) + " images of " +
                                std::to_string(images.rows) + "x" + std::to_string(images.cols) + " pixels: it has " +
                                std::to_string(pixel_bytes) + " bytes of pixels (truncated, or not an IDX image file)");
  if (images.count == 0) throw UserError("data", "'" + path + "' holds no images (an evaluation over none has no accuracy)");
  bytes.erase(bytes.begin(), bytes.begin() + 16);  // in place: no second copy of the pixels
  images.pixels = std::move(bytes);
  return images;
}

std::vector<uint8_t> parse_idx_labels(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.size() < 8 || big_endian_u32(bytes, 0) != 0x00000801)
    throw UserError("data", "'" + path + "' is not an IDX label file (magic 0x00000801)");
  size_t count = big_endian_u32(bytes, 4);
  if (bytes.size() != 8 + count) throw UserError("data", "'" + path + "' is truncated");
  // Ten classes: a label past them would stop training deep in a step (or a device-side assert).
  for (size_t i = 8; i < bytes.size(); ++i)
    if (bytes[i] >= kFashionClasses)
      throw UserError("data", "'" + path + "': label " + std::to_string(bytes[i]) + " of example " + std::to_string(i - 8) + " is not a class 0.." +
                                  std::to_string(kFashionClasses - 1));
  return {bytes.begin() + 8, bytes.end()};
}

FashionMnistSplit load_fashion_mnist(const std::string& split, int64_t limit) {
  if (split != "train" && split != "t10k")
    throw UserError("data", "fashion-mnist split '" + split + "' is not one of train, t10k");
  const std::string dir = fashion_mnist_dir();
  const std::string images_path = dir + "/" + split + "-images-idx3-ubyte.gz";
  const std::string labels_path = dir + "/" + split + "-labels-idx1-ubyte.gz";
  FashionMnistSplit out;
  out.images = parse_idx_images(read_gzip_file(images_path, "dataset-fashion-mnist"), images_path);
  out.labels = parse_idx_labels(read_gzip_file(labels_path, "dataset-fashion-mnist"), labels_path);
  if (static_cast<int64_t>(out.labels.size()) != out.images.count)
    throw UserError("data", "'" + labels_path + "' has " + std::to_string(out.labels.size()) + " labels for " +
                                std::to_string(out.images.count) + " images");
  if (limit > 0 && limit < out.images.count) {
    out.images.count = limit;
    out.images.pixels.resize(static_cast<size_t>(limit * out.images.rows * out.images.cols));
    out.images.pixels.shrink_to_fit();  // the images tensor holds this vector for the whole run
    out.labels.resize(static_cast<size_t>(limit));
  }
  return out;
}

}  // namespace dyno
