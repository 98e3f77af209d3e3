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

// load_data's own error, not a dyno::UserError (a missing file, in the user's words).
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "misfit-throws";
  w.load_data = [](const std::string&) -> dyno::WorkloadData { throw std::runtime_error("cannot open /data/train.bin"); };
  w.build_model = linear_model;
  return w;
});

// A loss left per example, not reduced to a mean.
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "misfit-unreduced-loss";
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<dyno::TensorSource>(torch::randn({64, 4}), torch::zeros({64}, torch::kLong));
    return dyno::WorkloadData{source, source};
  };
  w.build_model = linear_model;
  w.loss = [](const torch::Tensor& output, const torch::Tensor& target) {
    return torch::nn::functional::cross_entropy(output, target, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  };
  return w;
});

// An ExampleSource of the user's own whose batches leave Batch::items at 0.
class UncountedSource : public dyno::ExampleSource {
 public:
  int64_t size() const override { return 64; }
  dyno::Batch make_batch(const std::vector<int64_t>& indices) const override {
    const auto n = static_cast<int64_t>(indices.size());
    return {torch::randn({n, 4}), torch::zeros({n}, torch::kLong)};
  }
};
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "misfit-uncounted";
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<UncountedSource>();
    return dyno::WorkloadData{source, source};
  };
  w.build_model = linear_model;
  return w;
});

// Every part fits, but no target is set (0).
DYNO_WORKLOAD([] {
  dyno::Workload w;
  w.name = "no-target";
  w.load_data = [](const std::string&) {
    auto source = std::make_shared<dyno::TensorSource>(torch::randn({64, 4}), torch::zeros({64}, torch::kLong));
    return dyno::WorkloadData{source, source};
  };
  w.build_model = linear_model;
  return w;
});

DYNO_MAIN();
