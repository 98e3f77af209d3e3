#include "dyno/suite/step_profiler.h"

#include <unistd.h>

#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

constexpr size_t kTableRows = 30;

ProfilerConfig profiler_config() {
  return ProfilerConfig(ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/false, /*with_stack=*/false,
                        /*with_flops=*/true);
}

std::set<ActivityType> activities(const c10::Device& device) {
  if (device.is_cuda()) return {ActivityType::CPU, ActivityType::CUDA};
  return {ActivityType::CPU};
}

// Matrix multiplies and convolutions: the ops a GEMM peak is the measure of. (LibTorch counts no
// FLOPs for conv1d, conv3d and the transposed convolutions: their time is counted here, their
// FLOPs, forward and backward, are not.)
bool is_gemm(const std::string& name) {
  static const std::set<std::string> names = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::conv1d", "aten::conv2d",
                                              "aten::conv3d", "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
                                              "aten::convolution_backward"};
  return names.count(name) > 0;
}

// c10d's and Gloo's all-reduce events, NCCL's, dyno's shared-memory one, and dyno's all_reduce
// phase (ddp.overlap=false), which waits for them.
bool is_collective(const std::string& name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("allreduce") != std::string::npos || lower.find("all_reduce") != std::string::npos;
}

// Device kernels of matrix multiplies and convolutions, by the names cuBLAS, cuDNN and CUTLASS give them.
bool is_gemm_kernel(const std::string& name) {
  for (const char* part : {"gemm", "conv", "cutlass", "xmma", "fprop", "dgrad", "wgrad", "nvjet", "cublas"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

std::string shapes_text(const profiler::KinetoEvent& e) {
  if (!e.hasShapes()) return "";
  std::string out = "[";
  for (size_t i = 0; i < e.shapes().size(); ++i) {
    out += i ? ", [" : "[";
    const auto& shape = e.shapes()[i];
    for (size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
    out += "]";
  }
  return out + "]";
}

// Kineto counts the FLOPs of mm, addmm, bmm, baddbmm and conv2d. A conv2d's backward computes the
// input's and the weight's gradients, each as many FLOPs as the forward: 2 x 2 x (grad_output
// elements) x (C_in / groups x kernel elements), from its input shapes [grad_output, input,
// weight, ...]. The backward of a convolution whose forward LibTorch does not count (1-D, 3-D:
// grad_output not 4-D; transposed: the weight's first dimension is C_in, not grad_output's
// channels) is not counted either, so that a model's FLOPs are counted alike both ways.
double flops_of(const profiler::KinetoEvent& e, const std::string& name) {
  if (name != "aten::convolution_backward") return static_cast<double>(e.flops());
  if (!e.hasShapes() || e.shapes().size() < 3) return 0;
  const auto& grad_output = e.shapes()[0];
  const auto& weight = e.shapes()[2];
  if (grad_output.size() != 4 || weight.size() != 4 || weight[0] != grad_output[1]) return 0;
  double outputs = 1, per_output = 1;
  for (auto d : grad_output) outputs *= static_cast<double>(d);
  for (size_t i = 1; i < weight.size(); ++i) per_output *= static_cast<double>(weight[i]);
  return 2.0 * 2.0 * outputs * per_output;
}

// An event's end (KinetoEvent::endNs is newer than LibTorch 2.4).
uint64_t end_ns(const profiler::KinetoEvent& e) { return e.startNs() + e.durationNs(); }

using Intervals = std::vector<std::pair<uint64_t, uint64_t>>;

// Sorted, disjoint intervals covering the same time.
Intervals merged(Intervals spans) {
  std::sort(spans.begin(), spans.end());
  Intervals out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
    else out.push_back(s);
  }
  return out;
}

// The time in `a` that is not in `b` (both merged), in seconds.
double seconds_outside(const Intervals& a, const Intervals& b) {
  double total = 0;
  size_t j = 0;
  for (const auto& [start, end] : a) {
    uint64_t covered = 0;
    while (j < b.size() && b[j].second <= start) ++j;
    for (size_t k = j; k < b.size() && b[k].first < end; ++k) covered += std::min(end, b[k].second) - std::max(start, b[k].first);
    total += static_cast<double>(end - start - covered) * 1e-9;
  }
  return total;
}

// The parts of `a` inside `b` (both merged).
Intervals inside(const Intervals& a, const Intervals& b) {
  Intervals out;
  for (const auto& [start, end] : a)
    for (const auto& [from, to] : b)
      if (std::max(start, from) < std::min(end, to)) out.emplace_back(std::max(start, from), std::min(end, to));
  return merged(std::move(out));
}

struct Aggregate {
  OpRow row;
  std::map<std::string, std::vector<double>> total_s_by_shapes;
};

void add(std::map<std::string, Aggregate>& table, const std::string& name, double self_s, double total_s, double flops,
         const std::string& shapes) {
  Aggregate& a = table[name];
  a.row.name = name;
  ++a.row.calls;
  a.row.self_s += self_s;
  a.row.total_s += total_s;
  a.row.flops += flops;
  a.total_s_by_shapes[shapes].push_back(total_s);
}

// Each row names the input shapes whose calls take the most time together, as calls x their
// median time: a few calls the scheduler delayed (milliseconds, against microseconds for a small
// op) do not name a cheap layer's shapes.
std::vector<OpRow> rows_of(const std::map<std::string, Aggregate>& table) {
  std::vector<OpRow> rows;
  for (const auto& [name, a] : table) {
    rows.push_back(a.row);
    double most_s = -1;
    for (const auto& [shapes, times] : a.total_s_by_shapes) {
      const double typical_s = static_cast<double>(times.size()) * median(times);
      if (typical_s > most_s) {
        most_s = typical_s;
        rows.back().input_shapes = shapes;
      }
    }
  }
  return top_rows(std::move(rows), kTableRows);
}

// The events' nesting per host thread gives each its self time; only events inside a profiled
// step ("dyno::step") count, so that a log point between two steps is not charged to them.
// Communication is the time a collective is in flight (on any thread: gloo runs its own) while
// the training thread is inside no op: the part of the all-reduce that computation does not hide.
Intervals summarise_host(const std::vector<profiler::KinetoEvent>& events, ProfileSummary& summary) {
  struct Span {
    uint64_t start, end;
    const profiler::KinetoEvent* event;
    std::string name;
  };
  Intervals steps, collectives, busy;
  std::set<uint64_t> training_threads;
  std::unordered_map<uint64_t, std::vector<Span>> by_thread;
  for (const auto& e : events) {
    if (e.deviceType() != c10::DeviceType::CPU || end_ns(e) <= e.startNs()) continue;
    std::string name = e.name();
    // Gloo records its collectives as asynchronous events on its own threads.
    if (is_collective(name)) collectives.emplace_back(e.startNs(), end_ns(e));
    if (e.isAsync()) continue;
    if (name == "dyno::step") {
      steps.emplace_back(e.startNs(), end_ns(e));
      training_threads.insert(e.startThreadId());
    }
    by_thread[e.startThreadId()].push_back({e.startNs(), end_ns(e), &e, std::move(name)});
  }
  auto in_a_step = [&steps](const Span& s) {
    for (const auto& [begin, end] : steps)
      if (s.start >= begin && s.end <= end) return true;
    return false;
  };
  std::map<std::string, Aggregate> table;
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    struct Open {
      size_t index;
      bool in_op, in_gemm, in_collective;
    };
    std::vector<Open> stack;
    std::vector<double> self_s(spans.size());
    // An op inside one of its own name (autocast dispatches aten::conv2d again, in the narrower
    // type, under the first) is one call: its row is its parent's.
    std::vector<std::optional<size_t>> repeat_of(spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
      const Span& s = spans[i];
      const double duration_s = static_cast<double>(s.end - s.start) * 1e-9;
      self_s[i] = duration_s;
      // An event that ends after the open one is not nested in it (a partial overlap closes it).
      while (!stack.empty() && spans[stack.back().index].end < s.end) stack.pop_back();
      const Open* parent = stack.empty() ? nullptr : &stack.back();
      if (parent) self_s[parent->index] -= duration_s;
      if (parent && spans[parent->index].name == s.name) repeat_of[i] = parent->index;
      const bool op = s.name.rfind("aten::", 0) == 0, gemm = is_gemm(s.name), collective = is_collective(s.name);
      const bool counted = in_a_step(s);
      // The outermost ops, and none inside a collective: that time is communication_s's (counted once).
      if (counted && op && !(parent && (parent->in_op || parent->in_collective))) {
        ++summary.op_calls;
        summary.ops_s += duration_s;
        if (training_threads.count(thread)) busy.emplace_back(s.start, s.end);
      }
      if (counted && gemm && !(parent && parent->in_gemm)) {
        summary.gemm_s += duration_s;
        const double flops = flops_of(*s.event, s.name);
        summary.gemm_flops += flops;
        if (s.name.rfind("aten::conv", 0) == 0) summary.convolution_flops += flops;
      }
      stack.push_back({i, (parent && parent->in_op) || op, (parent && parent->in_gemm) || gemm, (parent && parent->in_collective) || collective});
    }
    for (size_t i = spans.size(); i-- > 0;)  // innermost first, so a chain of repeats folds into its outermost op
      if (repeat_of[i]) self_s[*repeat_of[i]] += self_s[i];
    for (size_t i = 0; i < spans.size(); ++i)
      if (in_a_step(spans[i]) && !repeat_of[i])
        add(table, spans[i].name, std::max(0.0, self_s[i]), static_cast<double>(spans[i].end - spans[i].start) * 1e-9,
            is_gemm(spans[i].name) ? flops_of(*spans[i].event, spans[i].name) : 0.0, shapes_text(*spans[i].event));
  }
  summary.data_wait_s = table.count("dyno::data_wait") ? table["dyno::data_wait"].row.self_s : 0.0;
  summary.ops = rows_of(table);
  summary.communication_s = seconds_outside(inside(merged(collectives), merged(steps)), merged(busy));
  return merged(steps);
}

// Device kernels (CUDA) inside the profiled steps (each ends with a synchronisation, so its kernels
// run within it): their time by name, the union of their intervals (the time the device was busy),
// the matrix-multiply and convolution kernels' share, and NCCL's kernels that no compute kernel
// overlaps, which replace the host's figure: on CUDA, backward runs on autograd's device thread
// and NCCL's host events last until the collective is done, so only the device can tell what
// computation hides.
void summarise_device(const std::vector<profiler::KinetoEvent>& events, const Intervals& steps, ProfileSummary& summary) {
  Intervals intervals, collectives, compute;
  std::map<std::string, Aggregate> table;
  auto in_a_step = [&steps](uint64_t start, uint64_t end) {
    for (const auto& [begin, finish] : steps)
      if (start >= begin && end <= finish) return true;
    return false;
  };
  // Work on the device only: the device-side copies of the phase ranges (dyno::step, ...; kineto's
  // GPU user annotations) are CUDA events too, and span the kernels they mark.
  auto device_work = [](const profiler::KinetoEvent& e) {
    const auto type = static_cast<libkineto::ActivityType>(e.activityType());
    return type == libkineto::ActivityType::CONCURRENT_KERNEL || type == libkineto::ActivityType::GPU_MEMCPY ||
           type == libkineto::ActivityType::GPU_MEMSET;
  };
  for (const auto& e : events) {
    if (e.deviceType() != c10::DeviceType::CUDA || !device_work(e) || end_ns(e) <= e.startNs() || !in_a_step(e.startNs(), end_ns(e))) continue;
    const double duration_s = static_cast<double>(end_ns(e) - e.startNs()) * 1e-9;
    std::string name = e.name().substr(0, 160);
    if (is_gemm_kernel(name)) summary.gemm_device_s += duration_s;
    if (name.find("nccl") != std::string::npos) collectives.emplace_back(e.startNs(), end_ns(e));
    else compute.emplace_back(e.startNs(), end_ns(e));
    intervals.emplace_back(e.startNs(), end_ns(e));
    add(table, name, duration_s, duration_s, 0.0, "");
  }
  std::sort(intervals.begin(), intervals.end());
  uint64_t covered_to = 0;
  for (const auto& [start, end] : intervals) {
    const uint64_t from = std::max(start, covered_to);
    if (end > from) summary.device_busy_s += static_cast<double>(end - from) * 1e-9;
    covered_to = std::max(covered_to, end);
  }
  summary.kernels = rows_of(table);
  summary.communication_s = seconds_outside(merged(collectives), merged(compute));
}

}  // namespace

StepProfiler::StepProfiler(ProfileOptions options, c10::Device device) : options_(std::move(options)), device_(device) {
  if (options_.steps < 1)
    throw UserError("profile", "profiled steps: " + std::to_string(options_.steps) + " is not valid; give a number of steps >= 1");
  // Before the run: a trace that cannot be written is bad input, not a failure after training.
  const std::string probe = options_.trace_path + ".probe." + std::to_string(::getpid());
  write_file_atomically(probe, "");
  std::remove(probe.c_str());
  profiler::prepareProfiler(profiler_config(), activities(device_));
}

StepProfiler::~StepProfiler() {
  if (!running_) return;
  try {
    profiler::disableProfiler();
  } catch (...) {  // the run is already failing; its own error is the one to report
  }
}

void StepProfiler::start() {
  profiler::enableProfiler(profiler_config(), activities(device_));
  running_ = true;
}

ProfileSummary StepProfiler::stop(double wall_s, int64_t steps) {
  std::unique_ptr<profiler::ProfilerResult> result = profiler::disableProfiler();
  running_ = false;
  ProfileSummary summary;
  summary.steps = steps;
  summary.wall_s = wall_s;
  summary.trace_path = options_.trace_path;
  // Kineto writes the trace itself; it is then moved into place atomically. A trace that did not
  // come out costs the trace only: the run and its summary stand.
  const std::string written = options_.trace_path + ".kineto." + std::to_string(::getpid());
  result->save(written);
  std::string trace;
  try {
    trace = read_file(written);
  } catch (const UserError&) {
  }
  std::remove(written.c_str());
  if (trace.empty()) {
    std::fprintf(stderr, "[train] warning: LibTorch's profiler wrote no trace for --profile %s; the op table is in the report\n",
                 options_.trace_path.c_str());
    summary.trace_path.clear();
  } else {
    write_file_atomically(options_.trace_path, trace);
  }
  const Intervals steps_run = summarise_host(result->events(), summary);
  if (device_.is_cuda()) summarise_device(result->events(), steps_run, summary);
  return summary;
}

}  // namespace dyno
