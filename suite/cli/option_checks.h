// Range checks for numeric command-line options (CLI11 validators): a number in [low, high], NaN
// and infinities refused, with a message in the option's own terms ("--alpha: 'nan' is not a
// number from 1e-09 to 0.5"). CLI11's own Range lets NaN through and prints 300-digit bounds.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/user_error.h"
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

// One path names the same file as the other (either may not exist yet).
inline bool same_path(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  return !a.empty() && !b.empty() && std::filesystem::weakly_canonical(a, ea) == std::filesystem::weakly_canonical(b, eb) && !ea && !eb;
}

// A file a command writes (option, path) must not be a file it reads, nor another file it writes:
// writing it would destroy the input. With `folders_are_read`, an input that is a folder is read
// whole (a folder of baselines), and no file may be written into it either.
// `inputs`: (what, path) pairs; an empty path is an option not given.
inline void refuse_writing_over(const std::string& area, const std::vector<std::pair<std::string, std::string>>& written,
                                const std::vector<std::pair<std::string, std::string>>& inputs, bool folders_are_read = false) {
  for (size_t i = 0; i < written.size(); ++i) {
    const auto& [option, path] = written[i];
    if (path.empty()) continue;
    for (size_t j = i + 1; j < written.size(); ++j)
      if (same_path(path, written[j].second))
        throw UserError(area, option + " and " + written[j].first + " are both '" + path + "'; one would overwrite the other");
    for (const auto& [what, input] : inputs) {
      std::error_code e;
      const bool folder = folders_are_read && !input.empty() && std::filesystem::is_directory(input, e);
      if (same_path(path, input) || (folder && same_path(std::filesystem::absolute(path).parent_path().string(), input)))
        throw UserError(area, option + " '" + path + "' is " + (folder ? "in the folder of " + what + " ('" + input + "'): it holds inputs only; give another path"
                                                                          : what + "; writing it would destroy it"));
    }
  }
}

}  // namespace dyno
