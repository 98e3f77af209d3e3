// Registers "fashion-resmlp" here and in my_workload_again.cpp: run, it must exit 2 naming both files.
#include <dyno/dyno.h>

namespace {
dyno::Workload first() {
  dyno::Workload w;
  w.name = "fashion-resmlp";
  w.load_data = [](const std::string&) { return dyno::WorkloadData{}; };
  w.build_model = [] { return dyno::SegmentedModel(); };
  return w;
}
}  // namespace

DYNO_WORKLOAD(first);
DYNO_MAIN();
