#include "dyno/suite/cli/report_command.h"

#include <ctime>
#include <functional>
#include <filesystem>
#include <map>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/change_points.h"
#include "dyno/reports/perf_history.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/html_report.h"
#include "dyno/reports/json_fields.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/technique_claims.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/commands.h"
#include "dyno/suite/cli/option_checks.h"
#include "dyno/trials/program_report.h"

namespace dyno {
namespace {

nlohmann::json read_json(const std::string& path) { return read_json_file(path, "report"); }

// An array field of objects, each checked by `each` (absent: nothing to check).
void each_object(const JsonFields& parent, const char* key, const std::string& where,
                 const std::function<void(const JsonFields&)>& each) {
  if (!parent.has(key)) return;
  if (!parent.json()[key].is_array()) parent.fail(key, "an array of objects");
  size_t i = 0;
  for (const auto& element : parent.json()[key]) each(JsonFields(element, "report", where + "." + key + "[" + std::to_string(i++) + "]"));
}

// The fields of a tune report the HTML reads, with their types: a file edited by hand or left by
// another program is refused naming the field and the value, before anything is rendered.
void check_tune_report(const nlohmann::json& tune, const std::string& where) {
  const JsonFields r(tune, "report", where);
  // Text the HTML shows: absent, or a string (dyno never writes null there).
  auto texts = [](const JsonFields& object, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (object.json().contains(key) && !object.json()[key].is_string()) object.fail(key, "a string");
  };
  texts(r, {"kind", "workload", "device", "strategy", "objective", "throughput_unit"});
  r.integer("grid_size");
  // Objects dyno always writes (null there is not absent: the HTML would read into it).
  auto present_object = [](const JsonFields& object, const char* key) {
    if (object.json().contains(key) && !object.json()[key].is_object()) object.fail(key, "an object");
  };
  present_object(r, "cost");
  const JsonFields cost = r.object("cost");
  cost.integer("trials");
  cost.number("trial_time_s");
  cost.number("wall_time_s");
  auto trial_fields = [&](const JsonFields& t) {
    t.required_integer("id");  // the charts and the table name every trial by it
    texts(t, {"outcome", "stage", "reason", "changes", "key", "report_path"});
    for (const char* key : {"samples_per_second", "ci_low", "ci_high", "peak_memory_bytes", "estimate", "time_to_target_s"}) t.number(key);
  };
  each_object(r, "trials", where, trial_fields);
  each_object(r, "pareto_front", where, [&](const JsonFields& f) {
    trial_fields(f);
    f.integer("processes");
  });
  if (r.has("best")) trial_fields(r.object("best"));
  for (const char* key : {"profiles", "environment", "throughput_phase"}) r.object(key);
  texts(r.object("environment"), {"cpu_model", "libtorch_version", "dyno_revision"});
  r.object("environment").integer("cores");
  // The profiled runs: each, when there, an object naming its trial, where it ran, and its verdict or why there is none.
  const JsonFields profiles = r.object("profiles");
  for (const char* which : {"best", "default"}) {
    present_object(profiles, which);
    const JsonFields entry = profiles.object(which);
    entry.integer("trial");
    texts(entry, {"at", "outcome", "reason"});
    if (entry.json().contains("trace") && !entry.json()["trace"].is_string() && !entry.json()["trace"].is_null())
      entry.fail("trace", "a string (or null: no trace)");
    texts(entry.object("verdict"), {"kind", "headline", "sentence"});
  }
  // Phase 1's choice: its changes, or null when no trial succeeded.
  if (const JsonFields phase1 = r.object("throughput_phase"); phase1.json().contains("best_changes") && !phase1.json()["best_changes"].is_string() &&
                                                              !phase1.json()["best_changes"].is_null())
    phase1.fail("best_changes", "a string (or null: no trial succeeded)");
  // The verification: the tuned and the default run (each with its time to the target), the
  // speed-up, and per seed the same.
  const JsonFields verification = r.object("verification");
  auto runs = [](const JsonFields& pair, bool required) {
    if (!required && !pair.json().contains("best")) return;
    for (const char* side : {"best", "default"}) {
      if (!pair.json().contains(side) || !pair.json()[side].is_object()) pair.fail(side, "an object (the " + std::string(side) + " configuration's run)");
      pair.object(side).number("time_to_target_s");
    }
    pair.number("speedup");
  };
  runs(verification, false);
  each_object(verification, "seeds", where + ".verification", [&](const JsonFields& seed) {
    seed.integer("seed");
    runs(seed, true);
  });
}

struct ReportArgs {
  std::vector<std::string> targets;
  bool html = false;
  std::string out;
  std::string techniques;
  std::string append;
  std::string revision;
};

// `dyno report history FILE [--append CHECK.json --revision REV] [--html -o OUT]`.
int run_history(const ReportArgs& a) {
  if (a.targets.size() != 2) throw UserError("report", "usage: dyno report history FILE [--append CHECK.json --revision REV] [--html [-o OUT]]");
  const std::string& path = a.targets[1];
  refuse_writing_over("report", {{"--out", a.html ? (a.out.empty() ? path + ".html" : a.out) : ""}}, {{"the history", path}, {"the check result (--append)", a.append}});
  if (a.append.empty() && !a.revision.empty())
    throw UserError("report", "--revision goes with --append CHECK.json (the revision that check measured)");
  if (!a.append.empty()) {
    if (a.revision.empty()) throw UserError("report", "--append needs --revision REV (the revision the check measured)");
    if (!valid_utf8(a.revision)) throw UserError("report", "--revision: not valid UTF-8; give the revision as text (a commit hash, a tag)");
    char now[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    const HistoryEntry entry = history_entry_from_check(read_json(a.append), a.revision, now);
    append_history(path, entry);
    std::cout << "appended " << entry.revision << " " << entry.metric << " " << format_fixed(entry.value, 1) << " to " << path << "\n";
  }
  const auto entries = read_history(path);
  if (a.html) {
    const std::string out = a.out.empty() ? path + ".html" : a.out;
    write_file_atomically(out, history_html(entries));
    std::cout << "wrote " << out << "\n";
  }
  for (const auto& [name, points] : history_series(entries)) {
    std::vector<double> values;
    for (const auto* p : points) values.push_back(p->value);
    const auto changes = change_points(values);
    std::cout << name << ": " << points.size() << " revisions, "
              << changes.size() << " change point" << (changes.size() == 1 ? "" : "s") << "\n";
    for (const auto& c : changes)
      std::cout << "  at " << points[c.index]->revision << ": " << format_fixed(c.before, 1) << " -> " << format_fixed(c.after, 1) << " ("
                << format_fixed(100 * (c.after / c.before - 1), 1) << "%, p " << format_fixed(c.p_value, 3) << ")\n";
  }
  return 0;
}

int run_report(const ReportArgs& a) {
  if (a.targets.empty()) throw UserError("report", "give `techniques RESULT.json`, `history FILE`, or a tuning folder DIR with --html");
  if (!a.out.empty() && !a.html) throw UserError("report", "--out '" + a.out + "' is where --html writes; pass --html too");
  if (a.targets[0] == "history") return run_history(a);
  if (a.targets[0] == "techniques") {
    if (a.targets.size() != 2) throw UserError("report", "usage: dyno report techniques RESULT.json (from dyno_bench_techniques --benchmark_out)");
    std::cout << technique_table_text(technique_rows(read_json(a.targets[1]), "'" + a.targets[1] + "'"));
    return 0;
  }
  const std::string dir = a.targets[0];
  if (std::filesystem::is_regular_file(dir)) {  // a tune's report.json names its folder; another file is none of report's
    const std::string folder = std::filesystem::path(dir).parent_path().empty() ? "." : std::filesystem::path(dir).parent_path().string();
    throw UserError("report", "'" + dir + "' is a file; dyno report takes a tuning folder (" +
                                  (std::filesystem::path(dir).filename() == "report.json" ? "dyno report " + folder + " --html" : std::string("dyno report DIR --html")) +
                                  "), history FILE or techniques FILE");
  }
  if (a.targets.size() > 1) throw UserError("report", "one tuning folder at a time: dyno report DIR --html (got '" + a.targets[1] + "' too)");
  if (!a.html) throw UserError("report", "for a tuning folder, pass --html (dyno report " + dir + " --html)");
  const std::string report_path = dir + "/report.json";
  if (!std::filesystem::exists(report_path))
    throw UserError("report", "'" + report_path + "' does not exist; " +
                                  (std::filesystem::exists(dir + "/journal.jsonl") || std::filesystem::exists(dir + "/throughput/journal.jsonl")
                                       ? "the tune in '" + dir + "' has not finished (its journal is there): run it again with --resume to finish it"
                                       : std::string("give the --out folder of a dyno tune run")));
  nlohmann::json tune = read_json(report_path);
  check_schema_version(tune, "'" + report_path + "'");
  const std::string kind = JsonFields(tune, "report", "'" + report_path + "'").text("kind", "?");
  if (kind != "tune") throw UserError("report", "'" + report_path + "' is not a tuning report (kind " + kind + ")");
  check_tune_report(tune, "'" + report_path + "'");
  std::map<int64_t, nlohmann::json> trial_reports;
  for (const auto& t : tune.value("trials", nlohmann::json::array())) {
    // The path as dyno tune wrote it is relative to where it ran: the same file under DIR comes
    // first (a moved folder, or dyno report run elsewhere).
    std::string path = t.value("report_path", "");
    if (const size_t trials_at = path.rfind("trials/"); trials_at != std::string::npos && (trials_at == 0 || path[trials_at - 1] == '/'))
      if (const std::string here = dir + "/" + path.substr(trials_at); std::filesystem::exists(here)) path = here;
    if (path.empty() || !std::filesystem::exists(path)) continue;
    try {
      // A program's trial: its report's lines (--command), whose curves the charts read.
      if (path.size() > 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0) {
        trial_reports[t.value("id", int64_t{0})] = program_report_curves(read_program_report(path, 0, nullptr, true));
        continue;
      }
      nlohmann::json r = read_json(path);
      report_from_json(r, path);  // every field the charts read, with its type
      trial_reports[t.value("id", int64_t{0})] = r;
    } catch (const UserError&) {
      // A trial that crashed mid-write, or a report that is not one: its row still shows the outcome.
    }
  }
  nlohmann::json techniques = nullptr;
  std::string techniques_path = a.techniques;
  if (techniques_path.empty() && std::filesystem::exists(dir + "/techniques.json")) techniques_path = dir + "/techniques.json";
  if (!techniques_path.empty()) {
    techniques = read_json(techniques_path);
    technique_rows(techniques, "'" + techniques_path + "'");  // another file's content is refused, naming it, not left out
  }
  const std::string out = a.out.empty() ? dir + "/report.html" : a.out;
  refuse_writing_over("report", {{"--out", out}}, {{"the tuning report", report_path}, {"the journal", dir + "/journal.jsonl"},
                                                 {"the technique benchmark result", techniques_path}, {"the best configuration", dir + "/best-config.json"}});
  std::string html;
  try {
    html = render_html_report(tune, trial_reports, techniques);
  } catch (const nlohmann::json::exception& e) {  // a nested field check_tune_report does not reach
    throw UserError("report", "'" + report_path + "' has a field of a type dyno does not write: " + json_error_text(e));
  }
  write_file_atomically(out, html);
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "render results: `techniques RESULT.json` as a table, `history FILE` with its change points, or a tuning folder as HTML (--html)");
  cmd->add_option("targets", a->targets, "`techniques RESULT.json`, `history FILE` (a gate's JSON-lines history), or DIR (the --out folder of dyno tune)");
  cmd->add_option("--append", a->append, "history: append this `dyno check --out` result first")->check(not_empty());
  cmd->add_option("--revision", a->revision, "history: the revision --append's check measured")->check(not_empty());
  cmd->add_flag("--html", a->html, "write one self-contained HTML file with SVG charts");
  cmd->add_option("--out,-o", a->out, "HTML path (default DIR/report.html for a tuning folder, FILE.html for a history)")->check(file_to_write());
  cmd->add_option("--techniques", a->techniques, "a dyno_bench_techniques JSON result to include (default DIR/techniques.json if present)")->check(not_empty());
  register_command_handler(cmd, [a] { return run_report(*a); });
}

}  // namespace dyno
