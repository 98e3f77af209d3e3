#include "dyno/reports/scratch_dir.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

bool exists(const std::string& path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0;
}

// TMPDIR set to `dir` for one test's scope.
class TmpdirScope {
 public:
  explicit TmpdirScope(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirScope() {
    if (old_.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

TEST(ScratchDir, IsAFreshFolderUnderTmpdirRemovedWithItsFiles) {
  const auto root = testing::fresh_dir("scratch_dir");
  TmpdirScope tmpdir(root.string());
  std::string first_path;
  {
    ScratchDir first("dyno-check"), second("dyno-check");
    first_path = first.path();
    EXPECT_EQ(first.path().rfind(root.string() + "/dyno-check-", 0), 0u) << first.path();
    EXPECT_NE(first.path(), second.path());
    std::ofstream(first.path() + "/run-0.json") << "{}";
    std::ofstream(first.path() + "/run-0.log") << "log";
  }
  EXPECT_FALSE(exists(first_path));
  EXPECT_TRUE(std::filesystem::is_empty(root));
  testing::remove_tree(root);
}

TEST(ScratchDir, IsRemovedWhenAnErrorLeavesItsScope) {
  const auto root = testing::fresh_dir("scratch_dir_error");
  TmpdirScope tmpdir(root.string());
  try {
    ScratchDir work("dyno-check");
    std::ofstream(work.path() + "/run-0.config.json") << "{}";
    throw std::runtime_error("a measurement failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(std::filesystem::is_empty(root));
  testing::remove_tree(root);
}

TEST(ScratchDir, AFolderThatCannotBeMadeIsAUserErrorNamingIt) {
  TmpdirScope tmpdir("/nonexistent-dyno-tmp");
  EXPECT_EQ(testing::error_of([] { ScratchDir work("dyno-check"); }),
            "[file] cannot create a scratch folder '/nonexistent-dyno-tmp/dyno-check-XXXXXX': No such file or directory (set TMPDIR to a "
            "writable folder)");
}

}  // namespace
}  // namespace dyno
