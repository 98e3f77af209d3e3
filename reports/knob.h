// Knob: the single declaration of one RunConfig field (name, type, default, valid values, one-line
// description, and how to read and write it). Parsing, `--set key=value`, `dyno knobs`,
// validation, the report and the tuner's search space are all driven by the table of knobs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct RunConfig;

enum class KnobType { Integer, Real, Boolean, Choice, Text };

// What a knob is to the tuner, declared once here: process-wide settings and the data pipeline
// (tried first, in that order), the batch size, numeric shortcuts (checked against their
// full-precision values by the convergence guard), convergence knobs (the time-to-target search's
// own axes), or any other.
enum class KnobRole { Other, Process, Pipeline, Batch, Numerics, Convergence };

std::string to_string(KnobType type);

struct Knob {
  std::string name;
  KnobType type = KnobType::Integer;
  std::string description;
  double min_value = 0;  // Integer and Real: inclusive range
  double max_value = 0;
  std::vector<std::string> choices;  // Choice: the valid values
  bool tunable = false;              // may appear on a tuner's search axis
  bool testing = false;              // a testing option; allowed on an axis to exercise the tuner itself
  KnobRole role = KnobRole::Other;
  // Changes how fast a step runs, not the numbers it computes: two points that differ only in
  // such knobs train along the same loss trajectory (one can be the other's guard reference).
  bool speed_only = false;
  // Costs time once, before the steps it speeds up (compiling, for one): throughput leaves warm-up
  // out, so time to target judges it by training to the target (phase 2), not by throughput.
  bool warmup_cost = false;
  std::function<nlohmann::json(const RunConfig&)> get;
  std::function<void(RunConfig&, const nlohmann::json&)> assign;  // value already validated

  nlohmann::json default_value() const;
  // Human text for the valid values: "one of off, fp16, bf16", "an integer in [1, 64]", ...
  std::string valid_text() const;
  // Parses command-line text ("true", "3", "bf16") into a JSON value of this knob's type.
  nlohmann::json parse_text(const std::string& text) const;
  // Throws UserError("config", "<name>: <value> is not <valid>") when the value is not valid.
  void validate(const nlohmann::json& value) const;
};

const std::vector<Knob>& all_knobs();
// nullptr when no knob has that name.
const Knob* find_knob(const std::string& name);
// Like find_knob, but throws a UserError that lists the known names.
const Knob& knob_or_throw(const std::string& name, const std::string& where = "config");

// A knob's value as a command line writes it: a text as it is, anything else as its JSON (64, true, 0.5).
std::string knob_value_text(const nlohmann::json& value);
// A program's own knob, as a search space declares it: {"type": bool|integer|real|choice|text,
// "min", "max", "choices", "default", "reference", "role", "convergence" (true: the role
// convergence), "warmup_cost"}. A UserError("space", ...) names the knob, the field and what is valid.
Knob declared_knob(const std::string& name, const nlohmann::json& spec);
// The knob's role, or Other for a name no knob has (a program's own knob).
KnobRole role_of(const std::string& name);

}  // namespace dyno
