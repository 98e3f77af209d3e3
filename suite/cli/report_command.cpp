#include "suite/cli/report_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "reports/atomic_file.h"
#include "reports/html_report.h"
#include "reports/run_report.h"
#include "reports/technique_claims.h"
#include "reports/user_error.h"
#include "suite/cli/commands.h"

namespace dyno {
namespace {

nlohmann::json read_json(const std::string& path) { return read_json_file(path, "report"); }

struct ReportArgs {
  std::vector<std::string> targets;
  bool html = false;
  std::string out;
  std::string techniques;
};

int run_report(const ReportArgs& a) {
  if (a.targets.empty()) throw UserError("report", "give `techniques RESULT.json` or a tuning folder DIR with --html");
  if (a.targets[0] == "techniques") {
    if (a.targets.size() != 2) throw UserError("report", "usage: dyno report techniques RESULT.json (from dyno_bench_techniques --benchmark_out)");
    std::cout << technique_table_text(technique_rows(read_json(a.targets[1])));
    return 0;
  }
  const std::string dir = a.targets[0];
  if (!a.html) throw UserError("report", "for a tuning folder, pass --html (dyno report " + dir + " --html)");
  const std::string report_path = dir + "/report.json";
  if (!std::filesystem::exists(report_path))
    throw UserError("report", "'" + report_path + "' does not exist; give the --out folder of a dyno tune run");
  nlohmann::json tune = read_json(report_path);
  check_schema_version(tune, "'" + report_path + "'");
  if (tune.value("kind", "") != "tune") throw UserError("report", "'" + report_path + "' is not a tuning report (kind " + tune.value("kind", "?") + ")");
  std::map<int64_t, nlohmann::json> trial_reports;
  for (const auto& t : tune["trials"]) {
    const std::string path = t.value("report_path", "");
    if (path.empty() || !std::filesystem::exists(path)) continue;
    try {
      nlohmann::json r = read_json(path);
      check_schema_version(r, path);
      trial_reports[t.value("id", int64_t{0})] = r;
    } catch (const UserError&) {
      // A trial that crashed mid-write has no report: its row still shows the outcome.
    }
  }
  nlohmann::json techniques = nullptr;
  std::string techniques_path = a.techniques;
  if (techniques_path.empty() && std::filesystem::exists(dir + "/techniques.json")) techniques_path = dir + "/techniques.json";
  if (!techniques_path.empty()) techniques = read_json(techniques_path);
  const std::string out = a.out.empty() ? dir + "/report.html" : a.out;
  write_file_atomically(out, render_html_report(tune, trial_reports, techniques));
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "render results: `techniques RESULT.json` as a table, or a tuning folder as HTML (--html)");
  cmd->add_option("targets", a->targets, "`techniques RESULT.json`, or DIR (the --out folder of dyno tune)");
  cmd->add_flag("--html", a->html, "write one self-contained HTML file with SVG charts");
  cmd->add_option("--out,-o", a->out, "HTML path (default DIR/report.html)");
  cmd->add_option("--techniques", a->techniques, "a dyno_bench_techniques JSON result to include (default DIR/techniques.json if present)");
  register_command_handler(cmd, [a] { return run_report(*a); });
}

}  // namespace dyno
