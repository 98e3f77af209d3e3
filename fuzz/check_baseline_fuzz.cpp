// A check baseline (dyno check --baseline FILE|DIR) and a check result (dyno report history --append).
#include "fuzz_reader.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/reports/check_baseline.h"
#include "dyno/reports/figure_set.h"
#include "dyno/reports/machine_fingerprint.h"
#include "dyno/reports/perf_history.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json json = nlohmann::json::parse(dyno::fuzz_text(data, size), nullptr, false);
  if (json.is_discarded()) return 0;  // read_json_file's parse error: run_config_fuzz covers it
  dyno::fuzz_reader([&] {
    const dyno::CheckBaseline baseline = dyno::check_baseline_from_json(json, "baseline.json");
    const auto fingerprint = dyno::MachineFingerprint::of(baseline.environment);
    fingerprint.id();
    fingerprint.differences(dyno::MachineFingerprint::of({{"cores", 2}, {"device", "cpu"}}));
  });
  dyno::fuzz_reader([&] { dyno::figure_set_from_json(json, "'baseline.json'"); });
  dyno::fuzz_reader([&] { dyno::to_json(dyno::history_entry_from_check(json, "HEAD", "")).dump(); });
  return 0;
}
