// Files written by Python torch (tests/python/make_scripted_fixtures.py, run by CTest before the
// tests that need them): a user's data and scripted models.
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <torch/script.h>

namespace dyno::testing {

inline std::string fixture(const std::string& name) { return std::string(DYNO_SCRIPTED_FIXTURES) + "/" + name; }

// A small dict saved by torch.save, read whole.
inline c10::Dict<c10::IValue, c10::IValue> saved_dict(const std::string& name) {
  std::ifstream in(fixture(name), std::ios::binary);
  return torch::pickle_load(std::vector<char>(std::istreambuf_iterator<char>(in), {})).toGenericDict();
}

}  // namespace dyno::testing
