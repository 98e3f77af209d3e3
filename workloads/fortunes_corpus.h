// Reads the `fortunes` Debian package's fortune files (/usr/share/games/fortunes: each text file
// with its index NAME.dat beside it) into one byte corpus for a character-level language model:
// the '%' separator lines become blank lines.
// DYNO_FORTUNES_DIR overrides the folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dyno {

inline constexpr int64_t kCharVocabularySize = 96;  // newline + printable ASCII

struct CharCorpus {
  std::vector<uint8_t> tokens;  // indices into vocabulary
  std::string vocabulary;       // token i is the byte vocabulary[i]; always kCharVocabularySize long
};

std::string fortunes_dir();
CharCorpus load_fortunes(int64_t max_bytes = 0);
CharCorpus build_char_corpus(const std::string& text);

}  // namespace dyno
