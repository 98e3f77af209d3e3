// A run config file (dyno train --config FILE; the config inside a check baseline).
#include "fuzz_reader.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/reports/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    const dyno::RunConfig config = dyno::config_from_json(dyno::parse_json_text(dyno::fuzz_text(data, size), "config.json", "config"));
    dyno::validate_combination(config);
    dyno::to_json(config).dump();
  });
}
