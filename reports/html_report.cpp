#include "dyno/reports/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "dyno/reports/quantity.h"
#include "dyno/reports/utf8_text.h"
#include "dyno/reports/technique_claims.h"

namespace dyno {
std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string num(double v, int precision = 3) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", precision, v);
  return b;
}

// Axis ticks: 3 significant digits with k / M suffixes instead of exponents.
std::string tick(double v) {
  const double a = std::fabs(v);
  if (a >= 1e6) return num(v / 1e6) + "M";
  if (a >= 1e3) return num(v / 1e3) + "k";
  return num(v);
}

double safe(const nlohmann::json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

// A run after the search (verification, profile): not one of the search's trials.
bool after_search(const nlohmann::json& trial) {
  const std::string stage = trial.value("stage", "");
  return stage == "verify" || stage == "profile";
}

const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A plot area with axes, ticks and labels; maps data to pixels.
struct Plot {
  double width = 760, height = 300, left = 70, right = 20, top = 20, bottom = 45;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  std::string x_label, y_label;
  double px(double x) const { return left + (x - x0) / (x1 - x0 == 0 ? 1 : x1 - x0) * (width - left - right); }
  double py(double y) const { return height - bottom - (y - y0) / (y1 - y0 == 0 ? 1 : y1 - y0) * (height - top - bottom); }
  std::string frame() const {
    std::ostringstream s;
    s << "<rect x='" << left << "' y='" << top << "' width='" << width - left - right << "' height='" << height - top - bottom
      << "' fill='#fafafa' stroke='#999'/>";
    for (int i = 0; i <= 4; ++i) {
      const double yv = y0 + (y1 - y0) * i / 4.0, xv = x0 + (x1 - x0) * i / 4.0;
      s << "<line x1='" << left << "' x2='" << width - right << "' y1='" << py(yv) << "' y2='" << py(yv) << "' stroke='#e4e4e4'/>"
        << "<text x='" << left - 6 << "' y='" << py(yv) + 4 << "' text-anchor='end' font-size='11'>" << tick(yv) << "</text>"
        << "<text x='" << px(xv) << "' y='" << height - bottom + 16 << "' text-anchor='middle' font-size='11'>" << tick(xv) << "</text>";
    }
    s << "<text x='" << (left + width - right) / 2 << "' y='" << height - 8 << "' text-anchor='middle' font-size='12'>" << html_escape(x_label)
      << "</text><text x='14' y='" << (top + height - bottom) / 2 << "' text-anchor='middle' font-size='12' transform='rotate(-90 14 "
      << (top + height - bottom) / 2 << ")'>" << html_escape(y_label) << "</text>";
    return s.str();
  }
  std::string open() const {
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' font-family='sans-serif'>";
    return s.str();
  }
};

// How the report states a trial's figure: its throughput in `unit` with the median's interval, or,
// for time to target, its seconds to the target (lower is better; no interval).
struct Figure {
  std::string unit;  // "samples/s", "tokens/s", ...
  bool to_target = false;
  // The value plotted: NaN when there is none (a failed trial, a missed target).
  double of(const nlohmann::json& t) const {
    if (t.value("outcome", "ok") != "ok") return std::nan("");
    if (to_target) return t.contains("time_to_target_s") && t["time_to_target_s"].is_number() ? t["time_to_target_s"].get<double>() : std::nan("");
    return safe(t, "samples_per_second");
  }
  std::string axis() const { return to_target ? "seconds to the target (lower is better)" : unit + " (median, 95% interval)"; }
  // "200 samples/s" and " [190, 210]"; "2.0 s to the target" and " (200 samples/s)".
  std::string value_text(const nlohmann::json& t) const {
    const double v = of(t);
    if (to_target) return std::isfinite(v) ? format_fixed(v, 1) + " s to the target" : "missed the target";
    return format_fixed(v, 0) + " " + unit;
  }
  std::string detail(const nlohmann::json& t) const {
    if (to_target) return " (" + format_fixed(safe(t, "samples_per_second"), 0) + " " + unit + ")";
    return " [" + format_fixed(safe(t, "ci_low"), 0) + ", " + format_fixed(safe(t, "ci_high"), 0) + "]";
  }
};

std::string throughput_chart(const nlohmann::json& trials, int64_t best_id, const Figure& figure) {
  Plot p;
  p.x_label = "trial";
  p.y_label = figure.axis();
  double hi = 0;
  int64_t n = 0;
  for (const auto& t : trials) {
    if (after_search(t)) continue;
    if (const double v = figure.of(t); std::isfinite(v)) hi = std::max({hi, v, figure.to_target ? v : safe(t, "ci_high")});
    n = std::max<int64_t>(n, t.value("id", int64_t{0}));
  }
  p.x0 = 0;
  p.x1 = static_cast<double>(n + 1);
  p.y1 = hi > 0 ? hi * 1.08 : 1;
  std::ostringstream s;
  s << p.open() << p.frame();
  for (const auto& t : trials) {
    if (after_search(t)) continue;
    const double x = p.px(static_cast<double>(t.value("id", int64_t{0})));
    const double v = figure.of(t);
    if (std::isfinite(v)) {
      if (!figure.to_target)
        s << "<line x1='" << x << "' x2='" << x << "' y1='" << p.py(safe(t, "ci_low")) << "' y2='" << p.py(safe(t, "ci_high"))
          << "' stroke='#1f77b4' stroke-width='2'/>";
      s << "<circle cx='" << x << "' cy='" << p.py(v) << "' r='" << (t["id"] == best_id ? 6 : 3.5) << "' fill='"
        << (t["id"] == best_id ? "#2ca02c" : "#1f77b4") << "'><title>trial " << t["id"] << ": " << html_escape(figure.value_text(t) + figure.detail(t)) << " "
        << html_escape(t.value("changes", "")) << "</title></circle>";
    } else {
      s << "<text x='" << x << "' y='" << p.py(0) - 4 << "' text-anchor='middle' font-size='13' fill='#d62728'>&#x2715;<title>trial "
        << t["id"] << ": " << html_escape(t.value("outcome", "")) << " - " << html_escape(t.value("reason", figure.to_target ? "missed the target" : "")) << "</title></text>";
    }
  }
  s << "</svg>";
  return s.str();
}

// Every search trial's figure against its peak memory, and the front of configurations: each at
// its estimate over its processes (schema 1.5; before, its latest trial's figure) and the most
// memory one of them needed.
std::string pareto_chart(const nlohmann::json& trials, const nlohmann::json& front, const Figure& figure) {
  auto front_figure = [&](const nlohmann::json& f) {
    const double estimate = safe(f, "estimate");
    if (estimate <= 0) return figure.to_target ? std::nan("") : safe(f, "samples_per_second");
    return figure.to_target ? 1.0 / estimate : estimate;  // time to target's estimate is per second
  };
  Plot p;
  p.x_label = "peak memory (MiB)";
  p.y_label = figure.to_target ? "seconds to the target (lower is better)" : figure.unit;
  double xmin = 1e300, xmax = 0, ymax = 0;
  for (const auto& t : trials) {
    if (!std::isfinite(figure.of(t)) || after_search(t)) continue;
    const double m = safe(t, "peak_memory_bytes") / 1048576.0;
    xmin = std::min(xmin, m);
    xmax = std::max(xmax, m);
    ymax = std::max(ymax, figure.of(t));
  }
  for (const auto& f : front)
    if (std::isfinite(front_figure(f))) ymax = std::max(ymax, front_figure(f));
  if (xmax <= 0) return "<p>No successful trial to plot.</p>";
  const double pad = std::max(1.0, (xmax - xmin) * 0.1);
  p.x0 = std::max(0.0, xmin - pad);
  p.x1 = xmax + pad;
  p.y1 = ymax * 1.08;
  std::ostringstream s;
  s << p.open() << p.frame();
  for (const auto& t : trials) {
    if (!std::isfinite(figure.of(t)) || after_search(t)) continue;
    s << "<circle cx='" << p.px(safe(t, "peak_memory_bytes") / 1048576.0) << "' cy='" << p.py(figure.of(t))
      << "' r='3.5' fill='#9aa9c4'><title>trial " << t["id"] << ": " << html_escape(t.value("changes", "")) << "</title></circle>";
  }
  std::string path, dots;
  for (const auto& f : front) {
    if (!std::isfinite(front_figure(f))) continue;
    const double x = p.px(safe(f, "peak_memory_bytes") / 1048576.0), y = p.py(front_figure(f));
    path += (path.empty() ? "M" : " L") + format_fixed(x) + " " + format_fixed(y);
    dots += "<circle cx='" + format_fixed(x) + "' cy='" + format_fixed(y) + "' r='5' fill='#ff7f0e'><title>" +
            html_escape(f.value("changes", "") + " (" + std::to_string(f.value("processes", int64_t{1})) + " processes; latest trial ") + f.value("id", nlohmann::json()).dump() + ")</title></circle>";
  }
  s << "<path d='" << path << "' fill='none' stroke='#ff7f0e' stroke-width='2'/>" << dots << "</svg>";
  return s.str();
}

// One line per run; x is the optimizer step ("step"), the items a program's trial reported
// ("items") or the seconds since the run started ("time_s"), labelled `x_label`.
std::string curves_chart(const std::vector<std::pair<std::string, nlohmann::json>>& series, const char* curve, const std::string& y_label,
                         const char* x = "step", const std::string& x_label = "optimizer step") {
  // A report's points of `curve`; none when it has no such curve (a program's report, say).
  auto points = [curve](const nlohmann::json& report) {
    const auto& curves = report.value("curves", nlohmann::json::object());
    const auto& list = curves.is_object() ? curves.value(curve, nlohmann::json::array()) : nlohmann::json::array();
    return list.is_array() ? list : nlohmann::json::array();
  };
  Plot p;
  p.x_label = x_label;
  p.y_label = y_label;
  double xmax = 0, ymin = 1e300, ymax = -1e300;
  for (const auto& [label, report] : series)
    for (const auto& pt : points(report)) {
      if (!pt.is_object() || !pt.contains("value") || !pt["value"].is_number()) continue;
      xmax = std::max(xmax, safe(pt, x));
      ymin = std::min(ymin, pt["value"].get<double>());
      ymax = std::max(ymax, pt["value"].get<double>());
    }
  if (xmax <= 0 || ymax < ymin) return "<p>No " + std::string(curve) + " curves recorded.</p>";
  p.x1 = xmax;
  p.y0 = ymin - (ymax - ymin) * 0.05;
  p.y1 = ymax + (ymax - ymin) * 0.05 + 1e-9;
  std::ostringstream s;
  s << p.open() << p.frame();
  int color = 0;
  for (const auto& [label, report] : series) {
    std::string path;
    for (const auto& pt : points(report))
      if (pt.is_object() && pt.contains("value") && pt["value"].is_number()) path += (path.empty() ? "M" : " L") + format_fixed(p.px(safe(pt, x))) + " " + format_fixed(p.py(pt["value"].get<double>()));
    const char* c = kPalette[color % 8];
    s << "<path d='" << path << "' fill='none' stroke='" << c << "' stroke-width='1.8'><title>" << html_escape(label) << "</title></path>";
    s << "<rect x='" << p.width - p.right - 250 << "' y='" << p.top + 8 + 15 * color << "' width='10' height='10' fill='" << c << "'/>"
      << "<text x='" << p.width - p.right - 236 << "' y='" << p.top + 17 + 15 * color << "' font-size='11'>" << html_escape(utf8_text(label, 38))
      << "</text>";
    ++color;
  }
  s << "</svg>";
  return s.str();
}

std::string phase_chart(const nlohmann::json& report) {
  if (!report.contains("phases")) return "<p>No phase times recorded.</p>";
  std::vector<std::pair<std::string, double>> phases;
  double total = 0;
  for (const auto& [name, p] : report["phases"].items()) {
    if (name == "eval") continue;
    phases.emplace_back(name, safe(p, "per_step_ms"));
    total += safe(p, "per_step_ms");
  }
  if (total <= 0) return "<p>No phase times recorded.</p>";
  std::ostringstream s;
  const double width = 760, bar = 640;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='90' font-family='sans-serif'>";
  double x = 10;
  int color = 0;
  for (const auto& [name, ms] : phases) {
    const double w = bar * ms / total;
    const char* c = kPalette[color % 8];
    s << "<rect x='" << x << "' y='10' width='" << w << "' height='30' fill='" << c << "'><title>" << html_escape(name) << ": " << num(ms) << " ms/step</title></rect>";
    s << "<rect x='" << 10 + 125 * color << "' y='55' width='10' height='10' fill='" << c << "'/><text x='" << 24 + 125 * color
      << "' y='64' font-size='11'>" << html_escape(name) << " " << num(ms) << " ms</text>";
    x += w;
    ++color;
  }
  s << "<text x='" << 10 + bar + 8 << "' y='30' font-size='12'>" << num(total) << " ms/step</text></svg>";
  return s.str();
}

// The profiled runs' verdicts: what limits the default and the chosen configuration.
std::string verdict_table(const nlohmann::json& profiles) {
  std::ostringstream s;
  s << "<table><tr><th>configuration</th><th>at</th><th>verdict</th><th>trace</th></tr>";
  for (const char* which : {"default", "best"}) {
    const auto& entry = profiles.value(which, nlohmann::json::object());
    const auto& verdict = entry.value("verdict", nlohmann::json());
    s << "<tr><td>" << (std::string(which) == "best" ? "tuned" : "default") << "</td><td>" << html_escape(entry.value("at", "")) << "</td><td>";
    if (verdict.is_object()) {
      // The sentence is the headline, ": ", then its evidence.
      const std::string headline = verdict.value("headline", ""), sentence = verdict.value("sentence", "");
      const std::string evidence = sentence.rfind(headline + ": ", 0) == 0 ? sentence.substr(headline.size() + 2) : sentence;
      s << "<b>" << html_escape(headline) << "</b><br><span class='meta'>" << html_escape(evidence) << "</span>";
    }
    else
      s << "not profiled: " << html_escape(entry.value("outcome", "")) << " " << html_escape(entry.value("reason", ""));
    const auto& trace = entry.value("trace", nlohmann::json());
    s << "</td><td>" << (trace.is_string() ? html_escape(trace.get<std::string>()) : std::string("-")) << "</td></tr>";
  }
  s << "</table><p class='meta'>Each configuration run once more with <code>dyno train --profile</code>: LibTorch's profiler over "
       "steps after warm-up; open a trace in https://ui.perfetto.dev or chrome://tracing.</p>";
  return s.str();
}

// A profiled run's op table: the top events by self time, with calls, FLOPs and input shapes.
std::string op_table(const nlohmann::json& profile) {
  const double wall = safe(profile, "wall_s");
  const double steps = std::max(1.0, safe(profile, "steps"));
  std::ostringstream s;
  s << "<table><tr><th>op</th><th>self ms/step</th><th>self %</th><th>total ms/step</th><th>calls/step</th><th>GFLOP/step</th><th>input shapes (most time)</th></tr>";
  for (const auto& row : profile.value("ops", nlohmann::json::array())) {
    const double self = safe(row, "self_s");
    s << "<tr><td>" << html_escape(row.value("name", "")) << "</td><td>" << format_fixed(1000 * self / steps, 3) << "</td><td>"
      << format_fixed(wall > 0 ? 100 * self / wall : 0, 1) << "</td><td>" << format_fixed(1000 * safe(row, "total_s") / steps, 3) << "</td><td>"
      << format_fixed(safe(row, "calls") / steps, 1) << "</td><td>" << (safe(row, "flops") > 0 ? format_fixed(safe(row, "flops") / steps / 1e9, 3) : "")
      << "</td><td>" << html_escape(utf8_text(row.value("input_shapes", ""), 90)) << "</td></tr>";
  }
  s << "</table>";
  if (!profile.value("kernels", nlohmann::json::array()).empty()) {
    s << "<p>Device kernels:</p><table><tr><th>kernel</th><th>ms/step</th><th>calls/step</th></tr>";
    for (const auto& row : profile["kernels"])
      s << "<tr><td>" << html_escape(utf8_text(row.value("name", ""), 100)) << "</td><td>" << format_fixed(1000 * safe(row, "self_s") / steps, 3)
        << "</td><td>" << format_fixed(safe(row, "calls") / steps, 1) << "</td></tr>";
    s << "</table>";
  }
  double table_s = 0;
  for (const auto& row : profile.value("ops", nlohmann::json::array())) table_s += safe(row, "self_s");
  s << "<p class='meta'>" << format_fixed(1000 * wall / steps, 3) << " ms per profiled step; the rows' self times add up to "
    << format_fixed(wall > 0 ? 100 * table_s / wall : 0, 0) << "% of it (dyno:: rows: time in dyno's phases outside any op).</p>";
  return s.str();
}

std::string technique_table(const nlohmann::json& techniques) {
  std::ostringstream s;
  s << "<table><tr><th>#</th><th>technique</th><th>measured speed-up</th><th>baseline</th><th>with technique</th><th>claimed</th></tr>";
  for (const auto& r : technique_rows(techniques)) {
    s << "<tr><td>" << r.claim.number << "</td><td>" << html_escape(r.claim.technique) << "</td>";
    if (r.status == "measured")
      s << "<td class='" << (r.speedup >= 1 ? "good" : "bad") << "'>" << format_fixed(r.speedup, 2) << "x</td><td>" << num(r.baseline_time) << " "
        << html_escape(r.unit) << "</td><td>" << num(r.technique_time) << " " << html_escape(r.unit) << "</td>";
    else
      s << "<td colspan='3'>" << html_escape(r.status) << "</td>";
    s << "<td>" << html_escape(r.claim.claim) << "</td></tr>";
  }
  s << "</table>";
  return s.str();
}

}  // namespace

std::string render_html_report(const nlohmann::json& tune, const std::map<int64_t, nlohmann::json>& trial_reports,
                               const nlohmann::json& techniques) {
  const auto& trials = tune.value("trials", nlohmann::json::array());
  const auto& best = tune.value("best", nlohmann::json());
  const int64_t best_id = best.is_object() ? best.value("id", int64_t{-1}) : -1;
  const Figure figure{tune.value("throughput_unit", "samples") + "/s", tune.value("objective", "") == "time-to-target"};
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dyno report: " << html_escape(tune.value("workload", "")) << "</title><style>"
    << "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
    << "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f0f0f0}"
    << ".good{color:#1a7f37;font-weight:bold}.bad{color:#b42318;font-weight:bold}.meta{color:#555;font-size:13px}</style></head><body>";
  h << "<h1>dyno tuning report: " << html_escape(tune.value("workload", "")) << " on " << html_escape(tune.value("device", "")) << "</h1>";
  const auto& cost = tune.value("cost", nlohmann::json::object());
  h << "<p class='meta'>strategy <b>" << html_escape(tune.value("strategy", "")) << "</b>, objective " << html_escape(tune.value("objective", "")) << ", "
    << cost.value("trials", 0) << " trials (" << format_fixed(safe(cost, "trial_time_s"), 0) << " s of trials, " << format_fixed(safe(cost, "wall_time_s"), 0)
    << " s wall) over a space of " << tune.value("grid_size", 0) << " points";
  const auto& env = tune.value("environment", nlohmann::json::object());
  if (env.is_object() && !env.empty())
    h << "; " << html_escape(env.value("cpu_model", "")) << ", " << env.value("cores", 0) << " cores, LibTorch " << html_escape(env.value("libtorch_version", ""))
      << ", dyno " << html_escape(env.value("dyno_revision", ""));
  h << "</p>";
  if (best.is_object()) {
    // The throughput objective's figure is the point's estimate over its processes (reports before
    // 1.3 have none); the trial's own figure and interval follow.
    const bool estimated = best.contains("estimate") && best["estimate"].is_number() && !figure.to_target;  // null: not finite
    h << "<p>Best: trial " << best_id << ", <b>"
      << (estimated ? html_escape(format_fixed(safe(best, "estimate"), 0) + " " + figure.unit) + "</b> estimated over its processes (this trial " +
                          format_fixed(safe(best, "samples_per_second"), 0) + html_escape(figure.detail(best)) + ")"
                    : html_escape(figure.value_text(best)) + "</b>" + html_escape(figure.detail(best)))
      << ", " << html_escape(best.value("changes", "")) << ".</p>";
  }
  const auto& v = tune.value("verification", nlohmann::json());
  if (v.is_object() && v.contains("best")) {
    auto seconds = [](const nlohmann::json& t) { return t.is_number() ? format_fixed(t.get<double>(), 1) + " s" : std::string("not reached"); };
    const auto& seeds = v.value("seeds", nlohmann::json::array());
    if (seeds.size() > 1) {
      h << "<table><tr><th>seed</th><th>tuned</th><th>default</th><th>speed-up</th></tr>";
      for (const auto& pair : seeds)
        h << "<tr><td>" << html_escape(pair.value("seed", nlohmann::json()).dump()) << "</td><td>" << seconds(pair["best"].value("time_to_target_s", nlohmann::json()))
          << "</td><td>" << seconds(pair["default"].value("time_to_target_s", nlohmann::json())) << "</td><td>"
          << (pair.value("speedup", nlohmann::json()).is_number() ? format_fixed(pair.value("speedup", 0.0), 2) + "x" : std::string("-")) << "</td></tr>";
      h << "</table><p>Verification over " << seeds.size() << " seeds (total default time over total tuned time)";
    } else {
      h << "<p>Verification (trained to the target): tuned " << seconds(v["best"].value("time_to_target_s", nlohmann::json())) << ", default "
        << seconds(v["default"].value("time_to_target_s", nlohmann::json()));
    }
    if (v.value("speedup", nlohmann::json()).is_number()) {
      const double speedup = v.value("speedup", 0.0);
      if (speedup >= 1) h << ", <b>" << format_fixed(speedup, 2) << "x sooner</b>";
      else h << ", <b>" << format_fixed(speedup, 2) << "x</b> (the default reached it sooner)";
    }
    h << ".</p>";
  }
  const auto& profiles = tune.value("profiles", nlohmann::json());
  if (profiles.is_object()) h << "<h2>What limits it: bottleneck verdicts</h2>" << verdict_table(profiles);
  const auto& phase1 = tune.value("throughput_phase", nlohmann::json());
  if (phase1.is_object()) {
    const auto& chose = phase1.value("best_changes", nlohmann::json());
    h << "<p class='meta'>Phase 1 (throughput) chose " << (chose.is_string() ? html_escape(chose.get<std::string>()) : std::string("nothing (no trial succeeded)"))
      << "; its report is <code>throughput/report.json</code> in this folder (<code>dyno report</code> that folder for its own page).</p>";
  }
  if (figure.to_target)
    h << "<h2>Time to the target per trial</h2>" << throughput_chart(trials, best_id, figure)
      << "<p class='meta'>Dots: seconds each trial took to reach the target; green: the best; red &#x2715;: failed, rejected or missed the target (hover for the reason).</p>";
  else
    h << "<h2>Throughput per trial</h2>" << throughput_chart(trials, best_id, figure) << "<p class='meta'>Dots: median " << html_escape(figure.unit)
      << "; bars: 95% interval of the median; green: the best; red &#x2715;: failed or rejected trials (hover for the reason).</p>";
  h << "<h2>" << (figure.to_target ? "Time to target" : "Throughput") << " / peak memory Pareto front</h2>"
    << pareto_chart(trials, tune.value("pareto_front", nlohmann::json::array()), figure);

  std::vector<std::pair<std::string, nlohmann::json>> series;
  std::vector<std::pair<double, int64_t>> ranked;  // the best first: the fastest, or the soonest to the target
  for (const auto& t : trials)
    if (const double v = figure.of(t); std::isfinite(v) && !after_search(t)) ranked.emplace_back(figure.to_target ? -v : v, t.value("id", int64_t{0}));
  std::sort(ranked.rbegin(), ranked.rend());
  for (size_t i = 0; i < ranked.size() && series.size() < 6; ++i) {
    auto it = trial_reports.find(ranked[i].second);
    if (it == trial_reports.end()) continue;
    std::string label = "trial " + std::to_string(ranked[i].second);
    for (const auto& t : trials)
      if (t["id"] == ranked[i].second) label += ": " + t.value("changes", "");
    series.emplace_back(label, it->second);
  }
  std::vector<std::pair<std::string, nlohmann::json>> verify_series;
  for (const auto& t : trials)
    if (t.value("stage", "") == "verify")
      if (auto it = trial_reports.find(t.value("id", int64_t{0})); it != trial_reports.end())
        verify_series.emplace_back((t.value("key", "").rfind("verify:best", 0) == 0 ? "tuned, trial " : "default, trial ") + t["id"].dump(), it->second);
  // A program's trials (--command) count the items they report, not optimizer steps, and time
  // their losses by their windows' seconds, their evaluations since the program started.
  const bool programs =
      std::any_of(trial_reports.begin(), trial_reports.end(), [](const auto& r) { return r.second.value("kind", "") == kProgramCurvesKind; });
  const char* progress = programs ? "items" : "step";
  const std::string progress_label = programs ? tune.value("throughput_unit", "items") + " seen" : "optimizer step";
  const std::string loss_time_label = programs ? "seconds of training (the windows' own)" : "wall-clock time (s)",
                    metric_time_label = programs ? "seconds since the program started" : "wall-clock time (s)";
  h << "<h2>Loss curves of the " << (figure.to_target ? "trials soonest to the target" : "fastest configurations") << "</h2>"
    << curves_chart(series, "loss", "training loss", progress, progress_label);
  if (!verify_series.empty()) {
    h << "<h2>Verification runs: loss and metric</h2>" << curves_chart(verify_series, "loss", "training loss", progress, progress_label)
      << curves_chart(verify_series, "metric", "evaluation metric", progress, progress_label)
      << "<h2>Verification runs against wall-clock time</h2><p class='meta'>Time to target is the point: the same runs, with "
         "the time since each run started on the x axis.</p>"
      << curves_chart(verify_series, "metric", "evaluation metric", "time_s", metric_time_label)
      << curves_chart(verify_series, "loss", "training loss", "time_s", loss_time_label);
  }
  if (profiles.is_object()) {
    const int64_t profiled_best = profiles.value("best", nlohmann::json::object()).value("trial", int64_t{-1});
    auto it = trial_reports.find(profiled_best);
    h << "<h2>Op table of the chosen configuration</h2>";
    if (it != trial_reports.end() && it->second.value("profile", nlohmann::json()).is_object()) h << op_table(it->second["profile"]);
    else h << "<p>The chosen configuration's profiled run report is not available.</p>";
  }
  h << "<h2>Phase breakdown of the best configuration</h2>";
  if (auto it = trial_reports.find(best_id); it != trial_reports.end()) h << phase_chart(it->second);
  else h << "<p>The best trial's run report is not available.</p>";
  h << "<h2>Techniques: claimed vs measured</h2>";
  if (techniques.is_object()) h << technique_table(techniques);
  else h << "<p class='meta'>No technique benchmark result given (dyno report DIR --html --techniques RESULT.json).</p>";
  h << "<h2>All trials</h2><table><tr><th>id</th><th>stage</th><th>outcome</th><th>" << html_escape(figure.unit) << "</th><th>"
    << (figure.to_target ? "s to target" : "95% interval") << "</th><th>peak MiB</th><th>changes</th><th>reason</th></tr>";
  for (const auto& t : trials) {
    const auto& to_target = t.value("time_to_target_s", nlohmann::json());
    h << "<tr><td>" << t["id"] << (t["id"] == best_id ? " *" : "") << "</td><td>" << html_escape(t.value("stage", "")) << "</td><td>"
      << html_escape(t.value("outcome", "")) << "</td><td>" << format_fixed(safe(t, "samples_per_second"), 0) << "</td><td>"
      << (figure.to_target ? (to_target.is_number() ? format_fixed(to_target.get<double>(), 1) : std::string("-"))
          : t.value("stage", "") == "verify" ? (to_target.is_number() ? format_fixed(to_target.get<double>(), 1) + " s to target" : std::string("-"))
                                             : "[" + format_fixed(safe(t, "ci_low"), 0) + ", " + format_fixed(safe(t, "ci_high"), 0) + "]")
      << "</td><td>" << format_fixed(safe(t, "peak_memory_bytes") / 1048576.0, 0) << "</td><td>"
      << html_escape(t.value("changes", "")) << "</td><td>" << html_escape(utf8_text(t.value("reason", ""), 120)) << "</td></tr>";
  }
  h << "</table></body></html>\n";
  return h.str();
}

}  // namespace dyno
