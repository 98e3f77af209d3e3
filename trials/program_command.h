// ProgramCommand: an external training program run as a trial. Its argument vector is a template
// whose {name} placeholders are replaced by a point's values (any knob of the point, and {seed});
// an optional launcher template (torchrun, srun, `dyno launch`) goes in front of it, with the same
// placeholders. The program also finds the point in its environment: one DYNO_KNOB_<NAME>
// variable per knob (upper case, other characters as '_'), DYNO_POINT (a JSON file of the whole
// point), DYNO_SEED, and where to report (see ProgramReport). Never run through a shell, unless
// the command is one.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

class ProgramCommand {
 public:
  ProgramCommand() = default;
  // Throws UserError when the command is empty or its program is not found (on PATH or as a path).
  ProgramCommand(std::vector<std::string> command, std::vector<std::string> launcher);

  bool empty() const { return command_.empty(); }
  const std::vector<std::string>& command() const { return command_; }
  // Placeholder names in the command (not the launcher): knobs the program is given on its command
  // line, and so applies without having to say so in its report.
  std::set<std::string> command_placeholders() const;
  // Placeholder names in the launcher: what the launcher is given, which the program may not see.
  std::set<std::string> launcher_placeholders() const;
  // Throws UserError naming a placeholder that is neither in `names` nor a built-in name (seed).
  void check_placeholders(const std::set<std::string>& names) const;

  // The argument vector of one trial: launcher + command with the placeholders substituted; the
  // first word resolved on PATH.
  std::vector<std::string> argv_for(const nlohmann::json& point, int64_t seed) const;
  // "NAME=value" entries that carry `point` (DYNO_KNOB_* and DYNO_SEED).
  static std::vector<std::string> environment_for(const nlohmann::json& point, int64_t seed);
  static std::string environment_name(const std::string& knob);
  // Throws UserError naming two knobs of `names` that have one environment_name (batch-size and
  // batch_size, lr and LR): the program could not tell them apart.
  static void check_environment_names(const std::set<std::string>& names);

  // {"command", "launcher"}: what a journal header and a report record of the program.
  nlohmann::json to_json() const;
  // The tuned configuration as what to run: {"argv": [...], "environment": {...}, "point": {...}}.
  nlohmann::json best_config_json(const nlohmann::json& point, int64_t seed) const;
  // The same as one POSIX shell line (environment assignments, then the quoted argument vector),
  // run in `working_dir` when one is given (where the trials ran: the command's relative paths).
  std::string best_config_shell(const nlohmann::json& point, int64_t seed, const std::string& working_dir = "") const;

 private:
  std::vector<std::string> command_;
  std::vector<std::string> launcher_;
};

// Splits a command line into words at whitespace, with '...' and "..." quoting and \ escapes (no
// other shell syntax): for --launcher, given as one argument.
std::vector<std::string> split_command_line(const std::string& text);

}  // namespace dyno
