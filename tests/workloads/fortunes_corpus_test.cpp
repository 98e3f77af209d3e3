#include "dyno/workloads/fortunes_corpus.h"

#include <gtest/gtest.h>

namespace dyno {
namespace {

TEST(FortunesCorpus, LoadsTextWithFixedVocabulary) {
  CharCorpus corpus = load_fortunes(64 * 1024);
  EXPECT_EQ(corpus.tokens.size(), 64u * 1024);
  EXPECT_EQ(static_cast<int64_t>(corpus.vocabulary.size()), kCharVocabularySize);
  for (uint8_t t : corpus.tokens) ASSERT_LT(t, kCharVocabularySize);
  std::string decoded;
  for (size_t i = 0; i < 2000; ++i) decoded += corpus.vocabulary[corpus.tokens[i]];
  EXPECT_EQ(decoded.find("\n%\n"), std::string::npos);  // separators were removed
}

TEST(FortunesCorpus, MapsUnknownBytesToSpace) {
  CharCorpus c = build_char_corpus(std::string("a\xff\n"));
  ASSERT_EQ(c.tokens.size(), 3u);
  EXPECT_EQ(c.vocabulary[c.tokens[0]], 'a');
  EXPECT_EQ(c.vocabulary[c.tokens[1]], ' ');
  EXPECT_EQ(c.vocabulary[c.tokens[2]], '\n');
}

}  // namespace
}  // namespace dyno
