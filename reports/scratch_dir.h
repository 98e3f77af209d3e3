// A private folder for one command's intermediate files (`dyno check`'s measurement runs): made
// fresh under $TMPDIR (else /tmp) with a unique name, and removed with its files when the object
// goes, on success and on an error alike.
#pragma once

#include <string>

namespace dyno {

class ScratchDir {
 public:
  // `prefix` starts the folder's name ("dyno-check" -> /tmp/dyno-check-Ab12Cd); a folder that
  // cannot be made is a UserError naming it and the reason.
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace dyno
