// dyno's own workloads, registered like a user's; the `dyno` executable and the tests link this file.
#include <torch/torch.h>

#include "dyno/workloads/fashion_mnist_source.h"
#include "dyno/workloads/fortunes_corpus.h"
#include "dyno/workloads/models/char_transformer.h"
#include "dyno/workloads/models/conv_net.h"
#include "dyno/workloads/models/mlp.h"
#include "dyno/workloads/models/mobile_net.h"
#include "dyno/workloads/token_source.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

constexpr int64_t kTextContext = 64;

int64_t fashion_limit(const std::string& size, bool train) {
  if (size == "tiny") return train ? 512 : 256;
  if (size == "small") return train ? 6000 : 2000;
  return 0;  // full
}

WorkloadData load_fashion(const std::string& size) {
  return {fashion_mnist_source("train", fashion_limit(size, true)), fashion_mnist_source("t10k", fashion_limit(size, false))};
}

WorkloadData load_text(const std::string& size) {
  const int64_t max_bytes = size == "tiny" ? 48 * 1024 : size == "small" ? 400 * 1024 : 0;
  CharCorpus corpus = load_fortunes(max_bytes);
  auto tokens = torch::from_blob(corpus.tokens.data(), {static_cast<int64_t>(corpus.tokens.size())}, torch::kUInt8).clone();
  // The last 10% of the corpus (its files joined in name order, cut at that byte) is the validation split.
  const int64_t split = tokens.numel() * 9 / 10;
  return {std::make_shared<TokenSource>(tokens.narrow(0, 0, split).contiguous(), kTextContext),
          std::make_shared<TokenSource>(tokens.narrow(0, split, tokens.numel() - split).contiguous(), kTextContext)};
}

constexpr char kFashionData[] = "Fashion-MNIST (Debian dataset-fashion-mnist), 60,000 train / 10,000 test";

Workload fashion_mlp() {
  Workload w;
  w.name = "fashion-mlp";
  w.description = "MLP 784-256-128-10 on Fashion-MNIST";
  w.data_description = kFashionData;
  w.metric_name = "accuracy";
  w.target = 0.88;
  w.target_note = "published MLP 256-128-100 reaches 0.8833";
  w.recipe = {"adamw", 1e-3, 1e-4, 0.9, "cosine", 0.02, 15, 64};
  w.load_data = load_fashion;
  w.build_model = [] { return make_mlp(784, {256, 128}, 10); };
  return w;
}

Workload fashion_cnn() {
  Workload w;
  w.name = "fashion-cnn";
  w.description = "2 conv blocks with BatchNorm (no conv bias) + 2 linear layers on Fashion-MNIST";
  w.data_description = kFashionData;
  w.metric_name = "accuracy";
  w.target = 0.91;
  w.target_note = "published 2 conv + pooling + BN reaches 0.934";
  w.convolutional = true;
  w.recipe = {"adamw", 2e-3, 1e-4, 0.9, "cosine", 0.02, 12, 64};
  w.load_data = load_fashion;
  w.build_model = [] { return make_conv_net(10); };
  return w;
}

Workload fashion_mobilenet() {
  Workload w;
  w.name = "fashion-mobilenet";
  w.description = "depthwise-separable conv blocks with squeeze-excitation on Fashion-MNIST";
  w.data_description = kFashionData;
  w.metric_name = "accuracy";
  w.target = 0.90;
  w.target_note = "published MobileNet (with flips) reaches 0.950";
  w.convolutional = true;
  w.recipe = {"adamw", 3e-3, 1e-4, 0.9, "cosine", 0.02, 15, 64};
  w.load_data = load_fashion;
  w.build_model = [] { return make_mobile_net(10); };
  return w;
}

Workload text_transformer() {
  Workload w;
  w.name = "text-transformer";
  w.description = "decoder-only character Transformer LM (4 layers, width 128, context 64)";
  w.data_description = "fortunes corpus (Debian fortunes), ~90% train / 10% validation";
  w.metric_name = "val_loss";
  w.higher_is_better = false;
  w.target = 1.75;
  w.target_note = "validation cross-entropy, nats per character; the recipe measured 1.731 after 4 epochs (2248 steps, 583 s on 2 CPU cores)";
  w.throughput_unit = "tokens";
  w.recipe = {"adamw", 2e-3, 0.01, 0.9, "cosine", 0.05, 4, 64};
  w.load_data = load_text;
  w.build_model = [] { return make_char_transformer(CharTransformerOptions{kCharVocabularySize, kTextContext, 128, 4, 4, 0.1}); };
  return w;
}

}  // namespace

DYNO_WORKLOAD(fashion_mlp);
DYNO_WORKLOAD(fashion_cnn);
DYNO_WORKLOAD(fashion_mobilenet);
DYNO_WORKLOAD(text_transformer);

}  // namespace dyno
