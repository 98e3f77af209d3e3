#include "dyno/workloads/gzip_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

// FNV-1a: a name for the cache entry that stays the same from one build to the next.
uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// What the gzip trailer states of the decoded bytes: their CRC-32 and length (modulo 2^32).
struct CacheEntry {
  std::string path;
  uint32_t crc = 0;
  uint64_t decoded_size = 0;
};

// Where the decoded bytes of `source` are kept: one entry per source path (a changed source's entry
// fails the trailer's check and is replaced); nullopt without a cache or for a file that is not gzip.
// POSIX calls, not std::filesystem: libtorch.so exports its own copies of those functions.
std::optional<CacheEntry> cache_entry(const std::string& source) {
  const std::string dir = data_cache_dir();
  struct stat info {};
  char* resolved = dir.empty() ? nullptr : ::realpath(source.c_str(), nullptr);
  const std::string absolute = resolved ? resolved : "";
  std::free(resolved);
  if (absolute.empty() || ::stat(absolute.c_str(), &info) != 0 || info.st_size < 18) return std::nullopt;  // 18: gzip's header and trailer
  std::ifstream in(absolute, std::ios::binary);
  unsigned char magic[2] = {}, trailer[8] = {};
  in.read(reinterpret_cast<char*>(magic), 2);
  in.seekg(-8, std::ios::end);
  in.read(reinterpret_cast<char*>(trailer), 8);
  if (!in || magic[0] != 0x1f || magic[1] != 0x8b) return std::nullopt;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(absolute)));
  std::string name = absolute.substr(absolute.rfind('/') + 1);
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
  const auto little_endian = [&](int at) {
    return uint32_t{trailer[at]} | uint32_t{trailer[at + 1]} << 8 | uint32_t{trailer[at + 2]} << 16 | uint32_t{trailer[at + 3]} << 24;
  };
  return CacheEntry{dir + "/" + name + "-" + hash, little_endian(0), little_endian(4)};
}

// The entry's bytes when their length and CRC-32 are the trailer's (what decoding returns); nullopt otherwise.
std::optional<std::vector<uint8_t>> read_entry(const CacheEntry& entry) {
  struct stat info {};
  if (::stat(entry.path.c_str(), &info) != 0 || static_cast<uint64_t>(info.st_size) != entry.decoded_size) return std::nullopt;
  std::vector<uint8_t> bytes(entry.decoded_size);
  std::ifstream in(entry.path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!in || crc32_z(0, bytes.data(), bytes.size()) != entry.crc) return std::nullopt;
  ::utimensat(AT_FDCWD, entry.path.c_str(), nullptr, 0);  // used now: the pruning keeps it (a read-only cache stays as it is)
  return bytes;
}

std::vector<uint8_t> decode(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) {
    const int err = errno;
    throw UserError("data", "cannot open '" + path + "': " + std::strerror(err));
  }
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    int n = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int err = 0;
      std::string message = gzerror(file, &err);
      gzclose(file);
      throw UserError("data", "'" + path + "' is not a readable gzip file: " + message);
    }
    if (n == 0) break;
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  // A stream cut short reads as an early end; gzclose says so (Z_BUF_ERROR).
  if (gzclose(file) != Z_OK) throw UserError("data", "'" + path + "' is not a readable gzip file: it ends before its gzip stream does (truncated)");
  return out;
}

// A cache entry's name, NAME-<16 hex digits> (cache_entry's), and its writer's temporary file,
// that name and .tmp.PID: nothing else in the folder is the cache's.
bool entry_name(const std::string& name) {
  const auto dash = name.rfind('-');
  return dash != std::string::npos && dash > 0 && name.size() - dash - 1 == 16 &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 1, name.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}
bool temporary_name(const std::string& name) {
  const auto at = name.rfind(".tmp.");
  return at != std::string::npos && at + 5 < name.size() && entry_name(name.substr(0, at)) &&
         std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at) + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

void prune_data_cache(const std::string& dir, uint64_t max_bytes, const std::string& keep) {
  DIR* folder = ::opendir(dir.c_str());
  if (!folder) return;
  struct Entry {
    std::string path;
    struct timespec used;
    uint64_t bytes;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  while (const dirent* e = ::readdir(folder)) {
    const std::string name = e->d_name, path = dir + "/" + name;
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (temporary_name(name)) {
      // A write takes seconds: an hour-old temporary file's writer was killed (on this host or
      // another one sharing the folder).
      if (::time(nullptr) - info.st_mtim.tv_sec > kOrphanAge_s) ::unlink(path.c_str());
      continue;
    }
    if (!entry_name(name)) continue;  // not the cache's
    total += static_cast<uint64_t>(info.st_size);
    if (path != keep) entries.push_back({path, info.st_mtim, static_cast<uint64_t>(info.st_size)});
  }
  ::closedir(folder);
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  for (const Entry& entry : entries) {
    if (total <= max_bytes) break;
    if (::unlink(entry.path.c_str()) == 0) total -= entry.bytes;
  }
}

std::string data_cache_dir() {
  if (const char* dir = std::getenv("DYNO_DATA_CACHE"); dir && *dir) return std::string(dir) == "off" ? "" : dir;
  if (const char* dyno = std::getenv("DYNO_CACHE"); dyno && *dyno) return std::string(dyno) + "/data";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/dyno/data";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/dyno/data";
  return "";
}

std::vector<uint8_t> read_gzip_file(const std::string& path, const std::string& package_hint) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) throw UserError("data", "cannot read '" + path + "': " + std::strerror(errno));
    throw UserError("data", "'" + path + "' not found. HINT: it is installed by the Debian package " + package_hint +
                                " (`apt-get install " + package_hint + "`, or run scripts/setup)");
  }
  const auto entry = cache_entry(path);
  if (entry)
    if (auto cached = read_entry(*entry)) return std::move(*cached);
  std::vector<uint8_t> bytes = decode(path);
  // Stored only when the bytes are what the trailer states (a file with several gzip members, or
  // of 4 GiB or more, is decoded every time).
  if (entry && bytes.size() == entry->decoded_size && crc32_z(0, bytes.data(), bytes.size()) == entry->crc) {
    try {
      write_file_atomically(entry->path, std::string(bytes.begin(), bytes.end()));
      prune_data_cache(data_cache_dir(), kDataCacheBytes, entry->path);
    } catch (const std::exception&) {
      // A cache that cannot be written (read-only home, full disk) is skipped: the next process decodes again.
    }
  }
  return bytes;
}

}  // namespace dyno
