#include "dyno/reports/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "bound_by_permissions.h"
#include "dyno/reports/user_error.h"
#include "temp_dir.h"

namespace dyno {
namespace {

TEST(AtomicFile, ReplacesContentAndLeavesNoTemporaryFiles) {
  auto dir = std::filesystem::temp_directory_path() / "dyno_atomic_file_test";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "file.json").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "sub")) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
  append_line_durably((dir / "journal.jsonl").string(), "{\"a\":1}");
  append_line_durably((dir / "journal.jsonl").string(), "{\"a\":2}");
  EXPECT_EQ(read_file((dir / "journal.jsonl").string()), "{\"a\":1}\n{\"a\":2}\n");
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, ALinkIsWrittenThroughAndWhatIsNotAFileIsWrittenToAsItIs) {
  auto dir = std::filesystem::temp_directory_path() / "dyno_atomic_file_through";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "real");
  const std::string target = (dir / "real" / "report.json").string(), link = (dir / "report.json").string();
  write_file_atomically(target, "old");
  std::filesystem::create_symlink("real/report.json", link);
  write_file_atomically(link, "new");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_file(target), "new");
  // A FIFO (as /dev/null, not a file): what is written reaches its reader, and it stays a FIFO.
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });
  write_file_atomically(fifo, "through");
  reader.join();
  EXPECT_EQ(received, "through");
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, AJsonErrorOnInvalidUtf8IsValidUtf8) {
  try {
    parse_json_text("{\"a\": \"\xff\"}", "bad.json", "config");
    FAIL() << "parsed";
  } catch (const UserError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'bad.json' is not valid JSON"), std::string::npos) << message;
    EXPECT_EQ(message.find('\xff'), std::string::npos) << message;
  }
}

// A key given twice in one object is refused, naming it; the same key in two objects is two keys.
TEST(AtomicFile, AJsonKeyGivenTwiceInOneObjectIsRefused) {
  try {
    parse_json_text(R"({"lr": 0.1, "ddp": {"world_size": 1}, "lr": 50})", "c.json", "config");
    FAIL() << "parsed";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "[config] 'c.json' gives the key \"lr\" twice in one object; give each key once");
  }
  EXPECT_EQ(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "x": [{"x": 3}, {"x": 4}]})", "ok.json", "config")["b"]["x"], 2);
}

// Nesting no file of dyno's has (a value nested 200,000 deep, which writing out in an error would
// overflow the stack) is refused as such; 256 levels are read.
TEST(AtomicFile, AJsonFileNestedBeyondAnyOfDynosIsRefused) {
  auto nested = [](size_t depth) { return "{\"kind\": " + std::string(depth, '[') + std::string(depth, ']') + "}"; };
  try {
    parse_json_text(nested(200000), "deep.json", "compare");
    FAIL() << "parsed";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "[compare] 'deep.json' nests arrays or objects deeper than 256 levels; no file dyno reads does");
  }
  EXPECT_TRUE(parse_json_text(nested(255), "ok.json", "compare")["kind"].is_array());
}

TEST(AtomicFile, AStreamThatNeverEndsIsNotReadWhole) {
  EXPECT_THROW(
      try { read_file("/dev/zero", size_t{1} << 20); } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("larger than 1 MiB"), std::string::npos) << e.what();
        throw;
      },
      UserError);
}

// A kill while a line was written leaves it torn (no newline); readers ignore it, and the next
// append replaces it instead of gluing a record onto it (or completes it, when it is whole JSON).
TEST(AtomicFile, AnAppendAfterATornLastLineReplacesIt) {
  auto dir = std::filesystem::temp_directory_path() / "dyno_atomic_file_torn";
  std::filesystem::remove_all(dir);
  const std::string journal = (dir / "journal.jsonl").string();
  write_file_atomically(journal, "{\"a\":1}\n{\"a\":2, \"windo");
  append_line_durably(journal, "{\"a\":3}");
  EXPECT_EQ(read_file(journal), "{\"a\":1}\n{\"a\":3}\n");
  write_file_atomically(journal, std::string(10000, 'x'));  // one torn line longer than a read
  append_line_durably(journal, "{\"a\":4}");
  EXPECT_EQ(read_file(journal), "{\"a\":4}\n");
  // Whole but for its newline: a record the journal's reader takes, so it stays.
  write_file_atomically(journal, "{\"a\":1}\n{\"a\":2}");
  append_line_durably(journal, "{\"a\":3}");
  EXPECT_EQ(read_file(journal), "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
  std::filesystem::remove_all(dir);
}

// In a child process under a 100-byte file size limit (a full disk as a write sees it): appends
// 30-byte lines until one fails, then replaces a file with 200 bytes. Exit status 0 when both
// failed with OutOfSpace.
int write_under_a_size_limit(const std::string& journal, const std::string& file) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{100, 100};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 0;
    try {
      for (int i = 0; i < 10; ++i) append_line_durably(journal, std::string(29, 'a' + i));
      code |= 1;
    } catch (const OutOfSpace&) {
    }
    try {
      write_file_atomically(file, std::string(200, 'n'));
      code |= 2;
    } catch (const OutOfSpace&) {
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(AtomicFile, AFullDiskLeavesWholeLinesAndTheOldFile) {
  auto dir = std::filesystem::temp_directory_path() / ("dyno_atomic_full_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string journal = (dir / "journal.jsonl").string(), file = (dir / "report.json").string();
  write_file_atomically(file, "old");
  EXPECT_EQ(write_under_a_size_limit(journal, file), 0);
  // Three 30-byte lines fit in 100 bytes; the fourth was cut off where the limit stopped it.
  EXPECT_EQ(read_file(journal), std::string(29, 'a') + "\n" + std::string(29, 'b') + "\n" + std::string(29, 'c') + "\n");
  EXPECT_EQ(read_file(file), "old");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 2) << "a temporary file was left behind";
  std::filesystem::remove_all(dir);
}

TEST(AtomicFile, AnUnwritableFolderIsAClearError) {
  // A folder that cannot be made (its parent is a file): unwritable for root too.
  const auto file = std::filesystem::temp_directory_path() / ("dyno_atomic_file_" + std::to_string(::getpid()));
  write_file_atomically(file.string(), "x");
  const std::string inside = (file / "out" / "r.json").string();
  try {
    write_file_atomically(inside, "x");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).find("[file] cannot create the folder '" + (file / "out").string() + "': "), 0u) << e.what();
  }
  EXPECT_THROW(append_line_durably(inside, "x"), UserError);
  std::filesystem::remove(file);
}

// (As root too: the read is made as a user the file's mode stops.)
TEST(AtomicFile, AnUnreadableFileIsAClearError) {
  const testing::TempDir dir("unreadable_file");
  const std::string path = dir.str() + "/config.json";
  write_file_atomically(path, "{}");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  const int status = testing::status_of_error(dir.str(), [&] { read_file(path); }, "[file] cannot read '" + path + "': Permission denied");
  if (const std::string why = testing::cannot_judge(status); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(status, 0) << "(the child's stderr above)";
}

}  // namespace
}  // namespace dyno
