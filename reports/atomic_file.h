// Writes a whole file so that readers only ever see the old or the new content: the text goes
// to a temporary file in the same directory, is flushed to disk, then renamed over the target. A
// symbolic link is written through (the file it names is replaced; the link stays), and what is
// not a file (/dev/null, a FIFO) is written to as it is.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

void write_file_atomically(const std::string& path, const std::string& content);

// The same, for content too large to hold twice (a training state): `content` gives it in pieces,
// calling the writer once per piece. Once a piece cannot be written, the writer drops it and every
// later one and returns false (no exception: it may be called from code that cannot pass one on,
// such as LibTorch's serializer, whose own error path aborts), and the file's error (a full disk:
// OutOfSpace) is thrown once `content` returns or throws.
using PieceWriter = std::function<bool(const void* data, size_t size)>;
void write_file_atomically(const std::string& path, const std::function<void(const PieceWriter& write)>& content);

// Creates a folder and its parents when missing; one that cannot be made (a file in the way, no
// permission, a full disk) is a UserError naming it and the reason.
void make_folder(const std::string& path);
// Whether `path` names a folder: an existing one, or a name ending in '/'.
bool names_a_folder(const std::string& path);

// Appends one line and flushes it to disk before returning (journals). A last line without its
// newline (a kill mid-write) is first completed when it is whole JSON, else cut off: readers
// ignore a torn line. One writer at a time.
void append_line_durably(const std::string& path, const std::string& line);

// A path as one name: absolute, links resolved, no "." or trailing '/' (however it was spelled).
std::string canonical_path(const std::string& path);

// No file dyno reads is larger than `most_bytes`: a stream that never ends (/dev/zero) is refused
// there instead of filling the memory.
std::string read_file(const std::string& path, size_t most_bytes = size_t{256} << 20);

// Reads and parses a JSON file; throws UserError("<where>", "'<path>' is not valid JSON: ...").
nlohmann::json read_json_file(const std::string& path, const std::string& where);
// The parse of read_json_file, for text read otherwise: `path` names where the text came from.
nlohmann::json parse_json_text(const std::string& text, const std::string& path, const std::string& where);
// An nlohmann error's text for a user: without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const nlohmann::json::exception& error);

}  // namespace dyno
