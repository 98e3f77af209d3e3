#include "dyno/reports/utf8_text.h"

#include <algorithm>
#include <cstdio>

namespace dyno {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed sequence at `at` (RFC 3629: no overlong form, no surrogate, at
// most U+10FFFF), or 0 when the byte there starts none.
size_t sequence_length(std::string_view s, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead == 0xE0) length = 3, low = 0xA0;
  else if (lead == 0xED) length = 3, high = 0x9F;
  else if (lead >= 0xE1 && lead <= 0xEF) length = 3;
  else if (lead == 0xF0) length = 4, low = 0x90;
  else if (lead == 0xF4) length = 4, high = 0x8F;
  else if (lead >= 0xF1 && lead <= 0xF3) length = 4;
  else return 0;
  if (at + length > s.size() || byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  return length;
}

}  // namespace

std::string utf8_text(std::string_view bytes, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(bytes.size(), max_bytes));
  for (size_t at = 0; at < bytes.size();) {
    const size_t length = sequence_length(bytes, at);
    const std::string_view piece = length ? bytes.substr(at, length) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    at += length ? length : 1;
  }
  return out;
}

std::string terminal_text(std::string_view bytes) {
  const std::string text = utf8_text(bytes);
  std::string out;
  char code[8];
  for (size_t at = 0; at < text.size(); ++at) {
    const auto c = static_cast<unsigned char>(text[at]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      std::snprintf(code, sizeof code, "\\x%02X", c);
      out += code;
    } else if (c == 0xC2 && static_cast<unsigned char>(text[at + 1]) < 0xA0) {  // U+0080-U+009F (well formed: a second byte follows)
      std::snprintf(code, sizeof code, "\\u%04X", static_cast<unsigned char>(text[++at]));
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace dyno
