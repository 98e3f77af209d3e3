// Reads a gzip-compressed data file whole. Decoding Fashion-MNIST's training images takes about
// 0.2 s, a third of a short run's start, and the tuner starts one process per trial, so the decoded
// bytes are kept in a data cache and read from there while the source file is unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dyno {

// The data cache's folder: DYNO_DATA_CACHE ("off": no cache), else $DYNO_CACHE/data (the folder
// scripts/setup keeps LibTorch in), else $XDG_CACHE_HOME/dyno/data, else $HOME/.cache/dyno/data;
// empty when there is none.
std::string data_cache_dir();

// The decoded content of the gzip file at `path` (a file that is not gzip is read as it is).
// Throws UserError with the install hint of `package_hint` when it is missing, and UserError when
// it is not readable. Read from the data cache when that holds the file's decoded bytes (an entry
// for its absolute path with the length and CRC-32 its gzip trailer states); otherwise decoded and,
// where the cache can be written, stored there atomically for the next process (and the cache
// pruned, below). A read from the cache marks the entry used (its modification time).
std::vector<uint8_t> read_gzip_file(const std::string& path, const std::string& package_hint);

// The data cache's bound: entries take at most this many bytes, the least recently used removed first.
inline constexpr uint64_t kDataCacheBytes = uint64_t{4} << 30;

// Removes from the cache folder `dir` what a writer killed mid-way left (an entry's `.tmp.PID` file
// older than kOrphanAge_s) and, while its entries take more than `max_bytes`, the least recently
// used one other than `keep` (an entry just written). Only the cache's names (NAME-<16 hex
// digits>, and those with .tmp.PID) are touched: other files in the folder stay, as does what
// cannot be listed or removed.
inline constexpr long kOrphanAge_s = 3600;
void prune_data_cache(const std::string& dir, uint64_t max_bytes, const std::string& keep);

}  // namespace dyno
