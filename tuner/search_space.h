// SearchSpace: the axes a tuner searches, as data. Each axis is a knob and the list of values to
// try; a space comes from JSON ({"axes": {"batch_size": [32, 64], "threads": {"min": 1, "max": 4,
// "step": 1}}}), from the per-device defaults, and from command-line overrides ("knob=v1,v2",
// "knob=lo:hi:xF", "knob=lo:hi:+S"). Every value is validated against the knob's declaration, so a
// bad space fails before any trial runs, with an error naming the axis and the value. A space for
// an external program may also declare the program's own knobs ("knobs": {"compile": {"type":
// "bool", "default": false}}, with "reference", "role", "warmup_cost": README, "Tune any training
// program"); a declaration takes precedence over a dyno knob of the same name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/knob.h"

namespace dyno {

struct Axis {
  std::string knob;
  std::vector<nlohmann::json> values;
};

class SearchSpace {
 public:
  static SearchSpace from_json(const nlohmann::json& json);
  // threads (powers of two up to `cores`, and `cores`), num_workers, batch_size, lr_scaling=sqrt,
  // set_to_none, amp, checkpointing; the CPU adds host_allocator, CUDA pin_memory, fp16, tf32 and
  // cudnn_benchmark (conv); conv adds channels_last; max_ranks > 1 the DDP knobs.
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
  // Each numeric shortcut's full-precision value (the convergence guard's reference): dyno's
  // (amp off, tf32 false, flush_denormal false) and the declared "reference" values.
  std::vector<std::pair<std::string, nlohmann::json>> exact_values() const;
  // Whether items/s cannot judge the knob: its role is convergence (dyno's, or declared so: it
  // changes how many steps reach a target, not how fast a step runs) or it is declared
  // warmup_cost (its price is paid before the measured steps).
  bool throughput_blind(const std::string& knob) const;
  // Moves the axes of throughput-blind knobs with more than one value into a new space with the
  // same declarations: time to target's second phase searches them; the throughput objective
  // leaves them at their defaults.
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
