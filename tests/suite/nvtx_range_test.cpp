#include "dyno/suite/nvtx_range.h"

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace dyno {
namespace {

// Runs the real binary under the test injection library and checks the recorded ranges.
TEST(NvtxRange, TrainingRecordsNestedStableRanges) {
  auto dir = testing::fresh_dir("nvtx");
  const auto record = (dir / "ranges.txt").string();
  auto result = testing::run_dyno(
      "train --workload fashion-mlp --set size=tiny epochs=2 threads=1 --no-progress --out " + (dir / "run.json").string(),
      std::string("NVTX_INJECTION64_PATH=") + DYNO_NVTX_RECORDER + " DYNO_NVTX_RECORD=" + record);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(record);
  ASSERT_TRUE(in) << "the injection library wrote nothing: NVTX ranges were not emitted";
  std::map<std::string, int> pushes;
  std::vector<std::string> stack;
  std::string kind, name;
  bool step_inside_epoch_inside_run = true;
  while (in >> kind >> name) {
    if (kind == "push") {
      ++pushes[name];
      if (name == "step") step_inside_epoch_inside_run &= stack.size() >= 2 && stack[0] == "run" && stack.back() == "epoch";
      if (name == "forward") {
        EXPECT_EQ(stack.back(), "step");
      }
      stack.push_back(name);
    } else {
      ASSERT_FALSE(stack.empty());
      EXPECT_EQ(stack.back(), name);
      stack.pop_back();
    }
  }
  EXPECT_TRUE(stack.empty()) << "unbalanced ranges";
  EXPECT_TRUE(step_inside_epoch_inside_run);
  EXPECT_EQ(pushes["run"], 1);
  EXPECT_EQ(pushes["epoch"], 2);
  EXPECT_EQ(pushes["step"], 16);  // 512 / 64 = 8 steps per epoch
  for (const char* phase : {"data_wait", "h2d", "forward", "backward", "optimizer"}) EXPECT_EQ(pushes[phase], 16) << phase;
  EXPECT_EQ(pushes["eval"], 2);
  testing::remove_tree(dir);
}

}  // namespace
}  // namespace dyno
