#include "reports/python_settings.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "reports/atomic_file.h"

namespace dyno {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PythonSettings, EachKnobBecomesThePyTorchSettingItNames) {
  RunConfig c;
  c.workload = "fashion-cnn";
  c.device = "cpu";
  c.threads = 2;
  c.batch_size = 256;
  c.num_workers = 2;
  c.prefetch = 4;
  c.amp = "bf16";
  c.set_to_none = false;
  c.optimizer = "sgd";
  c.lr = 0.4;
  const std::string py = best_config_python(c);
  EXPECT_TRUE(contains(py, "torch.set_num_threads(2)\n")) << py;
  EXPECT_TRUE(contains(py, "batch_size=256, shuffle=True, drop_last=True, num_workers=2, prefetch_factor=4, persistent_workers=True")) << py;
  EXPECT_TRUE(contains(py, "autocast = dict(device_type='cpu', dtype=torch.bfloat16)\n")) << py;
  EXPECT_TRUE(contains(py, "scaler = None  # bf16 needs no loss scaling")) << py;
  EXPECT_TRUE(contains(py, "optimizer.zero_grad(set_to_none=False)")) << py;
  EXPECT_TRUE(contains(py, "optimizer_class = torch.optim.SGD\nlr = 0.4  #")) << py;
}

TEST(PythonSettings, AnUnresolvedConfigLeavesOptimizerAndLearningRateToTheRecipe) {
  RunConfig c;
  c.optimizer = "auto";
  c.lr = 0;
  const std::string py = best_config_python(c);
  EXPECT_FALSE(contains(py, "optimizer_class =")) << py;
  EXPECT_TRUE(contains(py, "the workload's recipe")) << py;
  EXPECT_TRUE(contains(py, "keep PyTorch's default intra-op thread count")) << py;  // threads 0
}

// glibc reads its tunables only when a process starts: hugepages becomes the environment to start
// Python with; retain can still be set from inside, through ctypes.
TEST(PythonSettings, HostAllocatorSaysWhatToSetAndWhen) {
  RunConfig c;
  c.host_allocator = "hugepages";
  EXPECT_TRUE(contains(best_config_python(c), "GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 python"));
  c.host_allocator = "retain";
  EXPECT_TRUE(contains(best_config_python(c), "libc.mallopt(-4, 0)  # M_MMAP_MAX"));
}

TEST(PythonSettings, IsValidPython) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  RunConfig c;
  c.amp = "fp16";
  c.host_allocator = "retain";
  c.checkpointing = true;
  const std::string path = ::testing::TempDir() + "/python_settings_" + std::to_string(::getpid()) + ".py";
  write_file_atomically(path, best_config_python(c));
  EXPECT_EQ(std::system(("python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' " + path).c_str()), 0) << read_file(path);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dyno
