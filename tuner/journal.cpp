#include "dyno/tuner/journal.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <system_error>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/json_difference.h"
#include "dyno/reports/user_error.h"

namespace dyno {

Journal read_journal(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) return {};
  if (status.type() != std::filesystem::file_type::regular)
    throw UserError("journal", "'" + path + "' is not a file" + (error ? " (" + error.message() + ")" : std::string()) + "; a journal is DIR/journal.jsonl");
  return parse_journal(read_file(path), path);
}

Journal parse_journal(const std::string& text, const std::string& path) {
  Journal journal;
  std::map<int64_t, size_t> written;  // trial id -> its windows as the journal holds them
  std::istringstream lines(text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    const bool last = lines.eof();  // no newline after it: possibly torn by a kill
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + " line " + std::to_string(number);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      if (last) break;  // torn by a kill mid-write: not a finished trial
      throw UserError("journal", where + " is not JSON; the journal is damaged");
    }
    const std::string kind = j.is_object() && j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : "";
    if (kind == "header") {
      if (!journal.header.is_null() || !journal.trials.empty())
        throw UserError("journal", where + ": a header line after the first line; the journal is damaged");
      journal.header = j;
    } else if (kind == "trial") {
      if (!j.contains("trial")) throw UserError("journal", where + ": a trial line without \"trial\"");
      Trial t = trial_from_json(j["trial"], where);
      const size_t as_written = t.windows.size();
      // A journal written before report schema 1.3 pooled a higher level's windows with its lower
      // level's (pooled_with names that trial): the trial keeps its own process's windows only.
      const nlohmann::json pooled_with = j["trial"].value("pooled_with", nlohmann::json());
      if (const auto lower = pooled_with.is_number_integer() ? written.find(pooled_with.get<int64_t>()) : written.end(); lower != written.end()) {
        t.windows.erase(t.windows.begin(), t.windows.begin() + static_cast<std::ptrdiff_t>(std::min(lower->second, as_written)));
        set_throughput_from_windows(t);
        t.objective = t.samples_per_second;
      }
      written[t.id] = as_written;
      journal.trials.push_back(std::move(t));
    } else {
      throw UserError("journal", where + ": expected an object with \"kind\": \"header\" or \"trial\"; got " + line.substr(0, 200));
    }
  }
  return journal;
}

void open_journal(const std::string& dir, const nlohmann::json& header, bool resume) {
  make_folder(dir);
  const std::string journal = dir + "/journal.jsonl";
  const Journal existing = std::filesystem::exists(journal) ? read_journal(journal) : Journal{};
  if (existing.header.is_null() && existing.trials.empty()) {  // new, or killed before its header's newline
    append_line_durably(journal, header.dump());
    return;
  }
  if (!resume) throw UserError("tune", "'" + dir + "' already holds a tuning journal; pass --resume to continue it, or choose another --out");
  const nlohmann::json old = existing.header;
  if (old.is_null()) throw UserError("journal", journal + " has no header line (the first line of a journal `dyno tune` wrote)");
  // What the run was, then how each trial measured (figures measured otherwise are not comparable;
  // a changed base or space also changes the axis order, which is then not the difference named).
  const nlohmann::json made = old.value("measurement", nlohmann::json::object()), making = header.value("measurement", nlohmann::json::object());
  if (!made.is_object()) throw UserError("journal", journal + ": its header's \"measurement\" is " + made.dump() + ", not an object; the journal is damaged");
  auto same = [&](const std::string& field, const nlohmann::json& was, const nlohmann::json& is) {
    if (was != is) throw UserError("tune", "--resume: the journal in '" + dir + "' was made with " + first_difference(field, was, is) +
                                               "; give the same options as the first run, or choose another --out");
  };
  for (const char* key : {"base_config", "space", "strategy", "objective", "seed"}) same(key, old.value(key, nlohmann::json()), header[key]);
  for (const auto& [field, value] : making.items()) same(field, made.value(field, value), value);
}

}  // namespace dyno
