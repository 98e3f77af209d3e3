#include "dyno/tuner/search_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "dyno/reports/json_fields.h"
#include "dyno/reports/user_error.h"
#include "dyno/tuner/convergence_guard.h"

namespace dyno {
namespace {

// 1, 2, 4... up to n, and n.
std::vector<nlohmann::json> powers_of_two_to(int64_t n) {
  std::vector<nlohmann::json> values;
  for (int64_t v = 1; v <= std::max<int64_t>(n, 1); v *= 2) values.push_back(v);
  if (values.back().get<int64_t>() != n && n > 1) values.push_back(n);
  return values;
}

std::vector<nlohmann::json> expand_range(const Knob& knob, double lo, double hi, double step, bool geometric) {
  const std::string where = "axis " + knob.name + ": range";
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(step)) {
    std::ostringstream given;
    given << lo << ", " << hi << ", " << step;
    throw UserError("space", where + " needs finite numbers for its bounds and " + (geometric ? "factor" : "step") + ", got " + given.str());
  }
  if (!(lo <= hi)) throw UserError("space", where + " min " + std::to_string(lo) + " is above max " + std::to_string(hi));
  if (geometric ? !(step > 1) : !(step > 0))
    throw UserError("space", where + (geometric ? " factor must be > 1" : " step must be > 0"));
  if (geometric && !(lo > 0)) throw UserError("space", where + " with a factor needs min > 0");
  std::vector<nlohmann::json> values;
  // (The bound allows for the steps' rounding, at any sign of max.)
  for (double v = lo, end = hi + 1e-9 * std::max({std::abs(lo), std::abs(hi), step}); v <= end; v = geometric ? v * step : v + step) {
    if (knob.type == KnobType::Integer) values.push_back(static_cast<int64_t>(std::llround(v)));
    else values.push_back(v);
    if (values.size() > 10000) throw UserError("space", where + " has more than 10000 values");
  }
  return values;
}

}  // namespace

std::string point_key(const nlohmann::json& point) { return point.dump(); }  // nlohmann objects keep keys sorted

SearchSpace SearchSpace::from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("axes") || !json["axes"].is_object())
    throw UserError("space", "expected {\"axes\": {knob: [values] | {\"min\", \"max\", \"step\" | \"factor\"}}}");
  SearchSpace space;
  if (json.contains("knobs")) {
    if (!json["knobs"].is_object()) throw UserError("space", "\"knobs\" must be an object of knob name -> {\"type\": ...}, got " + json["knobs"].dump());
    for (const auto& [name, spec] : json["knobs"].items()) space.declared_.push_back({declared_knob(name, spec), spec});
  }
  JsonFields(json, "space", "the search space").only({"axes", "knobs"});
  for (const auto& [name, spec] : json["axes"].items()) {
    const Knob& knob = space.knob(name);
    std::vector<nlohmann::json> values;
    if (spec.is_array()) {
      values.assign(spec.begin(), spec.end());
    } else if (spec.is_object() && spec.contains("min") && spec.contains("max")) {
      const JsonFields range(spec, "space", "axis " + name);
      range.only({"min", "max", "step", "factor"});
      if (range.has("step") && range.has("factor")) throw UserError("space", "axis " + name + ": a range takes \"step\" or \"factor\", not both");
      const bool geometric = range.has("factor");
      values = expand_range(knob, range.required_number("min"), range.required_number("max"), geometric ? range.number("factor") : range.number("step", 1.0), geometric);
    } else {
      throw UserError("space", "axis " + name + ": " + spec.dump() + " is neither a list of values nor {\"min\", \"max\", ...}");
    }
    space.set_axis(name, values);
  }
  return space;
}

SearchSpace SearchSpace::default_for(const std::string& device, bool convolutional, int64_t cores, int64_t max_ranks) {
  SearchSpace s;
  s.set_axis("threads", powers_of_two_to(cores));
  s.set_axis("num_workers", {0, 1, 2});
  s.set_axis("batch_size", {32, 64, 128, 256, 512, 1024});
  s.set_axis("lr_scaling", {"sqrt"});
  s.set_axis("set_to_none", {true, false});
  if (device == "cuda") {
    s.set_axis("pin_memory", {false, true});
    s.set_axis("amp", {"off", "bf16", "fp16"});
    s.set_axis("tf32", {false, true});
    if (convolutional) s.set_axis("cudnn_benchmark", {false, true});
  } else {
    s.set_axis("amp", {"off", "bf16"});
    s.set_axis("host_allocator", {"system", "hugepages"});
  }
  if (convolutional) s.set_axis("channels_last", {false, true});
  s.set_axis("checkpointing", {false, true});
  if (max_ranks > 1) {
    s.set_axis("ddp.world_size", powers_of_two_to(max_ranks));
    s.set_axis("ddp.bucket_cap_mb", {1.0, 25.0});
    s.set_axis("ddp.gradient_as_bucket_view", {false, true});
    s.set_axis("ddp.comm_hook", device == "cuda" ? std::vector<nlohmann::json>{"none", "fp16", "bf16"} : std::vector<nlohmann::json>{"none", "bf16"});
  }
  return s;
}

const SearchSpace::Declaration* SearchSpace::declaration(const std::string& name) const {
  const auto it = std::find_if(declared_.begin(), declared_.end(), [&](const Declaration& d) { return d.knob.name == name; });
  return it == declared_.end() ? nullptr : &*it;
}

const Knob& SearchSpace::knob(const std::string& name) const {
  if (const Declaration* d = declaration(name)) return d->knob;
  const Knob* knob = find_knob(name);
  if (!knob) {
    std::string tunable;
    for (const auto& k : all_knobs())
      if (k.tunable) tunable += (tunable.empty() ? "" : ", ") + k.name;
    throw UserError("space", "axis '" + name + "' is not a knob; tunable knobs: " + tunable + " (a program's own knob is declared in the space: " +
                                 "\"knobs\": {\"" + name + "\": {\"type\": \"integer\"}}, type bool, integer, real, choice or text)");
  }
  if (!knob->tunable && !knob->testing)
    throw UserError("space", "axis '" + name + "' is a knob the tuner does not search (a run setting: give it with --set; a program's own knob of that " +
                                 "name is declared in the space: \"knobs\": {\"" + name + "\": {\"type\": \"integer\"}})");
  return *knob;
}

nlohmann::json SearchSpace::default_point() const {
  nlohmann::json point = nlohmann::json::object();
  for (const auto& axis : axes_) {
    const Declaration* d = declaration(axis.knob);
    point[axis.knob] = d && d->spec.contains("default") ? d->spec["default"] : axis.values.front();
  }
  return point;
}

std::vector<std::pair<std::string, nlohmann::json>> SearchSpace::exact_values() const {
  std::vector<std::pair<std::string, nlohmann::json>> exact;
  for (const auto& [knob, value] : ConvergenceGuard().exact_values)
    if (!declaration(knob)) exact.emplace_back(knob, value);
  for (const auto& d : declared_)
    if (d.spec.contains("reference")) exact.emplace_back(d.knob.name, d.spec["reference"]);
  return exact;
}

bool SearchSpace::throughput_blind(const std::string& name) const {
  const Knob& k = knob(name);
  return k.role == KnobRole::Convergence || k.warmup_cost;
}

SearchSpace SearchSpace::take_convergence_axes() {
  SearchSpace taken;
  taken.declared_ = declared_;
  std::vector<Axis> kept;
  for (auto& axis : axes_) (throughput_blind(axis.knob) && axis.values.size() > 1 ? taken.axes_ : kept).push_back(std::move(axis));
  axes_ = std::move(kept);
  return taken;
}

void SearchSpace::set_axis(const std::string& knob, std::vector<nlohmann::json> values) {
  const Knob& k = this->knob(knob);
  if (values.empty()) throw UserError("space", "axis " + knob + ": has no values");
  for (auto& v : values) {
    try {
      k.validate(v);
    } catch (const UserError&) {
      throw UserError("space", "axis " + knob + ": value " + v.dump() + " is not " + k.valid_text());
    }
    if (v.is_number()) v = k.type == KnobType::Integer ? nlohmann::json(v.get<int64_t>()) : k.type == KnobType::Real ? nlohmann::json(v.get<double>()) : v;  // 64.0 is 64: one point, one key
  }
  for (size_t i = values.size(); i-- > 1;)  // a value listed twice, or a rounded range's repeat, once
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) != values.begin() + static_cast<std::ptrdiff_t>(i)) values.erase(values.begin() + static_cast<std::ptrdiff_t>(i));
  const auto it = std::find_if(axes_.begin(), axes_.end(), [&](const Axis& a) { return a.knob == knob; });
  if (it != axes_.end()) it->values = std::move(values);
  else axes_.push_back({knob, std::move(values)});
}

void SearchSpace::remove_axis(const std::string& knob) {
  axes_.erase(std::remove_if(axes_.begin(), axes_.end(), [&](const Axis& a) { return a.knob == knob; }), axes_.end());
}

void SearchSpace::override_axis(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("space", "--axis expects knob=v1,v2,... or knob=lo:hi:xF or knob=lo:hi:+S, got '" + spec + "'");
  const std::string name = spec.substr(0, eq);
  const std::string body = spec.substr(eq + 1);
  const Knob& knob = this->knob(name);
  std::vector<nlohmann::json> values;
  if (body.find(':') != std::string::npos) {
    double lo = 0, hi = 0, by = 0;
    char op = 0;
    int used = -1;
    if (std::sscanf(body.c_str(), "%lf:%lf:%c%lf%n", &lo, &hi, &op, &by, &used) != 4 || used != static_cast<int>(body.size()) ||
        (op != 'x' && op != '+'))
      throw UserError("space", "axis " + name + ": range '" + body + "' is not lo:hi:xFACTOR or lo:hi:+STEP");
    values = expand_range(knob, lo, hi, by, op == 'x');
  } else {
    for (size_t start = 0, comma = 0; start <= body.size(); start = comma + 1) {
      comma = std::min(body.find(',', start), body.size());
      const std::string text = body.substr(start, comma - start);
      try {
        values.push_back(knob.parse_text(text));
      } catch (const UserError&) {
        throw UserError("space", "axis " + name + ": value '" + text + "' is not " + knob.valid_text());
      }
    }
  }
  set_axis(name, values);
}

const Axis* SearchSpace::find(const std::string& knob) const {
  const auto it = std::find_if(axes_.begin(), axes_.end(), [&](const Axis& a) { return a.knob == knob; });
  return it == axes_.end() ? nullptr : &*it;
}

int64_t SearchSpace::grid_size() const {
  int64_t n = 1;
  for (const auto& axis : axes_) {
    const auto size = static_cast<int64_t>(axis.values.size());
    if (size > 0 && n > INT64_MAX / size) return INT64_MAX;  // a grid no strategy can enumerate
    n *= size;
  }
  return n;
}

std::vector<nlohmann::json> SearchSpace::grid() const {
  std::vector<nlohmann::json> points{nlohmann::json::object()};
  for (const auto& axis : axes_) {
    std::vector<nlohmann::json> next;
    for (const auto& p : points)
      for (const auto& v : axis.values) next.emplace_back(p)[axis.knob] = v;
    points = std::move(next);
  }
  return points;
}

nlohmann::json SearchSpace::to_json() const {
  nlohmann::json json = {{"axes", nlohmann::json::object()}};
  for (const auto& axis : axes_) json["axes"][axis.knob] = axis.values;
  for (const auto& d : declared_) json["knobs"][d.knob.name] = d.spec;
  return json;
}

}  // namespace dyno
