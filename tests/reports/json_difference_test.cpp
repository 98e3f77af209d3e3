#include "dyno/reports/json_difference.h"

#include <vector>

#include <gtest/gtest.h>

namespace dyno {
namespace {

// The message names where two headers differ, not two long values cut off before they do.
TEST(JsonDifference, NamesThePathAndBothValuesOfTheFirstDifference) {
  const auto made = nlohmann::json::parse(R"({"amp": "off", "batch_size": 64, "workload": "fashion-mlp"})");
  auto making = made;
  making["workload"] = "fashion-cnn";
  EXPECT_EQ(first_difference("base_config", made, making), "base_config/workload \"fashion-mlp\", not \"fashion-cnn\"");
  making = made;
  making.erase("amp");
  EXPECT_EQ(first_difference("base_config", made, making), "base_config/amp \"off\", not (none)");
  EXPECT_EQ(first_difference("seed", 0, 7), "seed 0, not 7");
  EXPECT_EQ(first_difference("seed", 7, 7), "");
  // A list is shown whole, as the option that gave it wrote it.
  EXPECT_EQ(first_difference("space", {{"axes", {{"batch_size", {32, 64}}}}}, {{"axes", {{"batch_size", {64, 128}}}}}),
            "space/axes/batch_size [32,64], not [64,128]");
  EXPECT_EQ(first_difference("space", {{"axes", {{"batch_size", {32}}}}}, {{"axes", {{"batch_size", {32, 64}}}}}),
            "space/axes/batch_size [32], not [32,64]");
  // A long one by its first differing element: cut at 200 characters, both sides would read alike.
  std::vector<int> long_list(100, 1000), other = long_list;
  other[90] = 7;
  EXPECT_EQ(first_difference("space", {{"x", long_list}}, {{"x", other}}), "space/x/90 1000, not 7");
}

}  // namespace
}  // namespace dyno
