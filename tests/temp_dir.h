// Temporary folders for tests.
#pragma once

#include <unistd.h>

#include <ftw.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace dyno::testing {

// Not std::filesystem::remove_all: libtorch.so exports its own copy of that symbol, which
// crashes when a torch-linked binary calls it (LibTorch 2.11 wheel).
inline void remove_tree(const std::filesystem::path& path) {
  ::nftw(path.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16, FTW_DEPTH | FTW_PHYS);
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("dyno_test_" + name + "_" + std::to_string(::getpid()));
  remove_tree(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh_dir removed when the object goes, however the test ends (a failed ASSERT returns early).
class TempDir {
 public:
  explicit TempDir(const std::string& name) : path_(fresh_dir(name)) {}
  ~TempDir() { remove_tree(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace dyno::testing
