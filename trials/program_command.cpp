#include "dyno/trials/program_command.h"

#include <cctype>
#include <map>

#include "dyno/reports/child_process.h"
#include "dyno/reports/knob.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

// Calls `visit(name)` for each {name} in `word` and returns the word with each replaced by
// `value(name)`; "{{" and "}}" stand for literal braces. Throws on an unclosed brace.
template <typename Value>
std::string substitute(const std::string& word, const Value& value) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '{') {
      const size_t close = word.find('}', i);
      if (close == std::string::npos) throw UserError("command", "'" + word + "': '{' without a closing '}' (write {{ for a literal brace)");
      out += value(word.substr(i + 1, close - i - 1));
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

std::set<std::string> placeholders_in(const std::vector<std::string>& words) {
  std::set<std::string> names;
  for (const auto& w : words) substitute(w, [&](const std::string& name) { names.insert(name); return std::string(); });
  return names;
}

std::string shell_quote(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word) plain &= std::isalnum(static_cast<unsigned char>(c)) || std::string("-_./=:,+@%").find(c) != std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

ProgramCommand::ProgramCommand(std::vector<std::string> command, std::vector<std::string> launcher)
    : command_(std::move(command)), launcher_(std::move(launcher)) {
  if (command_.empty()) throw UserError("command", "--command needs a program and its arguments");
  placeholders_in(command_);
  placeholders_in(launcher_);
  const std::string& program = launcher_.empty() ? command_.front() : launcher_.front();
  if (program.find('{') == std::string::npos && find_executable(program).empty())
    throw UserError("command", "'" + program + "' is not an executable file" + (program.find('/') == std::string::npos ? " on PATH" : ""));
}

std::set<std::string> ProgramCommand::command_placeholders() const { return placeholders_in(command_); }
std::set<std::string> ProgramCommand::launcher_placeholders() const { return placeholders_in(launcher_); }

void ProgramCommand::check_placeholders(const std::set<std::string>& names) const {
  for (const auto* words : {&launcher_, &command_})
    for (const auto& name : placeholders_in(*words))
      if (!names.count(name) && name != "seed") {
        std::string known = "seed";
        for (const auto& n : names) known += ", " + n;
        throw UserError("command", "placeholder {" + name + "} names no knob of the search space; known: " + known);
      }
}


std::string ProgramCommand::environment_name(const std::string& knob) {
  std::string name = "DYNO_KNOB_";
  for (char c : knob) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  return name;
}

void ProgramCommand::check_environment_names(const std::set<std::string>& names) {
  std::map<std::string, std::string> knob_of;
  for (const auto& name : names) {
    if (name == "seed")
      throw UserError("space", "knob 'seed': the name is dyno's ({seed} is the trial's seed, DYNO_SEED, which time to target's repeats change); "
                               "name the program's knob otherwise");
    if (name.empty() || name.find_first_of("{}=") != std::string::npos)
      throw UserError("space", "knob '" + name + "': a knob's name is not empty and has no '{', '}' or '=' (it is written {" + name + "} and --axis " +
                                   name + "=values)");
  }
  for (const auto& name : names)
    if (const auto [it, first] = knob_of.emplace(environment_name(name), name); !first)
      throw UserError("space", "knobs '" + it->second + "' and '" + name + "' are both " + it->first + " in the program's environment, " +
                                   "which could not tell them apart; rename one");
}

std::vector<std::string> ProgramCommand::argv_for(const nlohmann::json& point, int64_t seed) const {
  auto value = [&](const std::string& name) {
    if (name == "seed") return std::to_string(seed);
    if (!point.contains(name)) throw UserError("command", "placeholder {" + name + "} names no knob of the point " + point.dump());
    return knob_value_text(point[name]);
  };
  std::vector<std::string> argv;
  for (const auto& w : launcher_) argv.push_back(substitute(w, value));
  for (const auto& w : command_) argv.push_back(substitute(w, value));
  if (const std::string found = find_executable(argv.front()); !found.empty()) argv.front() = found;
  return argv;
}

std::vector<std::string> ProgramCommand::environment_for(const nlohmann::json& point, int64_t seed) {
  std::vector<std::string> env;
  for (const auto& [knob, value] : point.items()) env.push_back(environment_name(knob) + "=" + knob_value_text(value));
  env.push_back("DYNO_SEED=" + std::to_string(seed));
  return env;
}

nlohmann::json ProgramCommand::to_json() const { return {{"command", command_}, {"launcher", launcher_}}; }

nlohmann::json ProgramCommand::best_config_json(const nlohmann::json& point, int64_t seed) const {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& entry : environment_for(point, seed)) {
    const auto eq = entry.find('=');
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  // The first word as the user wrote it (the PATH lookup is left to the user's shell).
  auto filled = argv_for(point, seed);
  const std::string& first = launcher_.empty() ? command_.front() : launcher_.front();
  if (first.find('{') == std::string::npos) filled.front() = first;
  return {{"argv", filled}, {"environment", env}, {"point", point}};
}

std::string ProgramCommand::best_config_shell(const nlohmann::json& point, int64_t seed, const std::string& working_dir) const {
  const nlohmann::json config = best_config_json(point, seed);
  std::string line = working_dir.empty() ? "" : "cd " + shell_quote(working_dir) + " && ";
  for (const auto& [name, value] : config["environment"].items()) line += name + "=" + shell_quote(value.get<std::string>()) + " ";
  for (const auto& w : config["argv"]) line += shell_quote(w.get<std::string>()) + " ";
  line.pop_back();
  return line;
}

std::vector<std::string> split_command_line(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size()) word += text[++i];
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) throw UserError("command", "'" + text + "': unclosed " + std::string(1, quote) + " quote");
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace dyno
