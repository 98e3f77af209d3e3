// What every fuzz target checks: one input through one reader ends in a result or a UserError.
// Any other exception escapes LLVMFuzzerTestOneInput, which libFuzzer reports as a crash with the
// input that caused it; so do the sanitizers' reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dyno/reports/user_error.h"

namespace dyno {

inline std::string fuzz_text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

template <class Read>
int fuzz_reader(Read&& read) {
  try {
    read();
  } catch (const UserError&) {
  }
  return 0;
}

}  // namespace dyno
