// Engine: runs one workload under one RunConfig, completely (data, model, optimizer, schedule,
// evaluation, stop rules, save/resume) and measures it: per-phase times, steady-state throughput
// per measurement window, peak memory, loss/metric curves and time to target quality.
// A run that diverges or runs out of memory is a result (RunReport::outcome), not an exception;
// invalid configurations throw UserError before anything runs.
#pragma once

#include <functional>
#include <string>

#include "reports/run_config.h"
#include "reports/run_report.h"

namespace dyno {

struct Workload;

struct EngineOptions {
  bool progress = false;  // a progress line (steps, loss, ETA) on stderr
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
