// The first place where two JSON values differ, in words a message can quote: for a journal's
// header against a resumed run's, "base_config/workload \"fashion-mlp\", not \"fashion-cnn\""
// instead of two long values cut off before they differ.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

// "<name><path> <a's value>, not <b's value>" at the first difference (RFC 6902 order); a value
// absent on one side reads "(none)". Empty when the two are equal.
std::string first_difference(const std::string& name, const nlohmann::json& a, const nlohmann::json& b);

}  // namespace dyno
