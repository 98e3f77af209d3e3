// JsonFields: typed reads of one JSON object's fields for the readers of files people edit or
// other programs leave behind. A field of the wrong type is a UserError naming the field, the
// value found and the type expected (nlohmann's own type errors name neither, and would reach the
// user as an internal error).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

// Whether `text` can become a JSON string (is valid UTF-8): text from a command line or a file
// read as bytes must be checked before it enters a JSON value that is later written out.
bool valid_utf8(const std::string& text);

class JsonFields {
 public:
  // `area` is the UserError's "[area]"; `where` names the object ("'run.json'", "journal.jsonl
  // line 3: trial"). Throws unless `object` is a JSON object.
  JsonFields(const nlohmann::json& object, std::string area, std::string where);

  bool has(const char* key) const { return object_.contains(key) && !object_[key].is_null(); }
  // The field, or `fallback` when it is absent or null.
  std::string text(const char* key, const std::string& fallback = "") const;
  int64_t integer(const char* key, int64_t fallback = 0) const;
  double number(const char* key, double fallback = 0) const;
  bool flag(const char* key, bool fallback = false) const;
  // A finite number no less than `least` (a figure, a duration), or `fallback` when absent or null.
  double number_at_least(const char* key, double least, double fallback) const;
  // A finite number above 0 (a time, a rate), which must be present.
  double positive_number(const char* key) const;
  // The field, which must be present (and not null).
  std::string required_text(const char* key) const;
  int64_t required_integer(const char* key) const;
  double required_number(const char* key) const;
  const nlohmann::json& required(const char* key) const;
  // An array of numbers (null entries, written for non-finite values, read as NaN).
  std::vector<double> numbers(const char* key) const;
  // An array of `fewest` or more throughputs, each a finite number above 0 (a check's per-run figures).
  std::vector<double> throughputs(const char* key, size_t fewest) const;
  // A nested object, or an empty one when absent.
  JsonFields object(const char* key) const;
  const nlohmann::json& json() const { return object_; }
  const std::string& where() const { return where_; }
  // Throws UserError("[area] where: unknown field 'key' (valid: ...)") unless every field is one of `valid`.
  void only(std::initializer_list<const char*> valid) const;

  // Throws UserError("[area] where: field 'key' is VALUE; expected EXPECTED").
  [[noreturn]] void fail(const char* key, const std::string& expected) const;

 private:
  const nlohmann::json& object_;
  std::string area_, where_;
};

}  // namespace dyno
