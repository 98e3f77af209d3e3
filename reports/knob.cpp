#include "dyno/reports/knob.h"

#include <cmath>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "dyno/reports/json_fields.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/user_error.h"

namespace dyno {

std::string to_string(KnobType type) {
  switch (type) {
    case KnobType::Integer: return "integer";
    case KnobType::Real: return "real";
    case KnobType::Boolean: return "bool";
    case KnobType::Choice: return "choice";
    case KnobType::Text: return "text";
  }
  return "?";
}

nlohmann::json Knob::default_value() const { return get(RunConfig{}); }

namespace {

std::string format_number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace

std::string Knob::valid_text() const {
  switch (type) {
    case KnobType::Integer:
      return "an integer in [" + format_number(min_value) + ", " + format_number(max_value) + "]";
    case KnobType::Real:
      return "a number in [" + format_number(min_value) + ", " + format_number(max_value) + "]";
    case KnobType::Boolean: return "true or false";
    case KnobType::Choice: return "one of " + join(choices, ", ");
    case KnobType::Text: return "any text without a NUL byte";
  }
  return "?";
}

nlohmann::json Knob::parse_text(const std::string& text) const {
  auto fail = [&]() -> nlohmann::json {
    if (!valid_utf8(text)) throw UserError("config", name + ": the value is not valid UTF-8 text");
    // (As text, a bool takes more spellings than JSON's true and false.)
    throw UserError("config", name + ": '" + text + "' is not " + valid_text() + (type == KnobType::Boolean ? " (also True/False, 1/0, yes/no, on/off)" : ""));
  };
  switch (type) {
    case KnobType::Integer: {
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(text, &used);
      } catch (...) {
        return fail();
      }
      if (used != text.size()) return fail();
      return v;
    }
    case KnobType::Real: {
      // (strtod: a value below the smallest double, 1e-320, is a number near 0, not an error)
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return fail();
      return v;
    }
    case KnobType::Boolean:
    {
      std::string lower = text;  // Python's True and False too
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "true" || lower == "1" || lower == "on" || lower == "yes") return true;
      if (lower == "false" || lower == "0" || lower == "off" || lower == "no") return false;
      return fail();
    }
    case KnobType::Choice:
    case KnobType::Text:
      if (!valid_utf8(text)) return fail();
      return text;
  }
  return fail();
}

void Knob::validate(const nlohmann::json& value) const {
  auto fail = [&]() {
    throw UserError("config", name + ": " + value.dump() + " is not " + valid_text());
  };
  switch (type) {
    case KnobType::Integer: {
      if (!value.is_number()) fail();
      double v = value.get<double>();
      // (past a 64-bit integer's range a value would wrap when it is read as one)
      if (std::floor(v) != v || v < min_value || v > max_value || !(v >= -0x1p63 && v < 0x1p63)) fail();
      return;
    }
    case KnobType::Real: {
      if (!value.is_number()) fail();
      double v = value.get<double>();
      if (!std::isfinite(v) || v < min_value || v > max_value) fail();
      return;
    }
    case KnobType::Boolean:
      if (!value.is_boolean()) fail();
      return;
    case KnobType::Choice: {
      if (!value.is_string()) fail();
      for (const auto& c : choices)
        if (c == value.get<std::string>()) return;
      throw UserError("config", name + ": '" + value.get<std::string>() + "' is not " + valid_text());
    }
    case KnobType::Text:
      if (!value.is_string()) fail();
      // A C string ends at a NUL: a file name or a program's argument would lose what follows.
      if (value.get<std::string>().find('\0') != std::string::npos) throw UserError("config", name + ": " + value.dump() + " holds a NUL byte (\\u0000)");
      return;
  }
}

std::string knob_value_text(const nlohmann::json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

const Knob* find_knob(const std::string& name) {
  for (const auto& knob : all_knobs())
    if (knob.name == name) return &knob;
  return nullptr;
}

const Knob& knob_or_throw(const std::string& name, const std::string& where) {
  if (const Knob* knob = find_knob(name)) return *knob;
  std::vector<std::string> names;
  for (const auto& knob : all_knobs()) names.push_back(knob.name);
  throw UserError(where, "unknown knob '" + name + "'; known knobs: " + join(names, ", ") +
                             " (see `dyno knobs`)");
}

KnobRole role_of(const std::string& name) {
  const Knob* knob = find_knob(name);
  return knob ? knob->role : KnobRole::Other;
}

namespace {

// A program knob's role, as its declaration names it: the stage of the staged search that tries it
// (process, pipeline; other after the batch) or the phase of time to target (convergence), as the
// knob table declares dyno's own. "batch" is dyno's batch_size alone.
KnobRole declared_role(const std::string& where, const nlohmann::json& spec) {
  static const std::vector<std::pair<std::string, KnobRole>> kRoles = {
      {"process", KnobRole::Process}, {"pipeline", KnobRole::Pipeline}, {"numerics", KnobRole::Numerics},
      {"convergence", KnobRole::Convergence}, {"other", KnobRole::Other}};
  if (spec.contains("convergence") && !spec["convergence"].is_boolean())
    throw UserError("space", where + ": \"convergence\" is " + spec["convergence"].dump() + ", not true or false");
  const bool convergence = spec.value("convergence", false);
  if (!spec.contains("role")) return convergence ? KnobRole::Convergence : KnobRole::Other;
  for (const auto& [name, role] : kRoles)
    if (spec["role"] == name) {
      if (convergence && role != KnobRole::Convergence)
        throw UserError("space", where + ": \"convergence\": true and \"role\": \"" + name + "\" disagree; give one");
      return role;
    }
  throw UserError("space", where + ": \"role\" is " + spec["role"].dump() + ", not one of process, pipeline, numerics, convergence, other");
}

}  // namespace

Knob declared_knob(const std::string& name, const nlohmann::json& spec) {
  const std::string where = "knob " + name;
  if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string())
    throw UserError("space", where + ": expected {\"type\": \"bool\" | \"integer\" | \"real\" | \"choice\" | \"text\", ...}, got " + spec.dump());
  JsonFields(spec, "space", where).only({"type", "min", "max", "choices", "default", "reference", "role", "convergence", "warmup_cost"});
  Knob knob;
  knob.name = name;
  knob.tunable = true;
  knob.description = "declared by the search space";
  const std::string type = spec["type"];
  if (type == "bool" || type == "boolean") knob.type = KnobType::Boolean;
  else if (type == "integer" || type == "real") {
    knob.type = type == "integer" ? KnobType::Integer : KnobType::Real;
    knob.min_value = -1e18;
    knob.max_value = 1e18;
    for (const char* bound : {"min", "max"})
      if (spec.contains(bound)) {
        if (!spec[bound].is_number()) throw UserError("space", where + ": \"" + bound + "\" is " + spec[bound].dump() + ", not a number");
        (bound[1] == 'i' ? knob.min_value : knob.max_value) = spec[bound].get<double>();
      }
    if (knob.min_value > knob.max_value) throw UserError("space", where + ": min is above max");
  } else if (type == "choice") {
    knob.type = KnobType::Choice;
    if (!spec.contains("choices") || !spec["choices"].is_array() || spec["choices"].empty())
      throw UserError("space", where + ": a choice needs \"choices\": [\"a\", \"b\", ...]");
    for (const auto& c : spec["choices"]) {
      if (!c.is_string()) throw UserError("space", where + ": choice " + c.dump() + " is not a string");
      knob.choices.push_back(c.get<std::string>());
    }
  } else if (type == "text") {
    knob.type = KnobType::Text;
  } else {
    throw UserError("space", where + ": type '" + type + "' is not one of bool, integer, real, choice, text");
  }
  for (const char* value : {"default", "reference"})
    if (spec.contains(value)) {
      try {
        knob.validate(spec[value]);
      } catch (const UserError&) {
        throw UserError("space", where + ": " + value + " " + spec[value].dump() + " is not " + knob.valid_text());
      }
    }
  knob.role = declared_role(where, spec);
  if (spec.contains("warmup_cost") && !spec["warmup_cost"].is_boolean())
    throw UserError("space", where + ": \"warmup_cost\" is " + spec["warmup_cost"].dump() + ", not true or false");
  knob.warmup_cost = spec.value("warmup_cost", false);
  return knob;
}

}  // namespace dyno
