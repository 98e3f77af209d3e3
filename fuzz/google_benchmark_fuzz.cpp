// Google Benchmark JSON (dyno compare reads --benchmark_out files).
#include "fuzz_reader.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/reports/figure_set.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    const dyno::FigureSet set = dyno::figure_set_from_json(dyno::parse_json_text(dyno::fuzz_text(data, size), "bench.json", "compare"), "'bench.json'");
    dyno::environment_differences(set.environment, set.environment);
  });
}
