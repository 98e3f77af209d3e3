// A --axis string (dyno tune): "knob=v1,v2" | "knob=lo:hi:xF" | "knob=lo:hi:+S", over the default space.
#include "fuzz_reader.h"
#include "dyno/tuner/search_space.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    dyno::SearchSpace space = dyno::SearchSpace::default_for("cpu", true, 2, 2);
    space.override_axis(dyno::fuzz_text(data, size));
    space.to_json().dump();
    space.default_point().dump();
    if (space.grid_size() <= 4096) space.grid();
  });
}
