// TensorSource: tensors a user builds in C++, or saved from Python with torch.save.
#include "dyno/workloads/tensor_source.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_files.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;
using testing::fixture;

TEST(TensorSource, ReadsWhatPythonSaved) {
  auto source = TensorSource::from_file(fixture("data.pt"));
  EXPECT_EQ(source->size(), 2400);
  EXPECT_EQ(source->inputs().sizes(), torch::IntArrayRef({2400, 1, 28, 28}));
  EXPECT_EQ(source->inputs().scalar_type(), torch::kFloat);
  EXPECT_EQ(source->targets().scalar_type(), torch::kLong);
  // The same values Python saved: the batch of the gradient file is the data's first 32 examples.
  auto expected = testing::saved_dict("grads.pt");
  std::vector<int64_t> first(32);
  std::iota(first.begin(), first.end(), 0);
  Batch batch = source->make_batch(first);
  EXPECT_TRUE(torch::equal(batch.input, expected.at("inputs").toTensor()));
  EXPECT_TRUE(torch::equal(batch.target, expected.at("targets").toTensor()));
  EXPECT_EQ(batch.items, 32);
}

TEST(TensorSource, FloatsBecomeFloat32AndIntegersInt64) {
  auto source = TensorSource::from_file(fixture("mixed.pt"));  // float64 inputs, int32 targets
  EXPECT_EQ(source->inputs().scalar_type(), torch::kFloat);
  EXPECT_EQ(source->targets().scalar_type(), torch::kLong);
  TensorSource built(torch::rand({4, 3}, torch::kHalf), torch::tensor({0, 1, 2, 1}, torch::kInt8));
  EXPECT_EQ(built.make_batch({3, 0}).input.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(built.make_batch({3, 0}).target, torch::tensor({1, 0}, torch::kLong)));
}

TEST(TensorSource, ReadsALargeFile) {
  auto source = TensorSource::from_file(fixture("big.pt"));  // 100 MiB of float32
  EXPECT_EQ(source->inputs().numel(), 100 * 1024 * 1024 / 4);
  const double sum = testing::saved_dict("big_sum.pt").at("sum").toTensor().item<double>();
  EXPECT_NEAR(source->inputs().to(torch::kDouble).sum().item<double>(), sum, 1e-9 * sum);
}

TEST(TensorSource, SliceSharesTheExamples) {
  TensorSource source(torch::arange(10).to(torch::kFloat).unsqueeze(1), torch::arange(10));
  auto tail = source.slice(7, 3);
  EXPECT_EQ(tail->size(), 3);
  EXPECT_TRUE(torch::equal(tail->make_batch({0}).target, torch::tensor({7}, torch::kLong)));
}

TEST(TensorSource, BadFilesNameTheFileTheKeyAndTheFix) {
  EXPECT_EQ(error_of([] { TensorSource::from_file("/nonexistent/data.pt"); }),
            "[data] '/nonexistent/data.pt' does not exist or is not a file; write it with torch.save({\"inputs\": X, \"targets\": Y}, path)");
  EXPECT_NE(error_of([] { TensorSource::from_file(fixture("legacy.pt")); }).find("legacy.pt' is not a torch.save file (zip format)"), std::string::npos);
  EXPECT_NE(error_of([] { TensorSource::from_file(fixture("not_a_dict.pt")); }).find("not_a_dict.pt' holds a Tensor; expected a dict"), std::string::npos);
  EXPECT_NE(error_of([] { TensorSource::from_file(fixture("no_targets.pt")); })
                .find("no_targets.pt' has no key 'targets' (it has 'inputs', 'labels'); save a dict {\"inputs\": X, \"targets\": Y}"),
            std::string::npos);
  EXPECT_EQ(error_of([] { TensorSource(torch::rand({3, 2}), torch::arange(4), "'d.pt'"); }),
            "[data] 'd.pt': inputs have 3 examples [3, 2] but targets have 4 [4]; they must match");
  EXPECT_NE(error_of([] { TensorSource::from_file(fixture("model.pt")); }).find("model.pt' could not be read as a torch.save file"),
            std::string::npos);
  EXPECT_NE(error_of([] { TensorSource(torch::rand({3, 2}), torch::tensor({true, false, true})); }).find("targets is Bool"), std::string::npos);
}

}  // namespace
}  // namespace dyno
