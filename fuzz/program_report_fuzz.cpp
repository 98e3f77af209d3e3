// An external program's report (dyno tune --command reads $DYNO_REPORT while the program runs).
#include "fuzz_reader.h"
#include "dyno/trials/program_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dyno::fuzz_reader([&] {
    const std::string text = dyno::fuzz_text(data, size);
    const dyno::ProgramReport first = dyno::parse_program_report(text.substr(0, text.size() / 2), "report.jsonl", 1.0);
    dyno::parse_program_report(text, "report.jsonl", 2.0, &first);
  });
}
