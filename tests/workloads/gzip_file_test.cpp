#include "dyno/workloads/gzip_file.h"

#include <zlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bound_by_permissions.h"
#include "dyno/reports/user_error.h"
#include "temp_dir.h"

namespace dyno {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void write_gzip(const fs::path& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(file);
}

// A source folder and a data cache of the test's own (DYNO_DATA_CACHE), removed afterwards.
class GzipFile : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::fresh_dir("gzip_file");
    cache_ = root_ / "cache";
    setenv("DYNO_DATA_CACHE", cache_.c_str(), 1);
    source_ = root_ / "images.gz";
    write_gzip(source_, "the decoded bytes");
  }
  void TearDown() override {
    unsetenv("DYNO_DATA_CACHE");
    testing::remove_tree(root_);
  }
  std::vector<fs::path> cache_entries() const {
    std::vector<fs::path> entries;
    if (fs::exists(cache_))
      for (const auto& e : fs::directory_iterator(cache_)) entries.push_back(e.path());
    return entries;
  }
  fs::path root_, cache_, source_;
};

TEST_F(GzipFile, KeepsTheDecodedBytesForTheNextReadToUse) {
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("the decoded bytes"));
  const auto entries = cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(read_text(entries[0]), "the decoded bytes");
  // The next read does not decode: with the compressed data damaged (same size, time, header and
  // trailer), it still returns the bytes.
  std::string compressed = read_text(source_);
  const auto modified = fs::last_write_time(source_);
  for (size_t i = 10; i + 8 < compressed.size(); ++i) compressed[i] = static_cast<char>(0xff);
  write_text(source_, compressed);
  fs::last_write_time(source_, modified);
  setenv("DYNO_DATA_CACHE", "off", 1);
  EXPECT_THROW(read_gzip_file(source_, "pkg"), UserError);  // decoding it now fails
  setenv("DYNO_DATA_CACHE", cache_.c_str(), 1);
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("the decoded bytes"));
}

TEST_F(GzipFile, DecodesAgainWhenTheSourceChangedAndReplacesItsEntry) {
  read_gzip_file(source_, "pkg");
  for (const std::string content : {"other content, longer", "other content, same!!"}) {  // another length; the same
    write_gzip(source_, content);
    EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of(content));
    const auto entries = cache_entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(read_text(entries[0]), content);
  }
}

TEST_F(GzipFile, AFileOfSeveralGzipMembersIsDecodedWholeAndNotCached) {
  write_gzip(root_ / "first.gz", "first member, ");
  write_gzip(root_ / "second.gz", "second member");
  write_text(source_, read_text(root_ / "first.gz") + read_text(root_ / "second.gz"));  // as `cat a.gz b.gz`
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("first member, second member"));
  EXPECT_TRUE(cache_entries().empty());  // the trailer states the last member's length only
}

TEST_F(GzipFile, AnEntryThatIsNotWhatTheTrailerStatesIsDecodedAgainAndReplaced) {
  read_gzip_file(source_, "pkg");
  const auto entries = cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  for (const std::string damaged : {"the deco", "THE DECODED BYTES"}) {  // shorter; the same length, other bytes
    write_text(entries[0], damaged);
    EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("the decoded bytes"));
    EXPECT_EQ(read_text(entries[0]), "the decoded bytes");
  }
}

TEST_F(GzipFile, OffReadsWithoutACache) {
  setenv("DYNO_DATA_CACHE", "off", 1);
  EXPECT_EQ(data_cache_dir(), "");
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("the decoded bytes"));
  EXPECT_FALSE(fs::exists(cache_));
}

TEST_F(GzipFile, ACacheThatCannotBeWrittenIsSkipped) {
  write_text(root_ / "a-file", "");
  setenv("DYNO_DATA_CACHE", (root_ / "a-file" / "cache").c_str(), 1);  // a folder under a file: never created
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("the decoded bytes"));
}

TEST_F(GzipFile, AFileThatIsNotGzipIsReadAsItIsAndNotCached) {
  write_text(source_, "plain text");
  EXPECT_EQ(read_gzip_file(source_, "pkg"), bytes_of("plain text"));
  EXPECT_TRUE(cache_entries().empty());
}

// A gzip stream cut short (a partial download or copy) is refused, not read as what it held.
TEST_F(GzipFile, ATruncatedFileIsRefused) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  write_gzip(source_, text);
  const std::string whole = read_text(source_);
  write_text(source_, whole.substr(0, whole.size() - 20));
  try {
    read_gzip_file(source_, "pkg");
    FAIL() << "a truncated file was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST_F(GzipFile, AMissingFileNamesThePackageThatInstallsItAndAnUnreadableOneSaysWhy) {
  try {
    read_gzip_file(root_ / "missing.gz", "dataset-example");
    FAIL() << "no error for a missing file";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install dataset-example"), std::string::npos) << e.what();
  }
  write_text(root_ / "a-file", "");
  try {  // not missing: unreadable, and said so
    read_gzip_file(root_ / "a-file" / "x.gz", "dataset-example");
    FAIL() << "no error for a path under a file";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read '" + (root_ / "a-file" / "x.gz").string() + "': Not a directory"), std::string::npos) << e.what();
  }
}

// (As root too: the read is made as a user the file's mode stops.)
TEST_F(GzipFile, AnUnreadableFileSaysWhy) {
  const fs::path path = root_ / "labels.gz";
  write_gzip(path, "abc");
  fs::permissions(path, fs::perms::none);
  const int status = testing::status_of_error(root_.string(), [&] { read_gzip_file(path, "dataset-example"); }, "[data] cannot open '" + path.string() + "': Permission denied");
  if (const std::string why = testing::cannot_judge(status); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(status, 0) << "(the child's stderr above)";
}

void set_used(const fs::path& path, int seconds_ago) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(seconds_ago));
}

// A name of the cache's (NAME-<16 hex digits>).
std::string entry(const std::string& name) { return name + "-0123456789abcdef"; }

TEST_F(GzipFile, AReadFromTheCacheMarksItsEntryUsed) {
  read_gzip_file(source_, "pkg");
  const auto entries = cache_entries();
  ASSERT_EQ(entries.size(), 1u);
  set_used(entries[0], 3600);
  const auto before = fs::last_write_time(entries[0]);
  read_gzip_file(source_, "pkg");
  EXPECT_GT(fs::last_write_time(entries[0]), before + std::chrono::seconds(3000));
}

TEST_F(GzipFile, PruningRemovesTheLeastRecentlyUsedEntriesPastTheBoundButNotTheOneJustWrittenNorOtherFiles) {
  fs::create_directories(cache_);
  for (const auto& [name, seconds_ago] : std::vector<std::pair<std::string, int>>{
           {entry("a"), 400}, {entry("b"), 300}, {entry("c"), 200}, {entry("d"), 100}, {"notes.txt", 500}}) {
    write_text(cache_ / name, std::string(100, 'x'));
    set_used(cache_ / name, seconds_ago);
  }
  prune_data_cache(cache_, 250, cache_ / entry("a"));  // 400 bytes of entries: two go, the oldest after the kept one
  EXPECT_TRUE(fs::exists(cache_ / entry("a")));
  EXPECT_FALSE(fs::exists(cache_ / entry("b")));
  EXPECT_FALSE(fs::exists(cache_ / entry("c")));
  EXPECT_TRUE(fs::exists(cache_ / entry("d")));
  EXPECT_TRUE(fs::exists(cache_ / "notes.txt"));  // not the cache's: neither counted nor removed
  prune_data_cache(cache_, 200, "");  // within the bound: nothing goes
  EXPECT_EQ(cache_entries().size(), 3u);
}

TEST_F(GzipFile, WritingAnEntryRemovesWhatAKilledWriterLeftAnHourAgoAndNothingElse) {
  fs::create_directories(cache_);
  const fs::path orphan = cache_ / (entry("old") + ".tmp.12345"), live = cache_ / (entry("new") + ".tmp.12346"),
                 other = cache_ / "thesis.tmp.999999";
  for (const auto& path : {orphan, live, other}) write_text(path, "part of a file");
  set_used(orphan, kOrphanAge_s + 60);
  set_used(other, kOrphanAge_s + 60);
  read_gzip_file(source_, "pkg");
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(live));  // a write under way (here, or on another host sharing the folder)
  EXPECT_TRUE(fs::exists(other));  // not the cache's
  EXPECT_EQ(cache_entries().size(), 3u);  // the new entry, and the two kept files
}

// Sets (or with nullptr unsets) an environment variable for its lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DataCacheDir, FollowsDynosCacheThenTheXdgCacheFolderThenHome) {
  ScopedEnv data_cache("DYNO_DATA_CACHE", nullptr), home("HOME", "/h");
  {
    ScopedEnv dyno("DYNO_CACHE", "/d/cache"), xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(data_cache_dir(), "/d/cache/data");
  }
  {
    ScopedEnv dyno("DYNO_CACHE", nullptr), xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(data_cache_dir(), "/x/cache/dyno/data");
  }
  ScopedEnv dyno("DYNO_CACHE", nullptr), xdg("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(data_cache_dir(), "/h/.cache/dyno/data");
}

}  // namespace
}  // namespace dyno
