#include "dyno/workloads/fortunes_corpus.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"

namespace dyno {

std::string fortunes_dir() {
  if (const char* dir = std::getenv("DYNO_FORTUNES_DIR")) return dir;
  return "/usr/share/games/fortunes";
}

CharCorpus build_char_corpus(const std::string& text) {
  // A fixed vocabulary (newline + printable ASCII) so that every size of the corpus trains the
  // same model; any other byte maps to a space.
  CharCorpus corpus;
  corpus.vocabulary.push_back('\n');
  for (int b = 32; b <= 126; ++b) corpus.vocabulary.push_back(static_cast<char>(b));
  std::array<uint8_t, 256> index{};
  index.fill(1);  // ' ' is token 1
  for (size_t i = 0; i < corpus.vocabulary.size(); ++i) index[static_cast<unsigned char>(corpus.vocabulary[i])] = static_cast<uint8_t>(i);
  corpus.tokens.reserve(text.size());
  for (unsigned char c : text) corpus.tokens.push_back(index[c]);
  return corpus;
}

CharCorpus load_fortunes(int64_t max_bytes) {
  namespace fs = std::filesystem;
  const fs::path dir = fortunes_dir();
  const std::string hint = " HINT: it is installed by the Debian package fortunes (`apt-get install fortunes`, or run scripts/setup)";
  if (!fs::is_directory(dir)) throw UserError("data", "'" + dir.string() + "' not found." + hint);
  // A fortune file is a text file with its strfile index, NAME.dat, beside it (what fortune(6)
  // reads); the folder's other files (the indexes, the .u8 links, anything else) are not.
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.is_symlink() || entry.path().has_extension()) continue;
    if (fs::is_regular_file(entry.path().string() + ".dat")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UserError("data", "no fortune files (a text file NAME with its index NAME.dat) in '" + dir.string() + "'." + hint);
  std::string text;
  for (const auto& path : files) {
    std::istringstream in(read_file(path.string()));
    std::string line;
    while (std::getline(in, line)) {
      if (line == "%") line.clear();
      text += line;
      text += '\n';
      if (max_bytes > 0 && static_cast<int64_t>(text.size()) >= max_bytes) break;
    }
    if (max_bytes > 0 && static_cast<int64_t>(text.size()) >= max_bytes) break;
  }
  if (max_bytes > 0 && static_cast<int64_t>(text.size()) > max_bytes) text.resize(static_cast<size_t>(max_bytes));
  return build_char_corpus(text);
}

}  // namespace dyno
