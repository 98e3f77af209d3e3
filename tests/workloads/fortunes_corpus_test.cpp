#include "dyno/workloads/fortunes_corpus.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "bound_by_permissions.h"
#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"
#include "temp_dir.h"

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

std::string decoded(const CharCorpus& corpus) {
  std::string text;
  for (uint8_t t : corpus.tokens) text += corpus.vocabulary[t];
  return text;
}

// A folder of fortunes as DYNO_FORTUNES_DIR names it, for one test.
class FortunesFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* before = std::getenv("DYNO_FORTUNES_DIR")) before_ = before;
    setenv("DYNO_FORTUNES_DIR", dir_.str().c_str(), 1);
  }
  void TearDown() override {
    if (before_) setenv("DYNO_FORTUNES_DIR", before_->c_str(), 1);
    else unsetenv("DYNO_FORTUNES_DIR");
  }
  void write(const std::string& name, const std::string& text) { write_file_atomically(dir_.str() + "/" + name, text); }
  testing::TempDir dir_{"fortunes"};
  std::optional<std::string> before_;  // the environment's, put back after the test
};

// As fortune(6) reads them: a text file with its index beside it, nothing else in the folder.
TEST_F(FortunesFolder, AFortuneFileIsATextFileWithItsIndexBesideIt) {
  write("wisdom", "Look before you leap.\n%\nHe who hesitates is lost.\n%\n");
  write("wisdom.dat", "an index");
  write("wisdom.u8", "Look before you leap.\n");
  write("README", "Not a fortune.\n");
  write("notes.txt", "Not one either.\n");
  EXPECT_EQ(decoded(load_fortunes()), "Look before you leap.\n\nHe who hesitates is lost.\n\n");
}

TEST_F(FortunesFolder, AFolderWithoutFortuneFilesNamesWhatItLacks) {
  write("README", "Not a fortune.\n");
  try {
    load_fortunes();
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no fortune files (a text file NAME with its index NAME.dat) in '" + dir_.str() + "'"), std::string::npos) << e.what();
  }
}

// (As root too: the read is made as a user the file's mode stops.)
TEST_F(FortunesFolder, AnUnreadableFortuneFileIsAnErrorNotLeftOut) {
  write("wisdom", "Look before you leap.\n");
  write("wisdom.dat", "");
  std::filesystem::permissions(dir_.str() + "/wisdom", std::filesystem::perms::none);
  const int status = testing::status_of_error(dir_.str(), [&] { load_fortunes(); }, "[file] cannot read '" + dir_.str() + "/wisdom': Permission denied");
  if (const std::string why = testing::cannot_judge(status); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(status, 0) << "(the child's stderr above)";
}

}  // namespace
}  // namespace dyno
