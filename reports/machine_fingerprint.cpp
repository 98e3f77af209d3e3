#include "dyno/reports/machine_fingerprint.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

namespace dyno {
namespace {

// The environment fields that change a throughput figure. Not the host name (identical runners
// have different names) nor dyno's revision (that is what a check judges).
constexpr const char* kFields[] = {"cpu_model", "cores", "memory_gib", "device", "device_name", "libtorch_version", "cuda_version", "cudnn_version", "threads"};
// The fields that name the machine: a record without them could be any machine's.
constexpr const char* kIdentity[] = {"cpu_model", "device_name"};

}  // namespace

MachineFingerprint MachineFingerprint::of(const nlohmann::json& environment) {
  MachineFingerprint f;
  if (!environment.is_object()) return f;
  for (const char* key : kFields)
    if (environment.contains(key) && !environment[key].is_null()) f.fields_[key] = environment[key];
  // Whole GiB: the kernel's reservations move the byte count a little between boots.
  if (environment.contains("memory_bytes") && environment["memory_bytes"].is_number() && environment["memory_bytes"].get<double>() > 0)
    f.fields_["memory_gib"] = static_cast<int64_t>(std::llround(environment["memory_bytes"].get<double>() / (1024.0 * 1024.0 * 1024.0)));
  return f;
}

std::vector<std::string> MachineFingerprint::differing_fields(const MachineFingerprint& other) const {
  std::vector<std::string> out;
  for (const char* key : kFields)
    if (fields_.contains(key) && other.fields_.contains(key) && fields_[key] != other.fields_[key]) out.push_back(key);
  return out;
}

std::vector<std::string> MachineFingerprint::fields_not_compared(const MachineFingerprint& here) const {
  std::vector<std::string> out;
  for (const char* key : kFields)
    if (!fields_.contains(key) && here.fields_.contains(key) && std::find(std::begin(kIdentity), std::end(kIdentity), std::string(key)) == std::end(kIdentity))
      out.push_back(key);
  return out;
}

std::vector<std::string> MachineFingerprint::differences(const MachineFingerprint& here) const {
  std::vector<std::string> out;
  for (const char* key : kIdentity)
    if (!fields_.contains(key) && here.fields_.contains(key)) out.push_back(std::string(key) + ": not recorded, " + here.fields_[key].dump() + " here");
  for (const auto& key : differing_fields(here))
    out.push_back(key + ": " + fields_[key].dump() + " recorded, " + here.fields_[key].dump() + " here");
  return out;
}

std::string MachineFingerprint::id() const { return digest_of(fields_); }

std::string digest_of(const nlohmann::json& json) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : json.dump()) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(text, 12);
}

}  // namespace dyno
