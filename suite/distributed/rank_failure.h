// RankFailure: a collective of a distributed job that failed because another rank did (it died,
// hangs, or its connection was lost). Neither this rank's input nor a bug: the CLI exits with
// kExitRankFailed, so that a launcher can tell the rank that failed first from those that
// failed with it. LibTorch's c10::DistError is the same case and leaves the same way.
#pragma once

#include <stdexcept>
#include <string>

namespace dyno {

class RankFailure : public std::runtime_error {
 public:
  explicit RankFailure(const std::string& message) : std::runtime_error("[ddp] " + message) {}
};
constexpr int kExitRankFailed = 4;

// What a rank says when its collective failed with `what`.
inline std::string collective_failure(const std::string& what) {
  return "a collective with the other ranks failed: " + what + " (another rank failed or the connection to it was lost)";
}

// NCCL refusing how the job uses it (ncclInvalidUsage, ncclInvalidArgument; two ranks on one GPU
// are "Duplicate GPU detected"): the job's configuration, exit 2 on every rank, not a peer's failure.
inline bool nccl_refused_usage(const std::string& what) {
  return what.find("ncclInvalidUsage") != std::string::npos || what.find("ncclInvalidArgument") != std::string::npos;
}
inline std::string nccl_usage_failure(const std::string& what) {
  if (what.find("Duplicate GPU") != std::string::npos)
    return "NCCL refused the job's use of the GPUs: " + what +
           " (nccl needs a GPU of its own for every rank: give each rank another GPU, or set ddp.backend=gloo)";
  return "NCCL refused how the job called it: " + what + " (run with NCCL_DEBUG=WARN for its reason)";
}

}  // namespace dyno
