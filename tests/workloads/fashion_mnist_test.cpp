#include "dyno/workloads/fashion_mnist.h"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"
#include "temp_dir.h"

namespace dyno {
namespace {

TEST(FashionMnist, ReadsTheDebianFilesDirectly) {
  FashionMnistSplit test = load_fashion_mnist("t10k");
  EXPECT_EQ(test.images.count, 10000);
  EXPECT_EQ(test.images.rows, 28);
  EXPECT_EQ(test.images.cols, 28);
  EXPECT_EQ(test.labels.size(), 10000u);
  EXPECT_EQ(test.images.pixels.size(), 10000u * 28 * 28);
  std::vector<int> per_class(10, 0);
  for (uint8_t label : test.labels) {
    ASSERT_LT(label, 10);
    ++per_class[label];
  }
  for (int count : per_class) EXPECT_EQ(count, 1000);  // the test set is balanced
  double mean = 0;
  for (uint8_t p : test.images.pixels) mean += p;
  mean /= 255.0 * static_cast<double>(test.images.pixels.size());
  EXPECT_NEAR(mean, kFashionMnistMean, 0.01);
}

TEST(FashionMnist, LimitKeepsTheFirstExamples) {
  FashionMnistSplit tiny = load_fashion_mnist("train", 100);
  EXPECT_EQ(tiny.images.count, 100);
  EXPECT_EQ(tiny.images.pixels.size(), 100u * 28 * 28);
  EXPECT_EQ(tiny.labels.size(), 100u);
}

TEST(FashionMnist, MissingFilesNameThePackage) {
  auto empty = std::filesystem::temp_directory_path() / "dyno_no_fashion";
  std::filesystem::create_directories(empty);
  setenv("DYNO_FASHION_MNIST_DIR", empty.c_str(), 1);
  try {
    load_fashion_mnist("train");
    FAIL() << "no error for missing files";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset-fashion-mnist"), std::string::npos) << e.what();
  }
  unsetenv("DYNO_FASHION_MNIST_DIR");
  testing::remove_tree(empty);
}

TEST(FashionMnist, PixelsStartAfterTheHeader) {
  // Two images of 1x2 pixels: magic 0x00000803, count 2, rows 1, cols 2, then 1 2 3 4.
  const IdxImages images = parse_idx_images({0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3, 4}, "x");
  EXPECT_EQ(images.count, 2);
  EXPECT_EQ(images.pixels, (std::vector<uint8_t>{1, 2, 3, 4}));
}

TEST(FashionMnist, AHeaderItsPixelsDoNotMatchIsRefusedWithBothCounts) {
  // A count of 2^32 - 1 images of 65535x65535 pixels (the product overflows 64 bits) over 4 bytes.
  const std::vector<uint8_t> huge{0, 0, 8, 3, 255, 255, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 1, 2, 3, 4};
  try {
    parse_idx_images(huge, "x.gz");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("4294967295 images of 65535x65535 pixels: it has 4 bytes of pixels"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_idx_images({0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 3}, "x"), UserError);  // one byte short
  EXPECT_THROW(parse_idx_images({0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "x"), UserError);  // images of 0x0 pixels
  try {  // no images (an evaluation split over none trained "ok" at accuracy NaN)
    parse_idx_images({0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28}, "t10k.gz");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "[data] 't10k.gz' holds no images (an evaluation over none has no accuracy)");
  }
}

TEST(FashionMnist, RejectsFilesThatAreNotIdx) {
  EXPECT_THROW(parse_idx_images({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "x"), UserError);
  EXPECT_THROW(parse_idx_labels({0, 0, 8, 1, 0, 0, 0, 5, 1}, "y"), UserError);  // says 5 labels, has 1
}

// Fashion-MNIST has ten classes: a label past them is refused with the example it is at.
TEST(FashionMnist, ALabelPastTheTenClassesIsRefused) {
  EXPECT_EQ(parse_idx_labels({0, 0, 8, 1, 0, 0, 0, 2, 0, 9}, "y"), (std::vector<uint8_t>{0, 9}));
  try {
    parse_idx_labels({0, 0, 8, 1, 0, 0, 0, 3, 1, 2, 10}, "y.gz");
    FAIL() << "label 10 was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'y.gz': label 10 of example 2 is not a class 0..9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyno
