// The workloads a binary knows: every DYNO_WORKLOAD in it, plus "torchscript" (a user's scripted
// model on a tensor file, named by the config). Registration happens at static initialisation
// into a function-local table, so the order of files does not matter; the factories run on first
// use, in main, so a duplicate or unnamed workload is a UserError (exit 2), not a crash before main.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <c10/util/Exception.h>

#include "dyno/reports/user_error.h"
#include "dyno/workloads/workload.h"

namespace dyno {

struct RunConfig;

using WorkloadFactory = std::function<Workload()>;

// Returns true, so that DYNO_WORKLOAD can initialise a namespace-scope constant with it.
bool register_workload(WorkloadFactory factory, const char* source_file) noexcept;

// Throws UserError, naming `source_file`, for a workload no binary may register: no name, the
// reserved name, no model or data, a metric the engine does not evaluate (or the wrong way up), a
// target out of the metric's range, or a recipe field out of range.
void check_registrable(const Workload& workload, const std::string& source_file);

// The registered workloads in name order. Throws UserError naming both source files of a
// duplicate name, or the file of a workload without a name or a model.
const std::vector<Workload>& all_workloads();

// The workload a command runs when none is named: fashion-mlp where it is registered, else the
// binary's only workload (a user's DYNO_WORKLOAD), else "" (refused, naming the known ones).
std::string default_workload();

// A registered workload; throws UserError listing the known names.
const Workload& workload_or_throw(const std::string& name);

// A tensor's shape as text: "[64, 784]".
std::string shape_text(const torch::Tensor& tensor);

// An exception's message in one line: a c10::Error's first line (no backtrace), another's last
// non-empty one (a TorchScript traceback ends with the error).
std::string exception_text(const std::exception& e);

// Runs a workload's own code (its factory, load_data, build_model), named by `what` ("'my-model':
// load_data(\"tiny\")"): what it throws other than a UserError becomes one naming the call (exit
// 2), not an internal error of dyno's. Running out of memory stays what it is: the run's outcome.
template <typename Call>
auto in_workload_code(const std::string& what, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const UserError&) {
    throw;
  } catch (const c10::OutOfMemoryError&) {
    throw;  // a run's outcome (oom), not a mistake in the workload
  } catch (const std::exception& e) {
    throw UserError("workload", what + " threw: " + exception_text(e));
  }
}

// The workload a config runs: the registered one it names, or for workload=torchscript the model
// in model_file trained on data_file (loaded to check it). Throws UserError for either.
Workload workload_for(const RunConfig& config);

}  // namespace dyno

#define DYNO_DETAIL_CONCAT2(a, b) a##b
#define DYNO_DETAIL_CONCAT(a, b) DYNO_DETAIL_CONCAT2(a, b)

// DYNO_WORKLOAD(factory): registers a workload; factory is a function (or lambda) returning a
// dyno::Workload. At namespace scope, any number per file. (Variadic: a lambda's body may hold
// commas outside parentheses, as in torch::randn({64, 4}).)
#define DYNO_WORKLOAD(...)                                                                          \
  [[maybe_unused]] static const bool DYNO_DETAIL_CONCAT(dyno_workload_registered_, __COUNTER__) = \
      ::dyno::register_workload(__VA_ARGS__, __FILE__)
