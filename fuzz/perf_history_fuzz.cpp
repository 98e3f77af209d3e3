// A performance history (dyno report history FILE), then its page.
#include "fuzz_reader.h"
#include "dyno/reports/perf_history.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] { dyno::history_html(dyno::parse_history(dyno::fuzz_text(data, size), "history.jsonl")); });
}
