// A second file registering a workload under a name already taken (see broken_tool.cpp).
#include <dyno/dyno.h>

namespace {
dyno::Workload copy() {
  dyno::Workload w;
  w.name = "fashion-resmlp";
  w.load_data = [](const std::string&) { return dyno::WorkloadData{}; };
  w.build_model = [] { return dyno::SegmentedModel(); };
  return w;
}
}  // namespace

DYNO_WORKLOAD(copy);
