#include "reports/quantity.h"

#include <cmath>
#include <cstdio>

#include "reports/user_error.h"

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
  return parse_quantity(text, {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}}, where, flag, "a duration like 90s, 10m or 1.5h");
}

double parse_bytes(const std::string& text, const std::string& where, const std::string& flag) {
  return parse_quantity(text,
                        {{"", 1}, {"B", 1}, {"K", 1024.0}, {"KiB", 1024.0}, {"M", 1048576.0}, {"MiB", 1048576.0},
                         {"G", 1073741824.0}, {"GiB", 1073741824.0}},
                        where, flag, "a size like 4000000000, 512M or 2G");
}

double parse_fraction(const std::string& text, const std::string& where, const std::string& flag) {
  return parse_quantity(text, {{"", 1}, {"%", 0.01}}, where, flag, "a fraction like 5% or 0.05", /*allow_zero=*/true);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
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
