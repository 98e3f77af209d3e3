// CheckBaseline: a stored baseline of `dyno check --record FILE`: the complete run config, one
// figure per measurement process (`figure` names which: the run's window_p90), and the
// environment that recorded them (its machine fingerprint decides whether they are comparable).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct CheckBaseline {
  nlohmann::json config = nlohmann::json::object();
  std::string figure;  // "median" in baselines older than the field
  std::vector<double> runs;
  nlohmann::json environment = nlohmann::json::object();
};

// Throws UserError("check", ...) naming the file and the field for anything but a baseline whose
// config is a valid run config and whose runs are positive finite figures.
CheckBaseline read_check_baseline(const std::string& path);
CheckBaseline check_baseline_from_json(const nlohmann::json& json, const std::string& path);

}  // namespace dyno
