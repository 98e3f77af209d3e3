#include "reports/knob.h"

#include <cmath>
#include <sstream>

#include "reports/json_fields.h"
#include "reports/run_config.h"
#include "reports/user_error.h"

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
    case KnobType::Text: return "any text";
  }
  return "?";
}

nlohmann::json Knob::parse_text(const std::string& text) const {
  auto fail = [&]() -> nlohmann::json {
    if (!valid_utf8(text)) throw UserError("config", name + ": the value is not valid UTF-8 text");
    throw UserError("config", name + ": '" + text + "' is not " + valid_text());
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
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(text, &used);
      } catch (...) {
        return fail();
      }
      if (used != text.size() || !std::isfinite(v)) return fail();
      return v;
    }
    case KnobType::Boolean:
      if (text == "true" || text == "1" || text == "on" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "off" || text == "no") return false;
      return fail();
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
      if (std::floor(v) != v || v < min_value || v > max_value) fail();
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
      return;
  }
}

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

}  // namespace dyno
