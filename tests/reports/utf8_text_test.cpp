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

}  // namespace
}  // namespace dyno
