// SearchSpace: the axes a tuner searches, as data (a knob and its values each), every value
// validated before any trial runs. A program's space may declare its own knobs ("knobs": README,
// "Tune any training program"), which take precedence over dyno's of the same name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyno/reports/knob.h"

namespace dyno {

struct Axis {
  std::string knob;
  std::vector<nlohmann::json> values;
};

class SearchSpace {
 public:
  // {"axes": {"batch_size": [32, 64], "threads": {"min": 1, "max": 4, "step": 1}}, "knobs": {...}}
  static SearchSpace from_json(const nlohmann::json& json);
  // The default space of a device (README, "Tune"); conv adds channels_last, max_ranks > 1 DDP's knobs.
  static SearchSpace default_for(const std::string& device, bool convolutional, int64_t cores, int64_t max_ranks = 1);

  // "knob=v1,v2" | "knob=lo:hi:xF" | "knob=lo:hi:+S"; replaces or adds that axis.
  void override_axis(const std::string& spec);
  void set_axis(const std::string& knob, std::vector<nlohmann::json> values);
  void remove_axis(const std::string& knob);

  const std::vector<Axis>& axes() const { return axes_; }
  // The declaration of `name`: the space's own, else dyno's table (UserError naming the axis).
  const Knob& knob(const std::string& name) const;
  bool declares_knobs() const { return !declared_.empty(); }
  // The point a program runs without tuning: each axis's declared default, else its first value.
  nlohmann::json default_point() const;
  // Each numeric shortcut's full-precision value (the guard's reference): dyno's and the declared.
  std::vector<std::pair<std::string, nlohmann::json>> exact_values() const;
  // Whether items/s cannot judge the knob: its role is convergence, or it is declared warmup_cost.
  bool throughput_blind(const std::string& knob) const;
  // Moves the axes of throughput-blind knobs with more than one value into a new space with the
  // same declarations (time to target's phase 2).
  SearchSpace take_convergence_axes();
  const Axis* find(const std::string& knob) const;
  int64_t grid_size() const;
  // Every point, in lexicographic order of the axes (the grid strategy's order).
  std::vector<nlohmann::json> grid() const;
  nlohmann::json to_json() const;

 private:
  struct Declaration {
    Knob knob;
    nlohmann::json spec;  // as written: "default", "reference", "convergence"
  };
  const Declaration* declaration(const std::string& name) const;

  std::vector<Axis> axes_;
  std::vector<Declaration> declared_;
};

// Canonical text for a point (sorted keys), used as its identity in journals.
std::string point_key(const nlohmann::json& point);

}  // namespace dyno
