// The benchmark binaries run on CPU and skip CUDA-only cases with a reason (not silently).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace dyno {
namespace {

nlohmann::json run_bench(const std::string& binary, const std::string& filter) {
  const std::string command = binary + " --benchmark_filter='" + filter + "' --benchmark_min_time=0.01 --benchmark_format=json 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(::pclose(pipe), 0);
  return nlohmann::json::parse(out);
}

TEST(BenchBinaries, TechniquesRunOnCpuAndSkipCudaWithAReason) {
  auto j = run_bench(DYNO_BENCH_TECHNIQUES, "wrap_memory|h2d_copy|zero_grad");
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : j["benchmarks"]) by_name[b["name"]] = b;
  ASSERT_TRUE(by_name.count("wrap_memory/from_blob"));
  EXPECT_GT(by_name["wrap_memory/from_blob"]["real_time"].get<double>(), 0);
  EXPECT_GT(by_name["zero_grad/set_to_none"]["items_per_second"].get<double>(), 0);
  ASSERT_TRUE(by_name.count("h2d_copy/pinned_non_blocking"));  // listed, not dropped
  const auto& pinned = by_name["h2d_copy/pinned_non_blocking"];
  if (pinned.value("error_occurred", false)) {
    EXPECT_NE(pinned["error_message"].get<std::string>().find("skipped: needs a CUDA device"), std::string::npos);
  } else {
    EXPECT_GT(pinned["real_time"].get<double>(), 0);  // a GPU machine runs it
  }
}

TEST(BenchBinaries, WorkloadStepsReportSamplesPerSecond) {
  auto j = run_bench(DYNO_BENCH_WORKLOADS, "fashion-mlp");
  bool cpu = false, cuda_listed = false;
  for (const auto& b : j["benchmarks"]) {
    const std::string name = b["name"];
    if (name.find("fashion-mlp/cpu") == 0) {
      cpu = true;
      EXPECT_GT(b["items_per_second"].get<double>(), 0);
    }
    if (name.find("fashion-mlp/cuda") == 0) cuda_listed = true;
  }
  EXPECT_TRUE(cpu);
  EXPECT_TRUE(cuda_listed);
}

}  // namespace
}  // namespace dyno
