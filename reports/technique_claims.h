// The claims of ../shared/TECHNIQUES.md, each tied to the pair of technique benchmarks that
// measures it (baseline variant vs technique variant), so that `dyno report techniques` and the
// HTML report can print claimed vs measured speed-up side by side.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct TechniqueClaim {
  int number = 0;
  std::string technique;
  std::string claim;
  std::string baseline_benchmark;   // e.g. "zero_grad/zero_fill"
  std::string technique_benchmark;  // e.g. "zero_grad/set_to_none"
};

const std::vector<TechniqueClaim>& technique_claims();

struct TechniqueRow {
  TechniqueClaim claim;
  double baseline_time = 0;   // median real time over repetitions, in the baseline benchmark's unit
  double technique_time = 0;
  std::string unit;
  double speedup = 0;         // baseline / technique; 0 when not measured
  std::string status;         // measured | skipped: <reason> | missing
};

// Matches a Google Benchmark JSON result (from dyno_bench_techniques) against the claims.
// `where` names the result in errors (its file).
std::vector<TechniqueRow> technique_rows(const nlohmann::json& google_benchmark_json, const std::string& where = "the benchmark result");
std::string technique_table_text(const std::vector<TechniqueRow>& rows);

}  // namespace dyno
