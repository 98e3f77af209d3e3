// dyno_bench_workloads: one training step of each reference workload (synthetic batches of the
// workload's shape, so the benchmark isolates compute from data loading), with samples/s (tokens/s
// for text) as Google Benchmark's items_per_second counter; and what the engine's phase marks cost
// a step when it is not profiled: phase_marks/nvtx (NVTX ranges alone, as before --profile
// existed) against phase_marks/unprofiled (suite/phase_range.h outside profiled steps).
//   build/suite/dyno_bench_workloads --benchmark_repetitions=3 --benchmark_out=workloads.json
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "dyno/suite/nvtx_range.h"
#include "dyno/suite/phase_range.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

void train_step(benchmark::State& state, const std::string& name, const std::string& device_name) {
  if (device_name == "cuda" && !torch::cuda::is_available()) {
    state.SkipWithError("skipped: needs a CUDA device (none visible on this machine)");
    return;
  }
  const torch::Device device(device_name);
  const Workload& w = workload_or_throw(name);
  const int64_t batch = state.range(0);
  torch::manual_seed(0);
  SegmentedModel model = w.build_model();
  model->to(device);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(w.recipe.lr));
  torch::Tensor input, target;
  int64_t items = batch;
  if (w.throughput_unit == "tokens") {
    input = torch::randint(0, 96, {batch, 64}, torch::kLong).to(device);
    target = torch::randint(0, 96, {batch, 64}, torch::kLong).to(device);
    items = batch * 64;
  } else {
    input = torch::randn({batch, 1, 28, 28}).to(device);
    target = torch::randint(0, 10, {batch}, torch::kLong).to(device);
  }
  for (auto _ : state) {
    optimizer.zero_grad(true);
    auto logits = model->forward(input);
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), target.reshape({-1}));
    loss.backward();
    optimizer.step();
    if (device.is_cuda()) torch::cuda::synchronize();
  }
  state.SetItemsProcessed(state.iterations() * items);
  state.SetLabel(w.throughput_unit);
}

// A step's marks as the engine opens them: the step, and in it data_wait, h2d, forward,
// backward and optimizer.
template <typename Range>
void phase_marks(benchmark::State& state) {
  for (auto _ : state) {
    Range step("step");
    for (const char* phase : {"data_wait", "h2d", "forward", "backward", "optimizer"}) {
      Range r(phase);
      benchmark::DoNotOptimize(&r);
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("steps");
}

struct NvtxOnly : NvtxRange {
  explicit NvtxOnly(const char* name) : NvtxRange(name) {}
};
struct Unprofiled : PhaseRange {
  explicit Unprofiled(const char* name) : PhaseRange(name, /*profiled=*/false) {}
};

void register_all() {
  benchmark::RegisterBenchmark("phase_marks/nvtx", phase_marks<NvtxOnly>);
  benchmark::RegisterBenchmark("phase_marks/unprofiled", phase_marks<Unprofiled>);
  for (const auto& w : all_workloads())
    for (const char* device : {"cpu", "cuda"})
      benchmark::RegisterBenchmark((w.name + "/" + device).c_str(),
                                   [name = w.name, device = std::string(device)](benchmark::State& s) { train_step(s, name, device); })
          ->Arg(64)
          ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace dyno

int main(int argc, char** argv) {
  dyno::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
