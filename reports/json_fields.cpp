#include "dyno/reports/json_fields.h"

#include <algorithm>
#include <cmath>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

const nlohmann::json& empty_object() {
  static const nlohmann::json empty = nlohmann::json::object();
  return empty;
}

std::string shown(const nlohmann::json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

}  // namespace

bool valid_utf8(const std::string& text) {
  try {
    nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

JsonFields::JsonFields(const nlohmann::json& object, std::string area, std::string where)
    : object_(object), area_(std::move(area)), where_(std::move(where)) {
  if (!object_.is_object()) throw UserError(area_, where_ + " is " + shown(object_) + "; expected a JSON object");
}

void JsonFields::fail(const char* key, const std::string& expected) const {
  // (operator[] of a const object is undefined for a missing key.)
  const auto found = object_.find(key);
  throw UserError(area_, where_ + ": field '" + key + "' is " + (found == object_.end() ? std::string("missing") : shown(*found)) + "; expected " + expected);
}

std::string JsonFields::text(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!object_[key].is_string()) fail(key, "a string");
  return object_[key].get<std::string>();
}

int64_t JsonFields::integer(const char* key, int64_t fallback) const {
  if (!has(key)) return fallback;
  const auto& v = object_[key];
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) return v.get<int64_t>();
  if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() && std::fabs(v.get<double>()) < 9e18)
    return static_cast<int64_t>(v.get<double>());
  fail(key, "an integer");
}

double JsonFields::number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  if (!object_[key].is_number()) fail(key, "a number");
  return object_[key].get<double>();
}

double JsonFields::number_at_least(const char* key, double least, double fallback) const {
  if (!has(key)) return fallback;
  const auto& v = object_[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < least) fail(key, "a finite number >= " + nlohmann::json(least).dump());
  return v.get<double>();
}

double JsonFields::positive_number(const char* key) const {
  const double v = required_number(key);
  if (!(v > 0) || !std::isfinite(v)) fail(key, "a finite number above 0");
  return v;
}

bool JsonFields::flag(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!object_[key].is_boolean()) fail(key, "true or false");
  return object_[key].get<bool>();
}

void JsonFields::only(std::initializer_list<const char*> valid) const {
  std::string names;
  for (const char* name : valid) names += (names.empty() ? "" : ", ") + std::string(name);
  for (const auto& [field, value] : object_.items())
    if (std::find(valid.begin(), valid.end(), field) == valid.end()) throw UserError(area_, where_ + ": unknown field '" + field + "' (valid: " + names + ")");
}

const nlohmann::json& JsonFields::required(const char* key) const {
  if (!has(key)) throw UserError(area_, where_ + " has no field '" + key + "'");
  return object_[key];
}

std::string JsonFields::required_text(const char* key) const {
  required(key);
  return text(key);
}

int64_t JsonFields::required_integer(const char* key) const {
  required(key);
  return integer(key);
}

double JsonFields::required_number(const char* key) const {
  required(key);
  return number(key);
}

std::vector<double> JsonFields::numbers(const char* key) const {
  std::vector<double> values;
  if (!has(key)) return values;
  if (!object_[key].is_array()) fail(key, "an array of numbers");
  for (const auto& v : object_[key]) {
    if (!v.is_number() && !v.is_null()) fail(key, "an array of numbers");
    values.push_back(v.is_number() ? v.get<double>() : std::nan(""));
  }
  return values;
}

std::vector<double> JsonFields::throughputs(const char* key, size_t fewest) const {
  const std::string expected = "an array of " + std::to_string(fewest) + " or more throughputs, each a finite number above 0";
  if (!has(key) || !object_[key].is_array() || object_[key].size() < fewest) fail(key, expected);
  std::vector<double> values;
  for (const auto& v : object_[key]) {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) fail(key, expected);
    values.push_back(v.get<double>());
  }
  return values;
}

JsonFields JsonFields::object(const char* key) const {
  if (!has(key)) return JsonFields(empty_object(), area_, where_ + "." + key);
  if (!object_[key].is_object()) fail(key, "an object");
  return JsonFields(object_[key], area_, where_ + "." + key);
}

}  // namespace dyno
