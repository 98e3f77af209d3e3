// Workloads whose parts do not fit, registered with lambdas whose bodies hold braces (the
// macro's arguments): the binary names each mistake instead of crashing or blaming itself.
#include <dyno/dyno.h>

namespace {

dyno::SegmentedModel linear_model() {
  dyno::SegmentedModel model;
  model->add_segment("head", torch::nn::Sequential(torch::nn::Linear(4, 2)));
  return model;
}

}  // namespace

// load_data forgot the evaluation source.
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "misfit-no-eval";
  w.load_data = [](const std::string&) { return dyno::WorkloadData{std::make_shared<dyno::TensorSource>(torch::randn({64, 4}), torch::zeros({64}, torch::kLong)), nullptr}; };
  w.build_model = linear_model;
  return w;
});

// Float targets for the default cross-entropy over class indices.
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "misfit-float-targets";
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<dyno::TensorSource>(torch::randn({64, 4}), torch::rand({64}));
    return dyno::WorkloadData{source, source};
  };
  w.build_model = linear_model;
  return w;
});

DYNO_MAIN();
