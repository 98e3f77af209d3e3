// A search space file (dyno tune --space FILE), then what the tuner asks of it.
#include "fuzz_reader.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/tuner/search_space.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    dyno::SearchSpace space = dyno::SearchSpace::from_json(dyno::parse_json_text(dyno::fuzz_text(data, size), "space.json", "space"));
    space.default_point().dump();
    space.exact_values();
    space.to_json().dump();
    if (space.grid_size() <= 4096) space.grid();
    space.take_convergence_axes();
  });
}
