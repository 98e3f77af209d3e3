#include "dyno/reports/utf8_text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace dyno {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

TEST(Utf8Text, KeepsWellFormedTextAsItIs) {
  const std::string text = "RuntimeError: caf\xC3\xA9 \xE2\x96\x88 \xF0\x9F\x94\xA5 done";  // 2-, 3- and 4-byte characters
  EXPECT_EQ(utf8_text(text), text);
}

TEST(Utf8Text, ReplacesEachByteThatStartsNoWellFormedCharacter) {
  EXPECT_EQ(utf8_text("caf\xE9!"), "caf" + kReplacement + "!");  // Latin-1
  EXPECT_EQ(utf8_text("\xC0\xAF"), kReplacement + kReplacement);  // an overlong '/'
  EXPECT_EQ(utf8_text("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // a surrogate
  EXPECT_EQ(utf8_text("\xF4\x90\x80\x80"), kReplacement + kReplacement + kReplacement + kReplacement);  // above U+10FFFF
  EXPECT_EQ(utf8_text("ab\xE2\x96"), "ab" + kReplacement + kReplacement);  // a character cut at the end
  // What JSON's writer refuses it accepts afterwards.
  EXPECT_THROW(nlohmann::json("caf\xE9").dump(), nlohmann::json::type_error);
  EXPECT_NO_THROW(nlohmann::json(utf8_text("caf\xE9")).dump());
}

TEST(Utf8Text, CutsAtACharactersBoundary) {
  const std::string bars = "\xE2\x96\x88\xE2\x96\x88";  // two 3-byte characters
  EXPECT_EQ(utf8_text(bars, 5), "\xE2\x96\x88");
  EXPECT_EQ(utf8_text(bars, 6), bars);
  EXPECT_EQ(utf8_text("abcdef", 4), "abcd");
  EXPECT_EQ(utf8_text("\xE9\xE9", 4), kReplacement);  // a replacement counts its own three bytes
}

// A value an error echoes reaches the terminal as text: escape sequences, a bell, a backspace or an
// 8-bit CSI are written out; newlines, tabs and printable characters (accented, non-breaking
// space) stay as they are.
TEST(TerminalText, WritesOutEveryControlCharacterButTheNewlineAndTheTab) {
  EXPECT_EQ(terminal_text("amp=\x1B[2J\x1B]0;owned\x07" "fp8"), "amp=\\x1B[2J\\x1B]0;owned\\x07fp8");
  EXPECT_EQ(terminal_text(std::string("a\0b\x08\x7F", 5)), "a\\x00b\\x08\\x7F");
  EXPECT_EQ(terminal_text("\xC2\x9B" "31m"), "\\u009B31m");  // C1 CSI, U+009B
  EXPECT_EQ(terminal_text("line 1\n\tcaf\xC3\xA9\xC2\xA0!"), "line 1\n\tcaf\xC3\xA9\xC2\xA0!");
  EXPECT_EQ(terminal_text("caf\xE9"), "caf" + kReplacement);  // not UTF-8: as utf8_text
}

}  // namespace
}  // namespace dyno
