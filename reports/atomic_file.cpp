#include "dyno/reports/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "dyno/reports/user_error.h"
#include "dyno/reports/utf8_text.h"

namespace dyno {
namespace {

// `action` ("write", "create", "open") of `path` failed with `err`: OutOfSpace for a full disk, a
// quota or a file size limit, else a UserError.
[[noreturn]] void fail(const std::string& action, const std::string& path, int err) {
  const std::string message = "cannot " + action + " '" + path + "': " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT || err == EFBIG)
    throw OutOfSpace("file", message + " (the disk is full or a size limit was reached; nothing was left half-written)");
  throw UserError("file", message);
}

// Writes all `size` bytes; 0, or the errno of the write that failed.
int write_bytes(int fd, const void* data, size_t size) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

void write_all(int fd, const std::string& content, const std::string& path) {
  if (const int err = write_bytes(fd, content.data(), content.size())) fail("write", path, err);
}

// A delayed allocation can fail only when the data reaches the disk.
void sync_or_throw(int fd, const std::string& path) {
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) fail("write", path, errno);
}

void create_parent(const std::string& path) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) make_folder(target.parent_path().string());
}

// The size of the file's whole lines: a last line without its newline (a kill mid-write) is a torn
// record, which readers ignore; an append after it would glue the next record onto it.
off_t whole_lines_size(int fd, off_t size) {
  char buffer[4096];
  for (off_t end = size; end > 0;) {
    const off_t start = end > static_cast<off_t>(sizeof buffer) ? end - static_cast<off_t>(sizeof buffer) : 0;
    const ssize_t n = ::pread(fd, buffer, static_cast<size_t>(end - start), start);
    if (n != end - start) return size;  // unreadable: leave the file as it is
    for (ssize_t i = n - 1; i >= 0; --i)
      if (buffer[i] == '\n') return start + i + 1;
    end = start;
  }
  return 0;
}

// Writes `content` into what `path` names as it is (no temporary file, no rename).
void write_in_place(const std::string& path, const std::function<void(const PieceWriter& write)>& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail("open", path, errno);
  int write_error = 0;
  try {
    content([&](const void* data, size_t size) {
      if (write_error == 0) write_error = write_bytes(fd, data, size);
      return write_error == 0;
    });
  } catch (...) {
    ::close(fd);
    if (write_error) fail("write", path, write_error);
    throw;
  }
  ::close(fd);
  if (write_error) fail("write", path, write_error);
}

}  // namespace

void make_folder(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) fail("create the folder", path, error.value());
}

bool names_a_folder(const std::string& path) {
  struct stat s {};
  return !path.empty() && (path.back() == '/' || (::stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode)));
}

void write_file_atomically(const std::string& given_path, const std::function<void(const PieceWriter& write)>& content) {
  // A symbolic link is written through: the file it names is replaced and the link stays. What is
  // not a file (a device, as /dev/null; a FIFO) is written to as it is: there is nothing to replace.
  std::string path = given_path;
  struct stat s {};
  if (::lstat(given_path.c_str(), &s) == 0 && S_ISLNK(s.st_mode)) path = canonical_path(given_path);
  if (::stat(path.c_str(), &s) == 0 && !S_ISREG(s.st_mode) && !S_ISDIR(s.st_mode)) {
    write_in_place(path, content);
    return;
  }
  create_parent(path);
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENOSPC || errno == EDQUOT) fail("write", temp, errno);
    throw UserError("file", "cannot create '" + temp + "': " + std::strerror(errno));
  }
  int write_error = 0;
  const PieceWriter write = [&](const void* data, size_t size) {
    if (write_error == 0) write_error = write_bytes(fd, data, size);
    return write_error == 0;
  };
  try {
    try {
      content(write);
    } catch (...) {
      if (write_error) fail("write", temp, write_error);  // the file's error, not what the content made of it
      throw;
    }
    if (write_error) fail("write", temp, write_error);
    sync_or_throw(fd, temp);
    if (::close(fd) != 0) {
      fd = -1;
      fail("write", temp, errno);
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    throw UserError("file", "cannot rename '" + temp + "' to '" + path + "': " + std::strerror(err));
  }
  // The rename lasts a power cut once the folder is on disk too (where a folder cannot be synced, as it stands).
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&content](const PieceWriter& write) { write(content.data(), content.size()); });
}

void append_line_durably(const std::string& path, const std::string& line) {
  create_parent(path);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENOSPC || errno == EDQUOT) fail("write", path, errno);
    throw UserError("file", "cannot open '" + path + "': " + std::strerror(errno));
  }
  struct stat before {};
  ::fstat(fd, &before);
  try {
    if (const off_t whole = whole_lines_size(fd, before.st_size); whole < before.st_size) {
      // A last record that is whole but for its newline (the journal's reader takes it) gets the
      // newline; anything else there is cut off.
      std::string tail(static_cast<size_t>(before.st_size - whole), '\0');
      if (::pread(fd, tail.data(), tail.size(), whole) == static_cast<ssize_t>(tail.size()) && nlohmann::json::accept(tail)) {
        write_all(fd, "\n", path);
        before.st_size += 1;
      } else {
        if (::ftruncate(fd, whole) != 0) fail("write", path, errno);
        before.st_size = whole;
      }
    }
    write_all(fd, line + "\n", path);
    sync_or_throw(fd, path);
  } catch (...) {
    // A part of the line may have been written: cut it off, so that the file holds whole lines only.
    if (::ftruncate(fd, before.st_size) == 0) ::fsync(fd);
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::string canonical_path(const std::string& path) {
  std::error_code error;
  std::string text = std::filesystem::weakly_canonical(std::filesystem::absolute(path), error).string();
  if (error) text = std::filesystem::absolute(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

std::string read_file(const std::string& path, size_t most_bytes) {
  struct stat s {};
  if (::stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode)) throw UserError("file", "cannot read '" + path + "': it is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("file", "cannot read '" + path + "': " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > most_bytes)
      throw UserError("file", "cannot read '" + path + "': it is larger than " + std::to_string(most_bytes >> 20) + " MiB, which no file dyno reads is");
  }
  return text;
}

nlohmann::json read_json_file(const std::string& path, const std::string& where) { return parse_json_text(read_file(path), path, where); }

nlohmann::json parse_json_text(const std::string& text, const std::string& path, const std::string& where) {
  // A key given twice in one object: the parser would keep the last silently ({"lr": 0.1, "lr": 50}).
  std::vector<std::set<std::string>> keys;  // of each object open around the parser
  const auto once_each = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    // Nesting no file of dyno's has: writing such a value out (in an error) would exhaust the stack.
    if (depth > 256) throw UserError(where, "'" + path + "' nests arrays or objects deeper than 256 levels; no file dyno reads does");
    if (event == nlohmann::json::parse_event_t::object_start) keys.emplace_back();
    if (event == nlohmann::json::parse_event_t::object_end) keys.pop_back();
    if (event == nlohmann::json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw UserError(where, "'" + path + "' gives the key " + parsed.dump() + " twice in one object; give each key once");
    return true;
  };
  try {
    return nlohmann::json::parse(text, once_each);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond a double's range
    throw UserError(where, "'" + path + "' is not valid JSON: " + json_error_text(e));
  }
}

std::string json_error_text(const nlohmann::json::exception& error) {
  const std::string what = error.what();
  const size_t end = what.find("] ");
  // (The parser quotes what it last read, invalid UTF-8 included: the message stays valid UTF-8.)
  return utf8_text(what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2) : what);
}

}  // namespace dyno
