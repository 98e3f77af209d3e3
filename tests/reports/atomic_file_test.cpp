#include "reports/atomic_file.h"

#include <filesystem>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace dyno
