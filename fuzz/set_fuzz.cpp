// A --set knob=value string (dyno train, tune, check).
#include "fuzz_reader.h"
#include "dyno/reports/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    dyno::RunConfig config;
    dyno::apply_setting(config, dyno::fuzz_text(data, size));
    dyno::validate_combination(config);
    dyno::to_json(config).dump();
  });
}
