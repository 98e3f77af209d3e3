// dyno_bench_techniques: one Google Benchmark pair per technique of ../shared/TECHNIQUES.md that
// can be isolated (baseline variant vs technique variant, named "<technique>/<variant>"; the pairs
// are listed in reports/technique_claims.cpp). CUDA-only cases are skipped with a reason where no
// GPU is visible, never dropped. `dyno report techniques RESULT.json` prints claimed vs measured.
//   build/suite/dyno_bench_techniques --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true --benchmark_out=techniques.json
#include <malloc.h>

#include <benchmark/benchmark.h>
#include <torch/cuda.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "dyno/suite/activation_checkpoint.h"
#include "dyno/suite/autocast_scope.h"
#include "dyno/suite/data_loader.h"
#include "dyno/suite/training_optimizer.h"
#include "dyno/workloads/image_source.h"
#include "dyno/workloads/models/conv_net.h"
#include "dyno/workloads/models/mlp.h"

namespace dyno {
namespace {

// Techniques whose claim is about GPUs run on the GPU where one is visible (labelled "cuda"),
// else on the CPU (labelled "cpu"); each iteration then ends with the device idle.
c10::Device claim_device() { return torch::cuda::is_available() ? c10::Device(c10::kCUDA) : c10::Device(c10::kCPU); }

void finish(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

bool skip_without_cuda(benchmark::State& state) {
  if (torch::cuda::is_available()) return false;
  state.SkipWithError("skipped: needs a CUDA device (none visible on this machine)");
  return true;
}

// One MLP training step on a fixed batch: the unit most step-level techniques change.
struct MlpStep {
  SegmentedModel model = make_mlp(784, {256, 128}, 10);
  torch::Tensor x = torch::randn({64, 1, 28, 28});
  torch::Tensor y = torch::randint(0, 10, {64});
  std::vector<torch::Tensor> parameters = model->parameters();
  TrainingOptimizer optimizer{parameters, {"adamw", "fused", 1e-3, 0, 0}};  // the engine's default step
  torch::Tensor step(bool set_to_none = true, double clip = 0) {
    optimizer.zero_grad(set_to_none);
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    if (clip > 0) clip_grad_norm_on_device(parameters, clip);
    optimizer.step();
    return loss.detach();
  }
};

void zero_grad(benchmark::State& state, bool set_to_none) {
  MlpStep s;
  for (auto _ : state) benchmark::DoNotOptimize(s.step(set_to_none));
  state.SetItemsProcessed(state.iterations() * 64);
}

void wrap_memory(benchmark::State& state, bool wrap) {
  std::vector<float> host(1 << 20, 1.0f);
  for (auto _ : state) {
    auto t = wrap ? torch::from_blob(host.data(), {static_cast<int64_t>(host.size())}, torch::kFloat)
                  : torch::tensor(host);
    benchmark::DoNotOptimize(t.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(host.size() * sizeof(float)));
}

void h2d_copy(benchmark::State& state, bool pinned) {
  if (skip_without_cuda(state)) return;
  auto host = torch::randn({64, 1, 224, 224});
  if (pinned) host = host.pin_memory();
  for (auto _ : state) {
    auto d = host.to(torch::kCUDA, /*non_blocking=*/pinned);
    torch::cuda::synchronize();
    benchmark::DoNotOptimize(d.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * host.numel() * 4);
}

void cudnn_conv(benchmark::State& state, bool autotune) {
  if (skip_without_cuda(state)) return;
  at::globalContext().setBenchmarkCuDNN(autotune);
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 64, 3).padding(1));
  conv->to(torch::kCUDA);
  auto x = torch::randn({32, 64, 56, 56}, torch::kCUDA);
  for (int i = 0; i < 3; ++i) conv->forward(x);  // autotuning happens on the first calls
  for (auto _ : state) {
    benchmark::DoNotOptimize(conv->forward(x).data_ptr());
    torch::cuda::synchronize();
  }
  at::globalContext().setBenchmarkCuDNN(false);
}

void conv_bn(benchmark::State& state, bool bias) {
  SegmentedModel model = make_conv_net(10, bias);
  auto x = torch::randn({64, 1, 28, 28});
  for (auto _ : state) {
    model->zero_grad();
    model->forward(x).sum().backward();
  }
  state.SetItemsProcessed(state.iterations() * 64);
  state.counters["parameters"] = static_cast<double>(model->parameter_count());
}

void eval(benchmark::State& state, bool no_grad) {
  SegmentedModel model = make_conv_net(10);
  model->eval();
  auto x = torch::randn({256, 1, 28, 28});
  for (auto _ : state) {
    std::optional<torch::NoGradGuard> guard;
    if (no_grad) guard.emplace();
    benchmark::DoNotOptimize(model->forward(x).data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * 256);
}

int64_t heap_in_use() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<int64_t>(info.uordblks + info.hblkhd);
}

void checkpoint(benchmark::State& state, bool checkpointed) {
  // A deep, wide stack of blocks: activations dominate the memory.
  torch::nn::Sequential blocks[8];
  for (auto& b : blocks) b = torch::nn::Sequential(torch::nn::Linear(1024, 1024), torch::nn::GELU(), torch::nn::Linear(1024, 1024), torch::nn::GELU());
  auto x = torch::randn({256, 1024}, torch::requires_grad());
  int64_t activation_bytes = 0;
  for (auto _ : state) {
    const int64_t before = heap_in_use();
    auto h = x;
    for (auto& b : blocks) h = checkpointed ? checkpointed_forward(b, h) : b->forward(h);
    activation_bytes = heap_in_use() - before;  // what the graph holds between forward and backward
    h.sum().backward();
    x.mutable_grad().reset();
  }
  state.counters["activation_bytes"] = static_cast<double>(activation_bytes);
}

void gelu(benchmark::State& state, bool scripted) {
  // The tanh approximation written as separate point-wise ops, as in Migacz's example.
  static auto module = torch::jit::compile(R"JIT(
def gelu(x: Tensor) -> Tensor:
    return x * 0.5 * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
)JIT");
  auto x = torch::randn({1 << 22});
  auto eager = [](const torch::Tensor& v) { return v * 0.5 * (1.0 + torch::tanh(0.7978845608 * (v + 0.044715 * v * v * v))); };
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto y = scripted ? module->run_method("gelu", x).toTensor() : eager(x);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * x.numel());
}

void conv_memory_format(benchmark::State& state, bool channels_last) {
  const auto device = claim_device();
  const int64_t batch = device.is_cuda() ? 256 : 64;
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1).bias(false));
  conv->to(device);
  auto x = torch::randn({batch, 32, 28, 28}, device);
  if (channels_last) {
    x = x.contiguous(at::MemoryFormat::ChannelsLast);
    conv->weight.set_data(conv->weight.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    benchmark::DoNotOptimize(conv->forward(x).data_ptr());
    finish(device);
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(device.str());
}

void matmul(benchmark::State& state, bool bf16) {
  const auto device = claim_device();
  const int64_t n = device.is_cuda() ? 4096 : 1024, m = device.is_cuda() ? 4096 : 512;
  auto a = torch::randn({m, n}, device), b = torch::randn({n, n}, device);
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    AutocastScope scope(device.type(), bf16, torch::kBFloat16);
    benchmark::DoNotOptimize(torch::matmul(a, b).data_ptr());
    finish(device);
  }
  // 2*m*n*n floating-point operations per product; a rate, which Google Benchmark prints as "GFLOP=.../s".
  state.counters["GFLOP"] = benchmark::Counter(2.0 * m * n * n * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(device.str());
}

void conv(benchmark::State& state, bool bf16) {
  const auto device = claim_device();
  const int64_t batch = device.is_cuda() ? 256 : 64;
  auto layer = torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3).padding(1));
  layer->to(device);
  auto x = torch::randn({batch, 32, 28, 28}, device);
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    AutocastScope scope(device.type(), bf16, torch::kBFloat16);
    benchmark::DoNotOptimize(layer->forward(x).data_ptr());
    finish(device);
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(device.str());
}

void loader(benchmark::State& state, int64_t workers) {
  torch::manual_seed(0);
  auto source = std::make_shared<ImageSource>(torch::randint(0, 256, {8192, 1, 28, 28}, torch::kUInt8),
                                              torch::randint(0, 10, {8192}, torch::kLong), 0.286, 0.353);
  LoaderOptions options;
  options.batch_size = 64;
  options.num_workers = workers;
  options.prefetch = 4;
  DataLoader data(source, options);
  // Each batch is followed by a fixed amount of "training" so that loading can overlap with it.
  auto a = torch::randn({256, 256});
  int64_t epoch = 0;
  for (auto _ : state) {
    data.start_epoch(epoch++);
    while (auto batch = data.next()) {
      benchmark::DoNotOptimize(batch->input.data_ptr());
      benchmark::DoNotOptimize(torch::matmul(a, a).data_ptr());
    }
  }
  state.SetItemsProcessed(state.iterations() * 8192);
}

void anomaly(benchmark::State& state, bool on) {
  MlpStep s;
  for (auto _ : state) {
    std::optional<torch::autograd::DetectAnomalyGuard> guard;
    if (on) guard.emplace();
    benchmark::DoNotOptimize(s.step());
  }
  state.SetItemsProcessed(state.iterations() * 64);
}

void sync(benchmark::State& state, bool per_step) {
  MlpStep s;
  auto total = torch::zeros({});
  double sum = 0;
  for (auto _ : state) {
    auto loss = s.step();
    if (per_step) sum += loss.item<double>();  // a host sync every step
    else total += loss;                        // stays on the device; read once at the end
  }
  benchmark::DoNotOptimize(sum + total.item<double>());
  state.SetItemsProcessed(state.iterations() * 64);
}

void clip(benchmark::State& state, bool on) {
  MlpStep s;
  for (auto _ : state) benchmark::DoNotOptimize(s.step(true, on ? 1.0 : 0.0));
  state.SetItemsProcessed(state.iterations() * 64);
}

// The engine's own optimizer step (suite/training_optimizer.h) in each implementation.
void adamw(benchmark::State& state, const std::string& impl) {
  const auto device = claim_device();
  SegmentedModel model = make_conv_net(10);
  model->to(device);
  std::vector<torch::Tensor> params = model->parameters();
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
  TrainingOptimizer optimizer(params, {"adamw", impl, 1e-3, 0, 1e-4});
  for (auto _ : state) {
    optimizer.step();
    finish(device);
  }
  state.counters["parameters"] = static_cast<double>(model->parameter_count());
  state.SetLabel(device.str());
}

void register_all() {
  auto add = [](const std::string& name, auto&& fn) { return benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(benchmark::kMicrosecond); };
  add("zero_grad/zero_fill", [](benchmark::State& s) { zero_grad(s, false); });
  add("zero_grad/set_to_none", [](benchmark::State& s) { zero_grad(s, true); });
  add("wrap_memory/copy", [](benchmark::State& s) { wrap_memory(s, false); });
  add("wrap_memory/from_blob", [](benchmark::State& s) { wrap_memory(s, true); });
  add("h2d_copy/pageable_blocking", [](benchmark::State& s) { h2d_copy(s, false); });
  add("h2d_copy/pinned_non_blocking", [](benchmark::State& s) { h2d_copy(s, true); });
  add("cudnn_conv/benchmark_off", [](benchmark::State& s) { cudnn_conv(s, false); });
  add("cudnn_conv/benchmark_on", [](benchmark::State& s) { cudnn_conv(s, true); });
  add("conv_bn/with_bias", [](benchmark::State& s) { conv_bn(s, true); });
  add("conv_bn/no_bias", [](benchmark::State& s) { conv_bn(s, false); });
  add("eval/with_autograd", [](benchmark::State& s) { eval(s, false); });
  add("eval/no_grad", [](benchmark::State& s) { eval(s, true); });
  add("checkpoint/plain", [](benchmark::State& s) { checkpoint(s, false); });
  add("checkpoint/checkpointed", [](benchmark::State& s) { checkpoint(s, true); });
  add("gelu/eager_composite", [](benchmark::State& s) { gelu(s, false); });
  add("gelu/torchscript", [](benchmark::State& s) { gelu(s, true); });
  add("conv_memory_format/contiguous", [](benchmark::State& s) { conv_memory_format(s, false); });
  add("conv_memory_format/channels_last", [](benchmark::State& s) { conv_memory_format(s, true); });
  add("matmul/fp32", [](benchmark::State& s) { matmul(s, false); });
  add("matmul/bf16_autocast", [](benchmark::State& s) { matmul(s, true); });
  add("conv/fp32", [](benchmark::State& s) { conv(s, false); });
  add("conv/bf16_autocast", [](benchmark::State& s) { conv(s, true); });
  add("loader/workers_0", [](benchmark::State& s) { loader(s, 0); });
  add("loader/workers_2", [](benchmark::State& s) { loader(s, 2); });
  add("anomaly/off", [](benchmark::State& s) { anomaly(s, false); });
  add("anomaly/on", [](benchmark::State& s) { anomaly(s, true); });
  add("sync/per_step_item", [](benchmark::State& s) { sync(s, true); });
  add("sync/deferred", [](benchmark::State& s) { sync(s, false); });
  add("clip/off", [](benchmark::State& s) { clip(s, false); });
  add("clip/on", [](benchmark::State& s) { clip(s, true); });
  add("adamw/per_parameter", [](benchmark::State& s) { adamw(s, "loop"); });
  add("adamw/foreach", [](benchmark::State& s) { adamw(s, "foreach"); });
  add("adamw/fused", [](benchmark::State& s) { adamw(s, "fused"); });
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
