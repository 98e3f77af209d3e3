#include "dyno/reports/quantity.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "dyno/reports/user_error.h"

namespace dyno {

double parse_quantity(const std::string& text, const std::map<std::string, double>& units, const std::string& where,
                      const std::string& flag, const std::string& what, bool allow_zero) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  const auto unit = units.find(text.substr(used));
  if (used == 0 || unit == units.end() || !std::isfinite(value) || (allow_zero ? value < 0 : !(value > 0)))
    throw UserError(where, flag + ": '" + text + "' is not " + what);
  return value * unit->second;
}

double parse_duration_s(const std::string& text, const std::string& where, const std::string& flag) {
  const std::string what = "a duration like 90s, 10m, 1.5h or 1m30s";
  const std::map<std::string, double> units = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}};
  // "1h05m", "1m30s" (as dyno prints durations): parts of h, m and s in that order, each once,
  // each a number and its unit.
  double seconds = 0;
  const bool parts = text.find_first_not_of("0123456789.hms") == std::string::npos && !text.empty() && std::isalpha(static_cast<unsigned char>(text.back())) &&
                     std::count_if(text.begin(), text.end(), [](char c) { return c == 'h' || c == 'm' || c == 's'; }) > 1;
  const std::string order = "hms";
  size_t previous = 0;  // one past the last part's unit in `order`
  for (size_t start = 0, unit; parts && start < text.size(); start = unit + 1) {
    unit = text.find_first_of(order, start);
    const size_t rank = order.find(text[unit]);
    if (rank < previous) throw UserError(where, flag + ": '" + text + "' is not " + what);
    previous = rank + 1;
    try {
      seconds += parse_quantity(text.substr(start, unit + 1 - start), units, where, flag, what, /*allow_zero=*/true);
    } catch (const UserError&) {
      throw UserError(where, flag + ": '" + text + "' is not " + what);
    }
  }
  if (parts && !(seconds > 0)) throw UserError(where, flag + ": '" + text + "' is not " + what);
  if (!parts) seconds = parse_quantity(text, units, where, flag, what);
  if (seconds > 366.0 * 86400) throw UserError(where, flag + ": '" + text + "' is more than a year; give at most 8784h");
  return seconds;
}

double parse_bytes(const std::string& text, const std::string& where, const std::string& flag) {
  const double bytes = parse_quantity(text,
                                      {{"", 1},       {"B", 1},          {"K", 1024.0},       {"k", 1024.0},         {"KB", 1024.0},
                                       {"KiB", 1024.0}, {"M", 1048576.0},   {"m", 1048576.0},    {"MB", 1048576.0},     {"MiB", 1048576.0},
                                       {"G", 1073741824.0}, {"g", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0}},
                                      where, flag, "a size like 4000000000, 512M or 2G (K, M, G, KB, MB, GB: binary units)");
  if (bytes >= 0x1p63) throw UserError(where, flag + ": '" + text + "' is more bytes than a size holds (2^63); give at most 8589934591G");
  // (a unit left out: "1.5" is a byte and a half, which no process fits in)
  if (bytes < 1048576) throw UserError(where, flag + ": '" + text + "' is under 1 MiB, which no training process fits in; give a unit, as 1.5G or 512M");
  return bytes;
}

double parse_fraction(const std::string& text, const std::string& where, const std::string& flag) {
  const double fraction = parse_quantity(text, {{"", 1}, {"%", 0.01}}, where, flag, "a fraction like 5% or 0.05", /*allow_zero=*/true);
  if (fraction > 1 && text.find('%') == std::string::npos)
    throw UserError(where, flag + ": '" + text + "' is a fraction above 1 (" + format_fixed(100 * fraction, 0) + "%); write " + text +
                               "% for " + text + " per cent, or " + nlohmann::json(fraction / 100).dump());
  return fraction;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e15) return "?";
  char buffer[32];
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60) std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%llds", s);
  return buffer;
}

std::string format_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace dyno
