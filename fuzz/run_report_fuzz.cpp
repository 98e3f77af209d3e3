// A run report (dyno report, compare, check read what dyno train --out wrote).
#include "fuzz_reader.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/reports/figure_set.h"
#include "dyno/reports/run_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    const nlohmann::json json = dyno::parse_json_text(dyno::fuzz_text(data, size), "run.json", "report");
    dyno::figure_set_from_json(json, "'run.json'");
    dyno::to_json(dyno::report_from_json(json, "'run.json'")).dump();
  });
}
