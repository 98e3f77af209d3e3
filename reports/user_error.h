// UserError: an error caused by what the user gave (a config value, a file, a flag), as opposed
// to a bug. Its message always says where ("[config]", "[data]", ...), which value, and what
// would be valid; the CLI prints it without a stack trace and exits with status 2.
#pragma once

#include <stdexcept>
#include <string>

namespace dyno {

class UserError : public std::runtime_error {
 public:
  UserError(const std::string& where, const std::string& message)
      : std::runtime_error("[" + where + "] " + message) {}
};

// A write that failed for want of space (ENOSPC, EDQUOT, or EFBIG: a full disk, a quota, a file
// size limit). Nothing was left half-written; the CLI exits with kExitOutOfSpace so that whoever
// ran it (the tuner, for a trial's process) can tell it from bad input: retry once space is back.
class OutOfSpace : public UserError {
 public:
  using UserError::UserError;
};
constexpr int kExitOutOfSpace = 75;  // EX_TEMPFAIL

}  // namespace dyno
