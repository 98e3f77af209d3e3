#include "dyno/workloads/models/char_transformer.h"

#include <torch/torch.h>

namespace dyno {
namespace {

namespace nn = torch::nn;

class EmbeddingImpl : public nn::Module {
 public:
  explicit EmbeddingImpl(const CharTransformerOptions& o)
      : token_(register_module("token", nn::Embedding(o.vocabulary, o.width))),
        position_(register_module("position", nn::Embedding(o.context, o.width))),
        dropout_(register_module("dropout", nn::Dropout(o.dropout))) {}

  torch::Tensor forward(torch::Tensor tokens) {
    auto positions = torch::arange(tokens.size(1), tokens.options().dtype(torch::kLong));
    return dropout_->forward(token_->forward(tokens) + position_->forward(positions));
  }

 private:
  nn::Embedding token_;
  nn::Embedding position_;
  nn::Dropout dropout_;
};
TORCH_MODULE(Embedding);

class BlockImpl : public nn::Module {
 public:
  explicit BlockImpl(const CharTransformerOptions& o)
      : heads_(o.heads),
        dropout_p_(o.dropout),
        norm1_(register_module("norm1", nn::LayerNorm(nn::LayerNormOptions({o.width})))),
        qkv_(register_module("qkv", nn::Linear(o.width, 3 * o.width))),
        proj_(register_module("proj", nn::Linear(o.width, o.width))),
        norm2_(register_module("norm2", nn::LayerNorm(nn::LayerNormOptions({o.width})))),
        up_(register_module("up", nn::Linear(o.width, 4 * o.width))),
        down_(register_module("down", nn::Linear(4 * o.width, o.width))),
        dropout_(register_module("dropout", nn::Dropout(o.dropout))) {}

  torch::Tensor forward(torch::Tensor x) {
    const auto batch = x.size(0), time = x.size(1), width = x.size(2);
    auto qkv = qkv_->forward(norm1_->forward(x)).view({batch, time, 3, heads_, width / heads_}).permute({2, 0, 3, 1, 4});
    auto attended = at::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], /*attn_mask=*/{},
                                                     is_training() ? dropout_p_ : 0.0, /*is_causal=*/true);
    x = x + dropout_->forward(proj_->forward(attended.transpose(1, 2).reshape({batch, time, width})));
    x = x + dropout_->forward(down_->forward(torch::gelu(up_->forward(norm2_->forward(x)))));
    return x;
  }

 private:
  int64_t heads_;
  double dropout_p_;
  nn::LayerNorm norm1_;
  nn::Linear qkv_, proj_;
  nn::LayerNorm norm2_;
  nn::Linear up_, down_;
  nn::Dropout dropout_;
};
TORCH_MODULE(Block);

}  // namespace

SegmentedModel make_char_transformer(const CharTransformerOptions& o) {
  TORCH_CHECK(o.width % o.heads == 0, "width ", o.width, " is not divisible by heads ", o.heads);
  SegmentedModel model;
  model->add_segment("embedding", nn::Sequential(Embedding(o)));
  for (int64_t i = 0; i < o.layers; ++i) model->add_segment("block" + std::to_string(i), nn::Sequential(Block(o)));
  model->add_segment("head", nn::Sequential(nn::LayerNorm(nn::LayerNormOptions({o.width})), nn::Linear(o.width, o.vocabulary)));
  return model;
}

}  // namespace dyno
