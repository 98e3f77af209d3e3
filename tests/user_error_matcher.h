// error_of(f): the message of the UserError that f throws, or "(no error)"; lets tests assert
// the exact text a user sees.
#pragma once

#include <functional>
#include <string>

#include "dyno/reports/user_error.h"

namespace dyno::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace dyno::testing
