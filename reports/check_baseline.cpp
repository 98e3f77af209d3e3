#include "dyno/reports/check_baseline.h"


#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"

namespace dyno {

CheckBaseline read_check_baseline(const std::string& path) { return check_baseline_from_json(read_json_file(path, "check"), path); }

CheckBaseline check_baseline_from_json(const nlohmann::json& json, const std::string& path) {
  const std::string where = "'" + path + "'";
  check_schema_version(json, where);
  const JsonFields j(json, "check", where);
  if (j.text("kind") != "baseline" || !j.has("config"))
    throw UserError("check", where + " is not a dyno baseline (make one with dyno check --record FILE)");
  CheckBaseline b;
  b.config = j.required("config");
  config_from_json(b.config);  // a baseline whose config this dyno cannot run is refused here, naming the knob
  b.figure = j.text("figure", "median");  // baselines from before the field held each run's median
  b.runs = j.throughputs("runs", 2);  // two at least: a comparison needs the spread between processes
  b.environment = j.object("environment").json();
  // The machine's fields as a run report writes them: a hand edit of another type would make any
  // machine "another machine" (not comparable) instead of being the file's error.
  const JsonFields environment(b.environment, "check", where + " environment");
  for (const char* key : {"cores", "threads", "memory_bytes"})
    if (environment.has(key) && !b.environment[key].is_null() && !b.environment[key].is_number_integer()) environment.fail(key, "a whole number");
  for (const char* key : {"cpu_model", "device", "device_name", "libtorch_version", "cuda_version", "cudnn_version"})
    if (environment.has(key) && !b.environment[key].is_null() && !b.environment[key].is_string()) environment.fail(key, "text");
  return b;
}

}  // namespace dyno
