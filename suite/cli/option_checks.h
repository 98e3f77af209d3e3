// Range checks for numeric command-line options (CLI11 validators): a number in [low, high], NaN
// and infinities refused, with a message in the option's own terms ("--alpha: 'nan' is not a
// number from 1e-09 to 0.5"). CLI11's own Range lets NaN through and prints 300-digit bounds.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/utf8_text.h"

namespace dyno {

inline std::string option_bound(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

inline CLI::Validator number_in(double low, double high) {
  const std::string range = "a number from " + option_bound(low) + " to " + option_bound(high);
  return CLI::Validator(
      [=](std::string& text) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(v) || v < low || v > high) return "'" + text + "' is not " + range;
        return std::string();
      },
      "NUMBER in [" + option_bound(low) + ", " + option_bound(high) + "]");
}

inline CLI::Validator whole_number_in(int64_t low, int64_t high) {
  const std::string range = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) {
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || errno == ERANGE || v < low || v > high) return "'" + text + "' is not " + range;
        return std::string();
      },
      "INT in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

// A name or path given with the option must not be empty ("-o ''" is not the default).
inline CLI::Validator not_empty() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("empty; give a value or leave the option out") : std::string(); },
                        "");
}

// A path the reports will name: their JSON holds UTF-8 text only, so a path of other bytes would
// be refused by the report's writer after the whole run.
inline std::string not_utf8(const std::string& path) {
  return valid_utf8(path) ? std::string() : "'" + utf8_text(path) + "' is not UTF-8 text (the reports name it); give a UTF-8 path";
}

// A file to write: not an existing folder, nor a name ending in '/'; UTF-8.
inline CLI::Validator file_to_write() {
  return CLI::Validator(
      [](std::string& text) {
        if (text.empty()) return std::string("empty; give a file path or leave the option out");
        if (names_a_folder(text)) return "'" + text + "' is a folder; give a file path";
        return not_utf8(text);
      },
      "");
}

// A folder to write: not empty; UTF-8.
inline CLI::Validator folder_to_write() {
  return CLI::Validator(
      [](std::string& text) { return text.empty() ? std::string("empty; give a folder path or leave the option out") : not_utf8(text); }, "");
}

}  // namespace dyno
