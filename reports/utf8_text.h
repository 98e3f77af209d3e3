// utf8_text: text that came from outside dyno (a program's log line, a line of its report) made
// fit for JSON, whose writer refuses bytes that are not UTF-8: a Latin-1 message, or a line cut in
// the middle of a character, must not take the journal or the report down with it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dyno {

// `bytes` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD, cut
// to at most `max_bytes` bytes at a character's boundary.
std::string utf8_text(std::string_view bytes, size_t max_bytes = std::string::npos);

// utf8_text(bytes) fit for a terminal: each control character but the newline and the tab (C0,
// DEL, and C1 as U+0080-U+009F) written out as \xNN or \u00NN, so that a value an error echoes
// cannot move the cursor, clear the screen or retitle the window.
std::string terminal_text(std::string_view bytes);

}  // namespace dyno
