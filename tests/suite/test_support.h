// Helpers shared by the suite tests: temporary folders and running the real `dyno` binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include <torch/torch.h>

#include "temp_dir.h"
#include "dyno/workloads/workload_registry.h"
#include <filesystem>
#include <string>

namespace dyno::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `env_prefix DYNO_BINARY args` through the shell (test-only convenience).
inline CommandResult run_dyno(const std::string& args, const std::string& env_prefix = "") {
  const std::string command = env_prefix + " " + DYNO_BINARY + " " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The model parameters (and buffers, when asked) stored in a training-state file.
inline std::vector<torch::Tensor> saved_parameters(const std::string& path, const std::string& workload, bool with_buffers = false) {
  SegmentedModel model = workload_or_throw(workload).build_model();
  torch::serialize::InputArchive archive, model_archive;
  archive.load_from(path);
  archive.read("model", model_archive);
  model->load(model_archive);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  if (with_buffers)
    for (const auto& b : model->buffers()) out.push_back(b.clone());
  return out;
}

}  // namespace dyno::testing
