#include "dyno/reports/python_settings.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"

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
  const std::string py = best_config_python(c, {});
  EXPECT_TRUE(contains(py, "torch.set_num_threads(2)\n")) << py;
  EXPECT_TRUE(contains(py, "batch_size=256, shuffle=True, drop_last=True, num_workers=2, prefetch_factor=4, persistent_workers=True")) << py;
  EXPECT_TRUE(contains(py, "autocast = dict(device_type='cpu', dtype=torch.bfloat16)\n")) << py;
  EXPECT_TRUE(contains(py, "scaler = None  # bf16 needs no loss scaling")) << py;
  EXPECT_TRUE(contains(py, "optimizer.zero_grad(set_to_none=False)")) << py;
  EXPECT_TRUE(contains(py, "optimizer_class = torch.optim.SGD\nlr = 0.4  #")) << py;
}

// What the workload fixes and no knob names: weight decay, SGD's momentum, the warm-up, the loss;
// and the effective batch the learning rate was scaled for, DDP's ranks included.
TEST(PythonSettings, TheRecipeAndTheEffectiveBatchAreStated) {
  RunConfig c;
  c.optimizer = "sgd";
  c.lr = 0.004;
  c.batch_size = 128;
  c.ddp.world_size = 2;
  c.lr_scaling = "linear";
  c.schedule = "cosine";
  std::string py = best_config_python(c, {1e-4, 0.9, 0.05, "cross_entropy"});
  EXPECT_TRUE(contains(py, "optimizer_kwargs = dict(weight_decay=0.0001, momentum=0.9, fused=True)")) << py;
  EXPECT_TRUE(contains(py, "effective batch 256 (batch 128 x grad_accum_steps 1 x 2 DDP ranks: each rank's optimizer takes this lr)")) << py;
  EXPECT_TRUE(contains(py, "the first 5% of steps a linear warm-up")) << py;
  EXPECT_TRUE(contains(py, "cross_entropy(output.flatten(0, -2).float(), targets.flatten()")) << py;
  c.optimizer = "adamw";
  py = best_config_python(c, {0, 0.9, 0, "mse"});
  EXPECT_TRUE(contains(py, "optimizer_kwargs = dict(weight_decay=0, fused=True)")) << py;
  EXPECT_TRUE(contains(py, "mse_loss(output.float(), targets.float().reshape(output.shape)) / len(batches)")) << py;
  EXPECT_TRUE(contains(best_config_python(c, {0, 0.9, 0, "own"}), "the workload's own loss, defined in C++: yours here")) << py;
}

TEST(PythonSettings, AnUnresolvedConfigLeavesOptimizerAndLearningRateToTheRecipe) {
  RunConfig c;
  c.optimizer = "auto";
  c.lr = 0;
  const std::string py = best_config_python(c, {});
  EXPECT_FALSE(contains(py, "optimizer_class =")) << py;
  EXPECT_TRUE(contains(py, "the workload's recipe")) << py;
  EXPECT_TRUE(contains(py, "keep PyTorch's default intra-op thread count")) << py;  // threads 0
}

// glibc reads its tunables only when a process starts: hugepages becomes the environment to start
// Python with; retain can still be set from inside, through ctypes.
TEST(PythonSettings, HostAllocatorSaysWhatToSetAndWhen) {
  RunConfig c;
  c.host_allocator = "hugepages";
  EXPECT_TRUE(contains(best_config_python(c, {}), "GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 python"));
  c.host_allocator = "retain";
  EXPECT_TRUE(contains(best_config_python(c, {}), "libc.mallopt(-4, 0)  # M_MMAP_MAX"));
}

// Every branch parses as Python, without torch (fp16's GradScaler, the user's own loss, hugepages).
TEST(PythonSettings, IsValidPython) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  RunConfig c;
  c.amp = "fp16";
  c.device = "cuda";
  c.host_allocator = "hugepages";
  c.checkpointing = true;
  c.channels_last = true;
  c.optimizer = "sgd";
  c.lr = 0.1;
  c.schedule = "cosine";
  const std::string path = ::testing::TempDir() + "/python_settings_" + std::to_string(::getpid()) + ".py";
  for (const char* loss : {"cross_entropy", "mse", "own"}) {
    write_file_atomically(path, best_config_python(c, {0, 0.9, 0.05, loss}));
    EXPECT_EQ(std::system(("python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' " + path).c_str()), 0) << loss << "\n" << read_file(path);
  }
  std::remove(path.c_str());
}

// The file runs in Python torch and its train_step trains, as the README uses it, for each loss and
// both optimizers, over grad_accum_steps micro-batches.
TEST(PythonSettings, RunsInPythonTorchAndItsTrainStepTrains) {
  if (std::system((std::string(DYNO_PYTHON) + " -c 'import torch' > /dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "no Python torch";
  const std::string dir = ::testing::TempDir() + "/python_settings_" + std::to_string(::getpid());
  std::system(("mkdir -p " + dir).c_str());
  RunConfig c;
  c.amp = "bf16";
  c.host_allocator = "retain";
  c.checkpointing = true;
  c.grad_accum_steps = 2;
  c.clip_grad_norm = 1;
  c.lr = 0.01;
  std::string args;
  for (const auto& [optimizer, loss] : std::vector<std::pair<std::string, std::string>>{
           {"adamw", "cross_entropy"}, {"sgd", "cross_entropy"}, {"adamw", "mse"}}) {
    c.optimizer = optimizer;
    const std::string path = dir + "/" + optimizer + "-" + loss + ".py";
    write_file_atomically(path, best_config_python(c, {1e-4, 0.9, 0.05, loss}));
    args += " " + path + " " + loss;
  }
  write_file_atomically(dir + "/use.py", R"(import runpy, sys, torch
for path, loss in zip(sys.argv[1::2], sys.argv[2::2]):
    tuned = runpy.run_path(path)
    torch.manual_seed(0)
    if loss == "mse":
        models = [(torch.nn.Linear(5, 1), torch.randn(4, 5), torch.randn(4))]
    else:  # a classifier's [B, C] and a sequence model's [B, T, V]
        models = [(torch.nn.Linear(5, 3), torch.randn(4, 5), torch.randint(0, 3, (4,))),
                  (torch.nn.Sequential(torch.nn.Embedding(10, 8), torch.nn.Linear(8, 10)), torch.randint(0, 10, (4, 6)), torch.randint(0, 10, (4, 6)))]
    for model, inputs, targets in models:
        optimizer = tuned["optimizer_class"](model.parameters(), lr=tuned["lr"], **tuned["optimizer_kwargs"])
        assert optimizer.defaults["weight_decay"] == 1e-4, (path, optimizer.defaults)
        before = [p.detach().clone() for p in model.parameters()]
        tuned["train_step"](model, optimizer, [(inputs, targets)] * tuned["grad_accum_steps"])
        assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters())), path
print("trained")
)");
  const std::string command = std::string(DYNO_PYTHON) + " " + dir + "/use.py" + args + " > " + dir + "/out.txt 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << read_file(dir + "/out.txt");
  EXPECT_NE(read_file(dir + "/out.txt").find("trained"), std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace dyno
