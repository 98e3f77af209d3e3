// Numbers with units as users type them on the command line ("90s", "10m", "2G", "5%") and
// durations as dyno prints them ("3m05s"). One parser, so every flag reports errors alike.
#pragma once

#include <map>
#include <string>

namespace dyno {

// Parses "<number><unit>" where unit is a key of `units` (the empty string = no unit) and
// returns number * units[unit]. The value must be > 0 (>= 0 when allow_zero). Throws
// UserError("<where>", "<flag>: '<text>' is not <what>").
double parse_quantity(const std::string& text, const std::map<std::string, double>& units, const std::string& where,
                      const std::string& flag, const std::string& what, bool allow_zero = false);

double parse_duration_s(const std::string& text, const std::string& where, const std::string& flag);  // 90s, 10m, 1.5h; up to a year
double parse_bytes(const std::string& text, const std::string& where, const std::string& flag);       // 512M, 2G, 4000000000; from 1 MiB, below 2^63
// 5% or 0.05; a bare number above 1 ("5") is refused: it would be 500%, not the 5% meant.
double parse_fraction(const std::string& text, const std::string& where, const std::string& flag);

std::string format_duration(double seconds);  // "45s", "3m05s", "1h02m"; "?" when unknown
std::string format_fixed(double value, int decimals = 1);  // printf's %.*f: "2.08"

}  // namespace dyno
