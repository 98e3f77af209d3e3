// Journal: a tuning run's record in journal.jsonl, one flushed JSON object per line: the header
// ({"kind": "header", ...}, written by `dyno tune`), then {"kind": "trial", "trial": {...}} for
// every finished trial. A torn last line (a kill) is ignored; any other unreadable line is an error.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyno/tuner/trial.h"

namespace dyno {

struct Journal {
  nlohmann::json header = nullptr;  // null: no header line
  std::vector<Trial> trials;
};

// A missing file is an empty journal; a path that is not a readable file is a UserError naming it.
Journal read_journal(const std::string& path);
// The same for a journal's text; `path` only names it in errors.
Journal parse_journal(const std::string& text, const std::string& path);

// Starts DIR/journal.jsonl with `header`, or with `resume` checks that the journal there was made
// by the same run (strategy, objective, seed, space, base_config, and each option of the header's
// "measurement" object, {option: value}, that the journal's header records): a UserError names
// the field or option that differs and both values. Without `resume`, an existing journal is an
// error (nothing is overwritten).
void open_journal(const std::string& dir, const nlohmann::json& header, bool resume);

}  // namespace dyno
