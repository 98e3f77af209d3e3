#include "workloads/fashion_mnist.h"

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "reports/user_error.h"

namespace dyno {
namespace {

TEST(FashionMnist, ReadsTheDebianFilesDirectly) {
  FashionMnistSplit test = load_fashion_mnist("t10k");
  EXPECT_EQ(test.images.count, 10000);
  EXPECT_EQ(test.images.rows, 28);
  EXPECT_EQ(test.images.cols, 28);
  EXPECT_EQ(test.labels.size(), 10000u);
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
}

TEST(FashionMnist, RejectsFilesThatAreNotIdx) {
  EXPECT_THROW(parse_idx_images({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "x"), UserError);
  EXPECT_THROW(parse_idx_labels({0, 0, 8, 1, 0, 0, 0, 5, 1}, "y"), UserError);  // says 5 labels, has 1
}

}  // namespace
}  // namespace dyno
