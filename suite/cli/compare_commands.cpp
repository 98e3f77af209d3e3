#include "dyno/suite/cli/compare_commands.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numeric>
#include <sstream>
#include <tuple>

#include <CLI/CLI.hpp>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/check_baseline.h"
#include "dyno/reports/child_process.h"
#include "dyno/reports/comparison.h"
#include "dyno/reports/figure_set.h"
#include "dyno/reports/knob.h"
#include "dyno/reports/machine_fingerprint.h"
#include "dyno/reports/quantity.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/run_report.h"
#include "dyno/reports/scratch_dir.h"
#include "dyno/reports/statistics.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/cli/commands.h"
#include "dyno/suite/cli/option_checks.h"
#include "dyno/suite/device_backend.h"
#include "dyno/suite/engine.h"
#include "dyno/suite/environment.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

constexpr double kRunFigureQuantile = 0.9;  // which window quantile a check run reports (see measure_once)
constexpr const char* kRunFigure = "window_p90";  // its name in baselines, so figures of another definition are refused

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, std::abs(100 * v) < 1e6 ? "%+.2f%%" : "%+.3g%%", 100 * v);  // a figure off by orders of magnitude stays readable
  return b;
}

struct MetricVerdict {
  std::string metric;
  ShiftEstimate shift;
  std::string verdict;
};

std::string markdown(const std::vector<MetricVerdict>& rows, const CompareOptions& o, const std::vector<std::string>& warnings,
                     const std::string& title) {
  std::ostringstream md;
  char confidence[32];
  std::snprintf(confidence, sizeof confidence, "%.4g", 100 * o.confidence);
  md << "### " << title << "\n\n"
     << "| metric | regression (HL) | " << confidence << "% interval | p (one-sided) | n (base/cand) | verdict |\n"
     << "|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    md << "| " << r.metric << " | " << pct(r.shift.regression) << " | [" << pct(r.shift.regression_low) << ", "
       << pct(r.shift.regression_high) << "] | " << r.shift.p_value << " | " << r.shift.baseline_count << "/" << r.shift.candidate_count
       << " | **" << r.verdict << "** |\n";
  md << "\nthreshold " << pct(o.threshold).substr(1) << ", alpha " << o.alpha
     << "; FAIL = significant and at least the threshold, PASS = interval entirely below the threshold.\n";
  for (const auto& r : rows)
    if (r.shift.short_of_confidence)
      md << "\n> " << r.metric << ": too few repetitions for a " << o.confidence * 100 << "% interval (" << r.shift.baseline_count << "/"
         << r.shift.candidate_count << "): the interval shown is their whole range, and it gives no PASS; add repetitions\n";
  for (const auto& w : warnings) md << "\n> warning: environments differ: " << w << "\n";
  return md.str();
}

int exit_status(const std::vector<MetricVerdict>& rows, bool strict) {
  bool inconclusive = false;
  for (const auto& r : rows) {
    if (r.verdict == "FAIL") return 1;
    inconclusive |= r.verdict == "INCONCLUSIVE";
  }
  return inconclusive ? (strict ? 1 : 2) : 0;
}

struct CompareArgs {
  std::string baseline, candidate, threshold = "5%", markdown_path;
  double alpha = 0.01;
  bool strict = false;
};

int run_compare(const CompareArgs& a) {
  refuse_writing_over("compare", {{"--markdown", a.markdown_path}}, {{"the baseline", a.baseline}, {"the candidate", a.candidate}});
  CompareOptions o;
  o.threshold = parse_fraction(a.threshold, "compare", "--threshold");
  o.alpha = a.alpha;
  const FigureSet base = load_figure_set(a.baseline), cand = load_figure_set(a.candidate);
  const auto settings = config_differences(base.config, cand.config, "compare");  // (another workload: refused)
  if (base.metrics.empty())
    throw UserError("compare", "'" + a.baseline + "' holds no figures to compare against" + (base.errors.empty() ? "" : ": " + base.errors.begin()->second));
  if (!base.figure.empty() && !cand.figure.empty() && base.figure != cand.figure)
    throw UserError("compare", "'" + a.baseline + "' holds per-run figures of kind \"" + base.figure + "\" and '" + a.candidate + "' of kind \"" +
                                   cand.figure + "\": they measure different things; " +
                                   (base.figure == "window" || cand.figure == "window" ? std::string("compare run reports with run reports, and baselines or check results with each other")
                                                                                     : std::string("re-record the older with this dyno")));
  std::vector<MetricVerdict> rows;
  // A baseline metric the candidate lacks is no pass: a benchmark that errored there fails the
  // comparison, one that is gone leaves it inconclusive.
  std::vector<std::string> absent;
  bool errored = false;
  for (const auto& [name, b] : base.metrics) {
    auto it = cand.metrics.find(name);
    // A benchmark that errored in any of the candidate's repetitions fails, whatever the others measured.
    const auto error = cand.errors.find(name.substr(0, name.rfind(' ')));
    if (it == cand.metrics.end() || error != cand.errors.end()) {
      errored |= error != cand.errors.end();
      absent.push_back(name + (error != cand.errors.end() ? ": errored in the candidate (" + error->second + "): FAIL"
                                                          : ": not in the candidate: INCONCLUSIVE"));
      continue;
    }
    if (b.unit != it->second.unit)
      throw UserError("compare", name + " is in " + b.unit + " in '" + a.baseline + "' and in " + it->second.unit + " in '" + a.candidate +
                                     "': compare figures of one unit");
    for (const auto& [side, file, n] : {std::tuple{"baseline", a.baseline, b.values.size()}, std::tuple{"candidate", a.candidate, it->second.values.size()}})
      if (n < 2)
        throw UserError("compare", name + ": the " + side + " '" + file + "' holds " + std::to_string(n) + " figure" + (n == 1 ? "" : "s") +
                                       "; a comparison needs at least 2 on each side (" +
                                       (base.kind == "run" ? "a run report's windows: raise max_steps above warmup_steps, or lower log_every_steps"
                                                           : "repetitions: --benchmark_repetitions, or more check runs") + ")");
    MetricVerdict row{name, estimate_shift(b.values, it->second.values, b.higher_is_better, o.confidence), ""};
    row.verdict = verdict(row.shift, o);
    rows.push_back(row);
  }
  if (rows.empty() && !errored)
    throw UserError("compare", "'" + a.baseline + "' and '" + a.candidate + "' share no metric (" + base.kind + " vs " + cand.kind + ")");
  // Several metrics (a benchmark file's) are several tests: a FAIL needs Holm's level among them.
  std::vector<double> p_values;
  for (const auto& row : rows) p_values.push_back(row.shift.p_value);
  const std::vector<bool> rejected = holm_rejections(p_values, o.alpha);
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].verdict == "FAIL" && !rejected[i]) rows[i].verdict = "INCONCLUSIVE";
  const auto warnings = environment_differences(base.environment, cand.environment);
  for (const auto& w : warnings) std::cerr << "dyno compare: warning: environments differ: " << w << "\n";
  std::string md = markdown(rows, o, warnings, "dyno compare: " + a.candidate + " against " + a.baseline);
  for (const auto& line : absent) md += "\n> " + line + "\n";
  for (const auto& s : settings) md += "\n> settings differ: " + s + "\n";  // (what the comparison is of, when intended)
  if (rows.size() > 1) {
    md += "\n> " + std::to_string(rows.size()) + " metrics: a FAIL needs Holm's step-down level among them (the smallest p below alpha/" +
          std::to_string(rows.size()) + "), so that --alpha bounds the chance of any false FAIL\n";
    // The smallest p each metric's repetitions can give (every candidate figure worse than every
    // baseline one): when every one is above alpha/m, no metric can FAIL, and the summary says so.
    std::vector<double> reachable;  // each row's smallest p, once
    for (const auto& row : rows) {
      std::vector<double> low(static_cast<size_t>(row.shift.baseline_count)), high(static_cast<size_t>(row.shift.candidate_count));
      std::iota(low.begin(), low.end(), 1.0);
      std::iota(high.begin(), high.end(), 1000.0);
      reachable.push_back(estimate_shift(high, low, true, o.confidence).p_value);
    }
    const size_t telling = static_cast<size_t>(std::min_element(reachable.begin(), reachable.end()) - reachable.begin());
    const auto most_telling = rows.begin() + static_cast<std::ptrdiff_t>(telling);
    const double smallest_p = reachable[telling];
    if (smallest_p >= o.alpha / static_cast<double>(rows.size())) {
      const std::string why = std::to_string(most_telling->shift.baseline_count) + " and " + std::to_string(most_telling->shift.candidate_count) +
                              " repetitions can give p no smaller than " + format_fixed(smallest_p, 5) + ", above alpha/" + std::to_string(rows.size()) +
                              ": no metric can FAIL here; give more repetitions";
      md += "\n> " + why + "\n";
      std::cerr << "dyno compare: warning: " << why << "\n";
    }
  }
  if (base.kind == "run" || cand.kind == "run")
    md += "\n> a run report's figures are the windows of one process: they show the noise within it, not the larger noise between "
          "processes, so the verdict says whether these two runs differ, not whether what they ran does; `dyno check` repeats each "
          "in fresh processes\n";
  std::cout << md;
  if (!a.markdown_path.empty()) write_file_atomically(a.markdown_path, md);
  const int status = exit_status(rows, a.strict);
  if (errored) return 1;
  return status == 0 && !absent.empty() ? (a.strict ? 1 : 2) : status;
}

struct CheckArgs {
  std::string baseline, against, threshold = "5%", markdown_path, out, record;
  std::string workload;
  std::string pairing = "auto";
  std::vector<std::string> settings, candidate_settings;
  double alpha = 0.01;
  int runs = 10;
  bool strict = false;
  bool no_rerun = false;
  double max_seconds = 270;
};

// One measurement: a fresh `dyno train` process of `config`. Its figure is the 90th percentile of
// the run's window throughputs: interference on a shared machine (another tenant, a daemon, a
// frequency dip) only ever slows a window down, so the fast end of a run is its undisturbed speed
// and moves less from run to run than the median (docs/measurement.md has the figures). A
// slowdown in dyno's own code slows every window alike.
// `cpus`: the CPUs the run may use (empty: any).
// A candidate's run that fails (a crash, a timeout, an error) fails the gate: the candidate cannot
// train what the baseline trained. A failure on the recording or base side is an error (exit 2).
std::atomic<bool> check_interrupted{false};  // SIGINT, SIGTERM or SIGHUP: stop the measurement run, record nothing
struct CheckInterrupted {};
struct CandidateFailed {
  std::string reason;
};
double measure_once(const std::string& dyno, const nlohmann::json& config, const std::string& dir, int index,
                    const std::vector<int>& cpus = {}, bool candidate = false) {
  const std::string cfg = dir + "/run-" + std::to_string(index) + ".config.json", out = dir + "/run-" + std::to_string(index) + ".json",
                    log = dir + "/run-" + std::to_string(index) + ".log";
  // A measurement run saves no training state: it would go where the config says, a baseline's own
  // file included.
  nlohmann::json measured = config;
  if (measured.contains("save_state")) measured["save_state"] = "";
  if (measured.contains("save_every_steps")) measured["save_every_steps"] = 0;
  write_file_atomically(cfg, measured.dump(2));
  ChildOptions options;
  options.cpus = cpus;
  options.own_job = true;  // one process, whatever job check runs in
  ChildResult r = run_child({dyno, "train", "--config", cfg, "--out", out, "--no-progress"}, log, 300, &check_interrupted, options);
  if (r.interrupted) throw CheckInterrupted{};
  // The candidate's run that gives no figure, however, fails the gate (the same config gave the
  // baseline its figures); the recording or base side's is an error.
  auto failed = [&](const std::string& reason) {
    if (candidate) throw CandidateFailed{reason};
    throw UserError("check", reason);
  };
  if (r.signaled || r.timed_out || r.exit_code != 0)
    failed("measurement run " + std::to_string(index) + " of '" + dyno + "' failed: " +
           (r.timed_out ? std::string("timed out")
            : r.signaled ? "signal " + std::to_string(r.signal)
                         : "exit status " + std::to_string(r.exit_code) + (error_line_of(log).empty() ? "" : ": " + error_line_of(log))));
  if (!std::filesystem::exists(out))
    failed("measurement run " + std::to_string(index) + " of '" + dyno + "' exited 0 without writing its report; is it a dyno binary?");
  const RunReport report = read_report(out);
  if (report.throughput_windows.empty())
    failed("measurement run " + std::to_string(index) + " has no measurement windows: raise max_steps above warmup_steps");
  return quantile(report.throughput_windows, kRunFigureQuantile);
}

// Exit status of a stored baseline recorded under another fingerprint: neither pass nor fail.
constexpr int kNotComparable = 4;

// This machine's environment as a run of `config` would record it (device, threads), without running anything.
nlohmann::json this_environment(const nlohmann::json& config) {
  const RunConfig c = config_from_json(config);
  RunReport report;
  report.environment = collect_environment(*make_device_backend(c));
  if (c.threads > 0) report.environment.threads = c.threads;
  return to_json(report)["environment"];
}
MachineFingerprint this_machine(const nlohmann::json& config) { return MachineFingerprint::of(this_environment(config)); }

// --baseline DIR: the baselines kept side by side, one per fingerprint; the one recorded under
// this machine's fingerprint, or (none matching) the first, whose differences are then reported.
std::string choose_baseline(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->path().extension() == ".json") files.push_back(it->path().string());
  if (error) throw UserError("check", "--baseline: cannot read the folder '" + dir + "': " + error.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UserError("check", "--baseline: '" + dir + "' holds no .json baselines; record one with dyno check --record " + dir);
  const MachineFingerprint here = this_machine(read_check_baseline(files.front()).config);
  for (const auto& f : files)
    if (MachineFingerprint::of(read_check_baseline(f).environment).differences(here).empty()) return f;
  return files.front();
}

// The verdict on a stored baseline recorded under another fingerprint: the differing fields and
// what to do instead, as Markdown (stdout, --markdown) and JSON (--out).
int report_not_comparable(const CheckArgs& a, const std::string& baseline_path, const MachineFingerprint& here,
                          const std::vector<std::string>& differences) {
  std::ostringstream md;
  md << "### dyno check against baseline " << baseline_path << "\n\n**NOT COMPARABLE**: the baseline was recorded under another machine "
     << "fingerprint, so its figures say nothing about this one (" << here.id() << "):\n\n";
  for (const auto& d : differences) md << "- " << d << "\n";
  md << "\nMeasure the base revision beside the candidate instead (dyno check --against BASE_DYNO; scripts/ci-perf), or keep a "
     << "baseline for this machine beside the others: dyno check --record "
     << (std::filesystem::path(baseline_path).has_parent_path() ? std::filesystem::path(baseline_path).parent_path().string() : std::string(".")) << "/ ...\n";
  std::cout << md.str();
  if (!a.markdown_path.empty()) write_file_atomically(a.markdown_path, md.str());
  if (!a.out.empty())
    write_file_atomically(a.out, nlohmann::json{{"schema_version", "1.0"}, {"kind", "check"}, {"verdict", "NOT_COMPARABLE"},
                                                {"baseline", baseline_path}, {"differences", differences}, {"fingerprint", here.fields()},
                                                {"fingerprint_id", here.id()}}
                                     .dump(2) + "\n");
  return kNotComparable;
}

// The config with `settings` applied (each checked against the knob table), holding the config's
// own keys and the settings' only: a dyno of another revision (--against) reads it as long as it
// knows those, where a complete serialisation would name every knob this revision has.
nlohmann::json with_settings(nlohmann::json config, const std::vector<std::string>& settings, const std::string& option) {
  RunConfig c = config_from_json(config);
  for (const auto& s : settings) {
    if (s.find('=') == std::string::npos) throw UserError("check", option + " expects knob=value, got '" + s + "'");
    apply_setting(c, s);
  }
  const nlohmann::json complete = to_json(c);
  for (const auto& s : settings) {
    const std::string knob = s.substr(0, s.find('='));
    config[knob] = complete.at(knob);
    // (a ddp knob the config nests, {"ddp": {"world_size": 1}}, is now the dotted one: given once)
    if (knob.rfind("ddp.", 0) == 0 && config.contains("ddp") && config["ddp"].is_object()) config["ddp"].erase(knob.substr(4));
  }
  return config;
}

// How --against pairs the two builds' runs. ABBA: one run at a time, base, candidate, candidate,
// base. Duet: base and candidate at once, each on its own CPUs (the config's `threads` apiece),
// the sides swapping CPUs every pair: interference in time (another tenant, a frequency dip) then
// hits both runs of a pair alike and cancels in their ratio, and each pair costs one run's time
// (Bulej et al., "Duet Benchmarking", 2020). Auto: duet when this process may use twice the
// config's threads, else ABBA.
struct Pairing {
  bool duet = false;
  std::vector<int> first, second;  // duet: the CPUs of the two sides of a pair
  std::string describe() const {
    if (!duet) return "ABBA, one run at a time";
    auto list = [](const std::vector<int>& cpus) {
      std::string text;
      for (int c : cpus) text += (text.empty() ? "" : ",") + std::to_string(c);
      return text;
    };
    return "duet: base and candidate at once on CPUs " + list(first) + " and " + list(second) + ", swapped every pair";
  }
};

Pairing choose_pairing(const std::string& pairing, const nlohmann::json& config) {
  if (pairing != "auto" && pairing != "duet" && pairing != "abba")
    throw UserError("check", "--pairing: '" + pairing + "' is not one of auto, duet, abba");
  Pairing p;
  if (pairing == "abba") return p;
  cpu_set_t mine;
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof mine, &mine) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &mine)) cpus.push_back(cpu);
  const int threads = config_from_json(config).threads;
  const bool fits = threads > 0 && 2 * static_cast<size_t>(threads) <= cpus.size();
  if (!fits) {
    if (pairing == "duet")
      throw UserError("check", "--pairing duet: each side needs its own " + (threads > 0 ? std::to_string(threads) : std::string("(all, threads=0)")) +
                                   " CPUs and this process may use " + std::to_string(cpus.size()) + "; set threads to at most " +
                                   std::to_string(cpus.size() / 2) + " with --set, or use --pairing abba");
    return p;
  }
  p.duet = true;
  p.first.assign(cpus.begin(), cpus.begin() + threads);
  p.second.assign(cpus.begin() + threads, cpus.begin() + 2 * threads);
  return p;
}

// Against stored runs, --set would change the candidate only: those runs were measured without it.
// Judged on the configs as they train (resolve_config), so that a recipe's own value named by hand
// (lr=<the recipe's>, where the baseline stores 0, "the recipe's") changes nothing.
void refuse_changed_stored_config(const nlohmann::json& stored_config, const nlohmann::json& asked_config, const std::string& baseline_path) {
  const RunConfig stored = config_from_json(stored_config), asked = config_from_json(asked_config);
  const RunConfig stored_resolved = resolve_config(stored, workload_for(stored));
  const nlohmann::json resolved_json = to_json(stored_resolved), asked_resolved = to_json(resolve_config(asked, workload_for(asked)));
  if (resolved_json == asked_resolved) return;
  const nlohmann::json stored_json = to_json(stored), asked_json = to_json(asked);
  // The knob named that changed what trained (one naming the recipe's own value is no change),
  // else the first named at all (another knob derives from it, as lr from batch_size).
  std::string named;
  bool named_trains_otherwise = false;
  for (const auto& [knob, value] : asked_json.items()) {
    if (stored_json.value(knob, nlohmann::json()) == value) continue;
    const bool trains_otherwise = resolved_json.value(knob, nlohmann::json()) != asked_resolved.value(knob, nlohmann::json());
    if (named.empty() || (trains_otherwise && !named_trains_otherwise)) {
      named = knob;
      named_trains_otherwise = trains_otherwise;
    }
  }
  if (named.empty()) return;
  const nlohmann::json& value = asked_json[named];
  const nlohmann::json was = stored_json.value(named, nlohmann::json()), trained = resolved_json.value(named, nlohmann::json());
  throw UserError("check", "--set " + named + "=" + knob_value_text(value) + ": the baseline's runs in '" +
                               baseline_path + "' were measured with " + named + "=" + was.dump() +
                               (trained != was ? " (the recipe's, " + trained.dump() + ")" : std::string()) +
                               "; re-record the baseline with it, measure both sides with --against BASE_DYNO, or use --candidate-set to change the candidate only");
}

// check measures one process a run: a data-parallel job's figure would need a launcher.
void refuse_ranks(int64_t world_size, const std::string& what) {
  if (world_size != 1)
    throw UserError("check", what + " is " + std::to_string(world_size) +
                                 ": check measures one process a run; gate a data-parallel job's throughput on ddp.world_size=1, or compare its run reports with dyno compare");
}

int measure_and_check(const CheckArgs& a, const std::string& work) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  if (!a.record.empty()) {
    // Record a baseline: the config (complete, resolved defaults) and `runs` per-run figures.
    RunConfig c;
    c.workload = a.workload.empty() ? default_workload() : a.workload;
    for (const auto& s : a.settings) apply_setting(c, s);
    refuse_second_workload(a.workload, c);
    const std::string unit = workload_for(c).throughput_unit + "/s";  // an unknown or unnamed workload is refused before any run
    refuse_ranks(c.ddp.world_size, "--set ddp.world_size");
    const nlohmann::json config = to_json(c);
    const bool into_folder = names_a_folder(a.record);
    if (into_folder) make_folder(a.record);  // where the baseline goes is checked before the runs
    nlohmann::json runs = nlohmann::json::array();
    for (int i = 0; i < a.runs; ++i) runs.push_back(measure_once(self, config, work, i));
    nlohmann::json environment = to_json(read_report(work + "/run-0.json"))["environment"];
    const MachineFingerprint fingerprint = MachineFingerprint::of(environment);
    nlohmann::json baseline = {{"schema_version", "1.0"}, {"kind", "baseline"}, {"config", config}, {"unit", unit},
                               {"figure", kRunFigure}, {"runs", runs}, {"environment", environment},
                               {"fingerprint", fingerprint.fields()}, {"fingerprint_id", fingerprint.id()}};
    // A folder (existing, or named with a trailing /) keeps one baseline per fingerprint.
    const std::string path = into_folder ? (std::filesystem::path(a.record) / (fingerprint.id() + ".json")).string() : a.record;
    if (check_interrupted) throw CheckInterrupted{};  // after the last run: still nothing recorded
    const bool replaced = std::filesystem::exists(path);
    write_file_atomically(path, baseline.dump(2) + "\n");
    std::cout << "recorded " << a.runs << " runs of " << c.workload << " into " << path << (replaced ? ", replacing the baseline there" : "")
              << " (fingerprint " << fingerprint.id() << ")\n";
    return 0;
  }
  if (a.baseline.empty()) throw UserError("check", "--baseline FILE is required (or --record FILE to make one)");
  const std::string baseline_path = std::filesystem::is_directory(a.baseline) ? choose_baseline(a.baseline) : a.baseline;
  const CheckBaseline baseline = read_check_baseline(baseline_path);
  if (a.against.empty() && baseline.figure != kRunFigure)
    throw UserError("check", "'" + baseline_path + "' holds per-run figures of kind \"" + baseline.figure + "\", this dyno measures " + kRunFigure +
                                 "; re-record it with dyno check --record, or use --against");
  const nlohmann::json base_config = with_settings(baseline.config, a.settings, "--set");
  const nlohmann::json cand_config = with_settings(base_config, a.candidate_settings, "--candidate-set");
  for (const auto* config : {&base_config, &cand_config})
    refuse_ranks(config_from_json(*config).ddp.world_size, "the config's ddp.world_size (in '" + baseline_path + "' or set)");
  if (a.against.empty()) refuse_changed_stored_config(baseline.config, base_config, baseline_path);
  CompareOptions o;
  o.threshold = parse_fraction(a.threshold, "check", "--threshold");
  o.alpha = a.alpha;
  if (a.against.empty() && a.pairing != "auto")
    throw UserError("check", "--pairing " + a.pairing + ": pairs are runs of two builds; it needs --against BASE_DYNO");
  const Pairing pairing = a.against.empty() ? Pairing{} : choose_pairing(a.pairing, base_config);
  std::vector<std::string> not_compared;  // fingerprint fields the stored baseline lacks
  std::string not_compared_text;
  if (a.against.empty()) {
    // A stored figure is comparable only on the machine and stack that recorded it: without the
    // machine it was measured on, no fingerprint could tell another machine's figures.
    if (baseline.environment.empty())
      throw UserError("check", "'" + baseline_path + "' has no 'environment': its runs cannot be compared without the machine they were measured "
                                                     "on; re-record it with dyno check --record, or use --against");
    const MachineFingerprint here = this_machine(base_config);
    const auto differences = MachineFingerprint::of(baseline.environment).differences(here);
    if (!differences.empty()) return report_not_comparable(a, baseline_path, here, differences);
    not_compared = MachineFingerprint::of(baseline.environment).fields_not_compared(here);
    for (const auto& field : not_compared) not_compared_text += (not_compared_text.empty() ? "" : ", ") + field;
  }

  const auto started = std::chrono::steady_clock::now();
  std::vector<double> base_runs, cand_runs;
  int index = 0;
  if (a.against.empty())
    base_runs = baseline.runs;
  auto measure_candidates = [&](int n) {
    for (int i = 0; i < n; ++i) cand_runs.push_back(measure_once(self, cand_config, work, index++, {}, true));
  };
  // ABBA on the same machine: drift affects both builds alike and cancels in the pairs.
  auto measure_abba = [&] {
    const double b1 = measure_once(a.against, base_config, work, index++);
    const double c1 = measure_once(self, cand_config, work, index++, {}, true);
    const double c2 = measure_once(self, cand_config, work, index++, {}, true);
    const double b2 = measure_once(a.against, base_config, work, index++);
    base_runs.insert(base_runs.end(), {b1, b2});
    cand_runs.insert(cand_runs.end(), {c1, c2});
  };
  int duets = 0;
  auto measure_duet = [&] {
    const bool swap = duets++ % 2 == 1;
    const int base_index = index++, cand_index = index++;
    auto base = std::async(std::launch::async,
                           [&] { return measure_once(a.against, base_config, work, base_index, swap ? pairing.second : pairing.first); });
    double c = 0;
    try {
      c = measure_once(self, cand_config, work, cand_index, swap ? pairing.first : pairing.second, true);
    } catch (const CandidateFailed&) {
      base.get();  // both failed: the base's error (exit 2), not a FAIL of the candidate
      throw;
    }
    base_runs.push_back(base.get());
    cand_runs.push_back(c);
  };
  // One block: two pairs against another build (an ABBA quadruple, or two duets), or two
  // candidate runs against the stored baseline.
  auto measure_block = [&] {
    if (a.against.empty())
      measure_candidates(2);
    else if (pairing.duet) {
      measure_duet();
      measure_duet();
    } else
      measure_abba();
  };
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const int first_blocks = (a.runs + 1) / 2;
  // The automatic re-run is sequential: while the verdict is INCONCLUSIVE, one more block at a
  // time, up to twice the first round's blocks and while the next block still fits in
  // --max-seconds. Every look's FAIL needs p below the level that keeps the false-alarm chance
  // over all the looks the re-run may take at --alpha (a re-run that stops sooner only lowers it),
  // and every look's PASS an interval wide enough to keep the chance of passing a regression at
  // the threshold what one 99% interval's is.
  const int max_extra_blocks = a.no_rerun ? 0 : 2 * first_blocks;
  std::vector<int> looks;  // candidate runs at each look
  for (int k = 0; k <= max_extra_blocks; ++k) looks.push_back((a.against.empty() ? a.runs : 2 * first_blocks) + 2 * k);
  CompareOptions each_look = o;
  each_look.alpha = sequential_look_alpha(o.alpha, looks);
  each_look.confidence = 1 - 2 * sequential_look_alpha((1 - o.confidence) / 2, looks);
  auto evaluate = [&] {
    MetricVerdict row{"samples_per_second",
                      a.against.empty() ? estimate_shift(base_runs, cand_runs, true, each_look.confidence)
                                        : estimate_paired_shift(base_runs, cand_runs, true, each_look.confidence),
                      ""};
    row.verdict = verdict(row.shift, each_look);
    return row;
  };
  if (a.against.empty())
    measure_candidates(a.runs);
  else
    for (int block = 0; block < first_blocks; ++block) measure_block();
  MetricVerdict row = evaluate();
  int extra_blocks = 0;
  while (row.verdict == "INCONCLUSIVE" && extra_blocks < max_extra_blocks) {
    const double per_block = elapsed() / static_cast<double>(first_blocks + extra_blocks);
    if (elapsed() + per_block > a.max_seconds) break;
    measure_block();
    ++extra_blocks;
    row = evaluate();
  }
  if (check_interrupted) throw CheckInterrupted{};  // after the last run: still nothing judged
  const bool reran = extra_blocks > 0;
  const double seconds = elapsed();
  std::ostringstream looks_note;
  if (looks.size() > 1)
    looks_note << std::setprecision(2) << "; up to " << looks.size() << " looks, so a FAIL needs p < " << each_look.alpha << " at each (alpha "
               << o.alpha << " over all of them) and a PASS a " << std::setprecision(4) << 100 * each_look.confidence << "% interval ("
               << 100 * o.confidence << "% over all of them)";
  // No environment warnings: a stored baseline got here only under this machine's fingerprint,
  // and --against runs both sides here.
  CompareOptions shown = o;
  shown.confidence = each_look.confidence;
  const std::string md = markdown({row}, shown, {},
                                  std::string("dyno check") + (a.against.empty() ? " against baseline " + baseline_path : " (" + pairing.describe() + ") against " + a.against)) +
                         "\n" + std::to_string(static_cast<int>(base_runs.size())) + " baseline and " + std::to_string(static_cast<int>(cand_runs.size())) +
                         " candidate runs" + (reran ? " (after an automatic re-run of " + std::to_string(extra_blocks) + (extra_blocks == 1 ? " block)" : " blocks)") : "") + ", " + std::to_string(static_cast<int>(seconds)) + " s" +
                         looks_note.str() + "\n" +
                         (not_compared.empty() ? std::string()
                                               : "\n> not compared, absent from the baseline's environment (so assumed equal): " + not_compared_text +
                                                     "; re-record the baseline with this dyno to compare them\n");
  std::cout << md;
  if (!a.markdown_path.empty()) write_file_atomically(a.markdown_path, md);
  if (!a.out.empty())
    write_file_atomically(a.out, nlohmann::json{{"schema_version", "1.0"}, {"kind", "check"}, {"config", cand_config},
                                                {"unit", workload_for(config_from_json(cand_config)).throughput_unit + "/s"},
                                                {"figure", kRunFigure}, {"environment", this_environment(cand_config)}, {"not_compared", not_compared},
                                                {"fingerprint_id", this_machine(cand_config).id()},
                                                {"runs", cand_runs}, {"baseline_runs", base_runs}, {"verdict", row.verdict},
                                                {"regression", row.shift.regression}, {"regression_low", row.shift.regression_low},
                                                {"regression_high", row.shift.regression_high}, {"short_of_confidence", row.shift.short_of_confidence}, {"p_value", row.shift.p_value},
                                                {"threshold", o.threshold}, {"alpha", o.alpha}, {"pairing", a.against.empty() ? "baseline" : pairing.duet ? "duet" : "abba"}, {"alpha_per_look", each_look.alpha}, {"confidence_per_look", each_look.confidence}, {"looks", looks.size()}, {"seconds", seconds}, {"reran", reran}, {"extra_blocks", extra_blocks}}
                                         .dump(2) + "\n");
  return exit_status({row}, a.strict);
}

// The measurement runs' configs, reports and logs live in a scratch folder that goes with the
// command, whatever its end; Ctrl-C stops the run under way and records nothing.
int run_check(const CheckArgs& a) {
  if (a.record.empty() && !a.no_rerun && a.alpha < kSmallestAlpha)
    throw UserError("check", "--alpha " + nlohmann::json(a.alpha).dump() + " is below 0.0005, the smallest level the automatic re-run's looks can share; "
                             "give --alpha 0.0005 or more, or --no-rerun");
  refuse_writing_over("check", {{"--out", a.out}, {"--markdown", a.markdown_path}}, {{"the baseline", a.baseline}}, /*folders_are_read=*/true);
  check_interrupted = false;
  auto on_interrupt = [](int) { check_interrupted = true; };
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  if (!hangup_ignored()) std::signal(SIGHUP, on_interrupt);  // a closed terminal or ssh session (nohup's stays ignored)
  std::signal(SIGCHLD, SIG_DFL);  // the runs' exit statuses are read with wait (an inherited ignore would reap them first)
  try {
    const ScratchDir work("dyno-check");
    return measure_and_check(a, work.path());
  } catch (const CheckInterrupted&) {
    std::fprintf(stderr, "[check] interrupted: nothing was recorded or judged\n");
    return 130;
  } catch (const CandidateFailed& failed) {
    const std::string md = "### dyno check\n\n**FAIL**: the candidate " + failed.reason + "\n";
    std::cout << md;
    if (!a.markdown_path.empty()) write_file_atomically(a.markdown_path, md);
    if (!a.out.empty())
      write_file_atomically(a.out, nlohmann::json{{"schema_version", "1.0"}, {"kind", "check"}, {"verdict", "FAIL"}, {"failure", failed.reason}}.dump(2) + "\n");
    return 1;
  }
}

}  // namespace

void add_compare_commands(CLI::App& app) {
  auto c = std::make_shared<CompareArgs>();
  auto* compare = app.add_subcommand("compare", "compare two results (run reports, check baselines, Google Benchmark JSON) metric by metric");
  compare->add_option("baseline", c->baseline, "the reference result")->required();
  compare->add_option("candidate", c->candidate, "the result to judge")->required();
  compare->add_option("--threshold", c->threshold, "smallest regression that fails, e.g. 5% or 0.05")->capture_default_str();
  compare->add_option("--alpha", c->alpha, "significance level of the one-sided test")->check(number_in(1e-9, 0.5))->capture_default_str();
  compare->add_option("--markdown", c->markdown_path, "also write the Markdown summary here")->check(file_to_write());
  compare->add_flag("--strict", c->strict, "treat INCONCLUSIVE as a failure (exit 1)");
  register_command_handler(compare, [c] { return run_compare(*c); });

  auto k = std::make_shared<CheckArgs>();
  auto* check = app.add_subcommand("check", "re-measure a baseline's configuration now and gate on a regression "
                                       "(exit 0 pass, 1 fail, 2 inconclusive or bad input, 4 not comparable: recorded under another machine fingerprint, "
                                       "130 interrupted)");
  auto* baseline = check->add_option("--baseline,-b", k->baseline, "baseline file (kind: baseline), or a folder of them, one per machine fingerprint")
                       ->check(not_empty());
  auto* record = check->add_option("--record", k->record, "measure --runs runs of --workload/--set and write them as a baseline FILE (a folder: FOLDER/<fingerprint>.json)")
                     ->check(not_empty())
                     ->excludes(baseline);
  check->add_option("--workload,-w", k->workload, "with --record: the workload")->needs(record)->check(not_empty());
  check->add_option("--set,-s", k->settings, "knob=value applied to both sides (with --record: the config; against a stored baseline only a value its config has), repeatable")->take_all();
  std::vector<CLI::Option*> judging;  // what a check's comparison takes: --record measures and compares nothing
  judging.push_back(check->add_option("--candidate-set", k->candidate_settings, "knob=value for the candidate only (e.g. slowdown_percent=5 to validate)")->take_all());
  judging.push_back(check->add_option("--against", k->against, "another dyno binary: measure both builds in pairs (see --pairing) and compare the pairs")->check(not_empty()));
  judging.push_back(check->add_option("--pairing", k->pairing,
                    "with --against: duet (both builds at once, each on its own CPUs, swapped every pair), abba (one run at a time: "
                    "base, candidate, candidate, base), or auto (duet when there are CPUs for two runs of the config's threads)")
      ->capture_default_str());
  check->add_option("--runs", k->runs, "repetitions per side (with --record: the baseline's runs; with --against rounded up to an even number: pairs are measured in blocks of two a side)")->capture_default_str()->check(whole_number_in(3, 1000));
  judging.push_back(check->add_option("--threshold", k->threshold, "smallest regression that fails, e.g. 5% or 0.05")->capture_default_str());
  judging.push_back(check->add_option("--alpha", k->alpha, "significance level of the one-sided test, over all the looks of the automatic re-run (at least 0.0005 with the re-run)")
                        ->check(number_in(1e-9, 0.5))
                        ->capture_default_str());
  judging.push_back(check->add_flag("--strict", k->strict, "treat INCONCLUSIVE (after the re-run) as a failure (exit 1)"));
  judging.push_back(check->add_flag("--no-rerun", k->no_rerun, "do not re-run automatically when inconclusive"));
  judging.push_back(check->add_option("--max-seconds", k->max_seconds,
                                      "seconds the whole check may take, its first round included: re-run blocks are added while inconclusive and the next one fits")
                        ->capture_default_str()
                        ->check(number_in(1, 86400)));
  judging.push_back(check->add_option("--markdown", k->markdown_path, "also write the Markdown summary here (for CI logs)")->check(file_to_write()));
  judging.push_back(check->add_option("--out", k->out, "write the check result JSON here (readable by dyno compare)")->check(file_to_write()));
  for (CLI::Option* option : judging) record->excludes(option);
  register_command_handler(check, [k] { return run_check(*k); });
}

}  // namespace dyno
