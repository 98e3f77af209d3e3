#include "dyno/suite/phase_range.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace dyno {
namespace {

// "dyno::forward" for "forward": the trace's names, made once per phase and kept for the process.
const char* trace_name(const char* phase) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, added] = names.try_emplace(phase, std::string("dyno::") + phase);
  return it->second.c_str();
}

}  // namespace

PhaseRange::PhaseRange(const char* phase, bool profiled) : nvtx_(phase) {
  if (!profiled) return;
  record_.emplace(at::RecordScope::USER_SCOPE);
  if (record_->isActive()) record_->before(trace_name(phase), c10::ArrayRef<const c10::IValue>{});
}

}  // namespace dyno
