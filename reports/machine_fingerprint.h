// MachineFingerprint: what a stored throughput figure depends on besides the code: CPU model,
// cores, memory (GiB), device and its name, LibTorch, CUDA and cuDNN versions, intra-op threads. Taken
// from a run report's environment. A figure recorded under one fingerprint says nothing about a
// machine with another, so `dyno check` judges a stored baseline only under an equal fingerprint
// (elsewhere its verdict is NOT COMPARABLE) and keeps baselines per fingerprint side by side.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

class MachineFingerprint {
 public:
  static MachineFingerprint of(const nlohmann::json& environment);

  // The fields both sides know and that differ. A field one side lacks (a baseline recorded
  // before dyno stored it) is not a difference.
  std::vector<std::string> differing_fields(const MachineFingerprint& other) const;
  // "field: recorded vs here" for each differing field, and "field: not recorded" for each field
  // naming the machine (CPU model, device name) that `here` has and this record lacks: a record
  // without them could be any machine's.
  std::vector<std::string> differences(const MachineFingerprint& here) const;
  // The other fields `here` has that this one lacks: not compared, so assumed to match.
  std::vector<std::string> fields_not_compared(const MachineFingerprint& here) const;
  // 12 hex digits of a hash of the fields: the name of a baseline kept beside others.
  std::string id() const;  // digest_of(fields())
  const nlohmann::json& fields() const { return fields_; }

 private:
  nlohmann::json fields_ = nlohmann::json::object();
};

// 12 hex digits of FNV-1a over `json`'s canonical text (its keys sorted): a short, stable name.
std::string digest_of(const nlohmann::json& json);

}  // namespace dyno
