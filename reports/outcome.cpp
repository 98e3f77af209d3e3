#include "dyno/reports/outcome.h"

namespace dyno {

namespace {

constexpr Outcome kAll[] = {Outcome::Ok,      Outcome::Diverged,      Outcome::Oom,      Outcome::Crashed,       Outcome::Aborted,
                            Outcome::Timeout, Outcome::InvalidConfig, Outcome::Rejected, Outcome::InvalidReport, Outcome::Interrupted};

}  // namespace

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Diverged: return "diverged";
    case Outcome::Oom: return "oom";
    case Outcome::Crashed: return "crashed";
    case Outcome::Aborted: return "aborted";
    case Outcome::Timeout: return "timeout";
    case Outcome::InvalidConfig: return "invalid_config";
    case Outcome::Rejected: return "rejected";
    case Outcome::InvalidReport: return "invalid_report";
    case Outcome::Interrupted: return "interrupted";
  }
  return "?";
}

std::optional<Outcome> outcome_from_string(const std::string& name) {
  for (Outcome o : kAll)
    if (name == to_string(o)) return o;
  return std::nullopt;
}

std::string outcome_names() {
  std::string names;
  for (Outcome o : kAll) names += std::string(names.empty() ? "" : ", ") + to_string(o);
  return names;
}

}  // namespace dyno
