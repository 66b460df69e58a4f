#include "models/bert/bert_model.h"

#include <string>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera::models {

namespace {

// Reads the tensors of one checkpoint, checking each one's shape against
// the config before it is used.
class WeightReader {
 public:
  WeightReader(const SafetensorsFile& file, Device device) : file_(file), device_(device) {
    // BertModel saves "embeddings...", the task models (BertForMaskedLM...)
    // "bert.embeddings...".
    const std::string probe = "embeddings.word_embeddings.weight";
    if (file.contains(probe)) {
      prefix_ = "";
    } else if (file.contains("bert." + probe)) {
      prefix_ = "bert.";
    } else {
      throw ValueError(detail::concat(file.path(),
                                      ": not the weights of a BERT model: no tensor \"", probe,
                                      "\" (nor \"bert.", probe, "\")"));
    }
  }

  Tensor get(const std::string& name, const Shape& expected) const {
    const std::string full = prefix_ + name;
    TESSERA_CHECK(file_.contains(full), ValueError, file_.path(),
                  ": the BERT weight \"", full, "\" is missing");
    const SafetensorsFile::Entry& entry = file_.entry(full);
    TESSERA_CHECK(entry.shape == expected, ValueError, file_.path(), ": \"", full, "\" is ",
                  shape_to_string(entry.shape), ", the model config makes it ",
                  shape_to_string(expected));
    TESSERA_CHECK(is_floating(entry.dtype), TypeError, file_.path(), ": \"", full,
                  "\" must be floating, got ", dtype_name(entry.dtype));
    // Inference runs in float32 (as sentence-transformers' default).
    return file_.tensor(full, device_).to(DType::kF32);
  }

 private:
  const SafetensorsFile& file_;
  Device device_;
  std::string prefix_;
};

// x [tokens, in] @ weight [out, in]^T + bias, the bias added in place
// into the fresh product while it is in cache (linear() adds it into
// another new tensor: on the CPU device that costs the feed-forward
// layers about a sixth of their product's time).
Tensor project(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Tensor y = mm(x, weight.t());
  if (bias.defined()) y.add_(bias);
  return y;
}

}  // namespace

BertModel BertModel::load(const SafetensorsFile& weights, const BertConfig& config,
                          Device device) {
  const WeightReader reader(weights, device);
  const int64_t h = config.hidden_size, inner = config.intermediate_size;
  BertModel model(config, device);
  model.word_embeddings_ = reader.get("embeddings.word_embeddings.weight", {config.vocab_size, h});
  model.position_embeddings_ =
      reader.get("embeddings.position_embeddings.weight", {config.max_position_embeddings, h});
  model.token_type_embeddings_ =
      reader.get("embeddings.token_type_embeddings.weight", {config.type_vocab_size, h});
  model.position_and_type0_ =
      add(model.position_embeddings_, model.token_type_embeddings_.select(0, 0));
  model.embedding_norm_ = {reader.get("embeddings.LayerNorm.weight", {h}),
                           reader.get("embeddings.LayerNorm.bias", {h})};

  model.layers_.reserve(static_cast<size_t>(config.num_hidden_layers));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
      return reader.get(p + name + ".weight", {rows, cols});
    };
    auto vector = [&](const std::string& name, int64_t size) {
      return reader.get(p + name + ".bias", {size});
    };
    Layer layer;
    layer.qkv_weight = cat({matrix("attention.self.query", h, h),
                            matrix("attention.self.key", h, h),
                            matrix("attention.self.value", h, h)},
                           0);
    layer.query_bias = vector("attention.self.query", h);
    vector("attention.self.key", h);  // checked, then dropped (see the header)
    layer.attention_out_weight = matrix("attention.output.dense", h, h);
    layer.attention_out_bias =
        add(vector("attention.output.dense", h),
            mv(layer.attention_out_weight, vector("attention.self.value", h)));
    layer.attention_norm = {reader.get(p + "attention.output.LayerNorm.weight", {h}),
                            reader.get(p + "attention.output.LayerNorm.bias", {h})};
    layer.intermediate_weight = matrix("intermediate.dense", inner, h);
    layer.intermediate_bias = vector("intermediate.dense", inner);
    layer.output_weight = matrix("output.dense", h, inner);
    layer.output_bias = vector("output.dense", h);
    layer.output_norm = {reader.get(p + "output.LayerNorm.weight", {h}),
                         reader.get(p + "output.LayerNorm.bias", {h})};
    model.layers_.push_back(std::move(layer));
  }
  return model;
}

Tensor BertModel::forward(const Tensor& input_ids, const Tensor& token_type_ids,
                          const Tensor& attention_bias) const {
  const char* op = "BertModel::forward";
  TESSERA_CHECK(input_ids.dim() == 2 && input_ids.dtype() == DType::kI64, ValueError, op,
                ": expected int64 input_ids [batch, seq], got ", describe(input_ids));
  TESSERA_CHECK(input_ids.device() == device_, DeviceError, op, ": input_ids are on ",
                input_ids.device().to_string(), ", the model on ", device_.to_string());
  const int64_t batch = input_ids.size(0), seq = input_ids.size(1);
  TESSERA_CHECK(seq <= config_.max_position_embeddings, ValueError, op, ": ", seq,
                " tokens per row, the model has positions for ", config_.max_position_embeddings);
  if (token_type_ids.defined()) {
    TESSERA_CHECK(token_type_ids.sizes() == input_ids.sizes() &&
                      token_type_ids.dtype() == DType::kI64 && token_type_ids.device() == device_,
                  ValueError, op, ": expected token_type_ids like input_ids ",
                  describe(input_ids), ", got ", describe(token_type_ids));
  }
  if (attention_bias.defined()) {
    TESSERA_CHECK(attention_bias.sizes() == Shape({batch, 1, 1, seq}) &&
                      attention_bias.dtype() == DType::kF32 && attention_bias.device() == device_,
                  ValueError, op, ": expected a float32 attention_bias [", batch, ", 1, 1, ", seq,
                  "] on ", device_.to_string(), ", got ", describe(attention_bias));
  }
  const int64_t hidden = config_.hidden_size;
  if (batch == 0 || seq == 0) {
    return empty({batch, seq, hidden}, TensorOptions(DType::kF32, device_));
  }

  Tensor x = embed(input_ids, token_type_ids).view({batch * seq, hidden});
  for (const Layer& layer : layers_) x = run_layer(layer, x, batch, seq, attention_bias);
  return x.view({batch, seq, hidden});
}

Tensor BertModel::embed(const Tensor& input_ids, const Tensor& token_type_ids) const {
  const int64_t seq = input_ids.size(1);
  // Positions are 0..seq-1 in every row: a slice, broadcast over the batch.
  Tensor x = embedding(word_embeddings_, input_ids);
  if (token_type_ids.defined()) {
    x.add_(position_embeddings_.narrow(0, 0, seq));
    x.add_(embedding(token_type_embeddings_, token_type_ids));
  } else {
    x.add_(position_and_type0_.narrow(0, 0, seq));
  }
  return norm(x, embedding_norm_);
}

Tensor BertModel::run_layer(const Layer& layer, const Tensor& x, int64_t batch, int64_t seq,
                            const Tensor& attention_bias) const {
  const int64_t hidden = config_.hidden_size, heads = config_.num_attention_heads;
  const int64_t head_dim = config_.head_dim();

  Tensor qkv = project(x, layer.qkv_weight, Tensor());  // [tokens, 3 hidden]
  qkv.narrow(1, 0, hidden).add_(layer.query_bias);
  // -> [3, batch, heads, seq, head_dim], a view.
  const Tensor heads_view =
      qkv.view({batch, seq, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
  // attention_blocked: the runtime's attention over blocks of queries,
  // which devices may run as one fused kernel (the CPU device does).
  const Tensor context = std::get<0>(attention_blocked(
      heads_view.select(0, 0), heads_view.select(0, 1), heads_view.select(0, 2), attention_bias));
  // [batch, heads, seq, head_dim] -> [tokens, hidden].
  const Tensor merged = context.transpose(1, 2).reshape({batch * seq, hidden});

  Tensor attended = project(merged, layer.attention_out_weight, layer.attention_out_bias);
  attended.add_(x);
  const Tensor h = norm(attended, layer.attention_norm);

  Tensor out = project(activation(project(h, layer.intermediate_weight, layer.intermediate_bias)),
                       layer.output_weight, layer.output_bias);
  out.add_(h);
  return norm(out, layer.output_norm);
}

Tensor BertModel::activation(Tensor x) const {
  switch (config_.hidden_act) {
    case BertActivation::kGelu:
      return gelu_(x);
    case BertActivation::kGeluTanh:
      return gelu_(x, "tanh");
    case BertActivation::kRelu:
      return relu_(x);
  }
  return x;
}

Tensor BertModel::norm(const Tensor& x, const LayerNormWeights& w) const {
  return layer_norm(x, {config_.hidden_size}, w.weight, w.bias, config_.layer_norm_eps);
}

}  // namespace tessera::models
