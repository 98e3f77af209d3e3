// Engine: runs one workload under one RunConfig, completely (data, model, optimizer, schedule,
// evaluation, stop rules, save/resume) and measures it: per-phase times, steady-state throughput
// per measurement window, peak memory, loss/metric curves and time to target quality.
// A run that diverges or runs out of memory is a result (RunReport::outcome), not an exception;
// invalid configurations throw UserError before anything runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"

namespace dyno {

struct Workload;

// `dyno train --profile`: LibTorch's profiler over `steps` steps right after warm-up, which are
// then not part of the measured figures (throughput windows and phase times start after them).
struct ProfileOptions {
  std::string trace_path;  // Chrome trace JSON; empty: not profiled
  int64_t steps = 5;
};

struct EngineOptions {
  bool progress = false;  // a progress line (steps, loss, ETA) on stderr
  ProfileOptions profile;
};

// Fills the `auto` / 0 fields (optimizer, schedule, lr, epochs) from the workload's recipe and
// validates the combination; the result is what the report records and --config reloads.
RunConfig resolve_config(const RunConfig& config, const Workload& workload);

class Engine {
 public:
  explicit Engine(EngineOptions options = {}) : options_(options) {}
  RunReport run(const RunConfig& config);

 private:
  EngineOptions options_;
};

}  // namespace dyno
