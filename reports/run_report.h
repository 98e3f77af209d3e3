// RunReport: the JSON record of one training run (`dyno train --out run.json`): the complete
// resolved config (loadable again with --config), the environment, the outcome, a summary
// (throughput, time to target, final metric, peak memory), curves, per-phase times, the
// bottleneck verdict and, for a profiled run, the profile.
// schema_version is "MAJOR.MINOR"; readers accept any minor of a major they know.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyno/reports/bottleneck_verdict.h"
#include "dyno/reports/outcome.h"
#include "dyno/reports/phase_time.h"
#include "dyno/reports/profile_summary.h"

namespace dyno {

inline constexpr int kReportSchemaMajor = 1;
// 1.1: profile, verdict; 1.2: summary.host_huge_page_bytes; 1.3: tune reports only
// (docs/report-schema.md: the best's estimate, a trial's figures its own process's)
inline constexpr int kReportSchemaMinor = 6;


struct Environment {
  std::string dyno_revision;
  std::string libtorch_version;
  std::string cuda_version;   // empty when LibTorch was built without CUDA
  std::string cudnn_version;  // empty when unavailable
  std::string device;         // "cpu" or "cuda"
  std::string device_name;
  std::string cpu_model;
  int64_t cores = 0;
  int64_t memory_bytes = 0;  // physical memory
  int64_t threads = 0;  // intra-op threads in use
  std::string host;
};

struct CurvePoint {
  int64_t step = 0;
  double epoch = 0;
  double time_s = 0;
  double value = 0;
};

struct Summary {
  std::string throughput_unit = "samples";  // samples or tokens
  double samples_per_second = 0;            // median over measurement windows
  double samples_per_second_spread = 0;     // relative interquartile range of the windows
  std::optional<double> time_to_target_s;   // wall time from start; null when not reached
  std::string metric_name;
  double final_metric = 0;
  bool higher_is_better = true;
  double target = 0;
  bool target_reached = false;
  int64_t peak_memory_bytes = 0;
  std::string peak_memory_kind;  // cuda_allocator or resident_set
  int64_t host_huge_page_bytes = 0;  // the process's host memory in transparent huge pages at the end
  int64_t steps = 0;
  int64_t skipped_steps = 0;  // amp=fp16: steps whose update the gradient scaler skipped (inf/NaN gradients)
  double epochs = 0;
  double wall_time_s = 0;
  std::string stop_reason;
};

struct RankFigures {
  int64_t rank = 0;
  double samples_per_second = 0;
  double wall_time_s = 0;
};

struct RunReport {
  std::string schema_version = std::to_string(kReportSchemaMajor) + "." + std::to_string(kReportSchemaMinor);
  Outcome outcome = Outcome::Ok;
  std::string outcome_reason;
  nlohmann::json config = nlohmann::json::object();
  Environment environment;
  Summary summary;
  std::vector<double> throughput_windows;  // samples/s per measurement window (repetitions)
  std::vector<CurvePoint> loss_curve;
  std::vector<CurvePoint> metric_curve;
  std::vector<CurvePoint> lr_curve;
  std::map<std::string, PhaseTime> phases;
  int64_t world_size = 1;
  std::vector<RankFigures> ranks;
  std::optional<ProfileSummary> profile;  // `dyno train --profile`
  std::optional<BottleneckVerdict> verdict;  // what limits the run (absent in reports of older dyno)
};

nlohmann::json to_json(const RunReport& report);
// Throws UserError naming the file's problem (unknown major version, missing field).
// `where` names the report in errors ("'run.json'").
RunReport report_from_json(const nlohmann::json& json, const std::string& where = "run report");
void write_report(const std::string& path, const RunReport& report);
RunReport read_report(const std::string& path);
// Parses "MAJOR.MINOR"; throws UserError for an unknown major.
void check_schema_version(const nlohmann::json& json, const std::string& what);

}  // namespace dyno
