// dyno_bench_workloads: one training step of each reference workload (synthetic batches of the
// workload's shape, so the benchmark isolates compute from data loading), with samples/s (tokens/s
// for text) as Google Benchmark's items_per_second counter.
//   build/suite/dyno_bench_workloads --benchmark_repetitions=3 --benchmark_out=workloads.json
#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "workloads/workload_registry.h"

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

void register_all() {
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
