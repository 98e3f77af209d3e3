// BottleneckVerdict: what limits a run, with its evidence. Decided from the measured steps' phase
// times and, when the run was profiled, the profile (reports/profile_summary.h), in this order
// (the shares are the constants below):
//   input-bound          the training thread waits for data (kInputBoundShare of the step)
//   communication-bound  the all-reduce outside backward (ddp.overlap=false), or collectives in
//                        flight while the training thread is in no op (communication computation
//                        did not hide; CUDA: NCCL kernels no compute kernel overlaps), reach
//                        kCommunicationBoundShare of the step
//   host-overhead-bound  CPU: time outside ATen ops (less exposed communication) plus the fixed
//                        cost of every outermost op call (each is a dispatch; the cost is measured
//                        on the same machine), reach kHostOverheadBoundShare of a profiled step;
//                        CUDA: the device is idle that share of a profiled step or more
//   compute-bound        matrix multiplies and convolutions take kComputeBoundGemmShare of the op
//                        (CPU) or kernel (CUDA) time, however near the peak they run: the step
//                        waits for them; what would help follows from their own rate (their FLOPs
//                        over their own time) against the peak (at kNearPeakShare or more, fewer
//                        FLOPs or a narrower precision; below, larger GEMMs)
//   memory-bound         otherwise: elementwise, copy and reduction ops dominate
//   undetermined         not input- or communication-bound, and no profile to tell the rest (or
//                        no step measured or profiled at all)
// Without measured steps (a run that ended within its warm-up), the input and communication
// shares are the profiled steps'.
// A profiled verdict also states the achieved FLOP/s of the matrix multiplies and convolutions
// over the profiled steps against the GEMM peak measured in the run's precision.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "dyno/reports/phase_time.h"
#include "dyno/reports/profile_summary.h"

namespace dyno {

inline constexpr double kInputBoundShare = 0.30;
inline constexpr double kCommunicationBoundShare = 0.30;
inline constexpr double kHostOverheadBoundShare = 0.50;
inline constexpr double kComputeBoundGemmShare = 0.50;
inline constexpr double kNearPeakShare = 0.50;  // of the GEMM peak measured on this machine, in the run's precision

struct BottleneckVerdict {
  std::string kind;      // input, communication, host_overhead, compute, memory, undetermined
  std::string headline;  // "compute-bound, 38% of the measured bfloat16 GEMM peak"
  std::string sentence;  // the headline with its evidence and what would help, one sentence
  nlohmann::json evidence = nlohmann::json::object();  // the figures the decision read
};

// The run a verdict is for, as far as its advice goes: it names only knob values the run could
// still take (the knob table and the engine refuse the others).
struct VerdictScope {
  std::string device = "cpu";  // cpu or cuda
  bool channels_last = true;   // still to try: a convolutional workload at channels_last=false
  bool amp = true;             // still to try: amp=off
  bool comm_hook = true;       // ddp.comm_hook applies: ddp.overlap=true on gloo or nccl, and none set yet
};

BottleneckVerdict decide_bottleneck(const std::map<std::string, PhaseTime>& phases, const std::optional<ProfileSummary>& profile,
                                    const VerdictScope& run);

nlohmann::json to_json(const BottleneckVerdict& verdict);
BottleneckVerdict verdict_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace dyno
