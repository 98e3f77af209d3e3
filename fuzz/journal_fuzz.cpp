// A tuning journal (dyno tune --resume reads journal.jsonl).
#include "fuzz_reader.h"
#include "dyno/tuner/journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    for (const auto& trial : dyno::parse_journal(dyno::fuzz_text(data, size), "journal.jsonl").trials) dyno::to_json(trial).dump();
  });
}
