// The BERT encoder (Hugging Face's BertModel without its pooler) for
// inference, written with the runtime's op front ends only, so it runs on
// whichever device holds its weights: cpu, vulkan, cuda.
//
//   x = LayerNorm(word[ids] + position[0..S) + token_type[types])
//   per layer:  x = LayerNorm(x + Attention(x) Wo)
//               x = LayerNorm(x + act(x W1) W2)
//
// Load time prepares the weights for inference:
//  - the query, key and value projections become one product (their
//    weights concatenated);
//  - the key bias is dropped: it adds q . b_k to every score of a query's
//    row, which the softmax ignores;
//  - the value bias moves into the attention output's bias: each row of
//    attention weights sums to 1, so it adds b_v to every context row, and
//    W_o (ctx + b_v) + b_o = W_o ctx + (W_o b_v + b_o).
// What remains of the three bias additions is the query's, a third of the
// width. Activations stay [tokens, hidden] matrices between layers, so each
// projection is one GEMM over the whole batch.
#pragma once

#include <string>
#include <vector>

#include "models/bert/bert_config.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"
#include "runtime/io/safetensors.h"

namespace tessera::models {

class BertModel {
 public:
  // The weights of a BertModel (or a BertFor... model: a "bert." prefix on
  // every name is accepted) from a safetensors file, on device. On a
  // host-accessible device the weights borrow the file's mapped pages;
  // floating weights of another dtype are converted to float32. ValueError
  // naming the file and the tensor for a missing tensor or a shape that
  // disagrees with the config.
  static BertModel load(const SafetensorsFile& weights, const BertConfig& config, Device device);

  // The last hidden state [batch, seq, hidden] (float32, on device()) of
  // input_ids [batch, seq] (int64, on device()). token_type_ids: the same
  // shape, or undefined for all zeros. attention_bias: additive float32
  // [batch, 1, 1, seq], 0 for a token and -inf for padding, or undefined
  // when no row is padded. seq must not exceed max_position_embeddings.
  Tensor forward(const Tensor& input_ids, const Tensor& token_type_ids,
                 const Tensor& attention_bias) const;

  const BertConfig& config() const { return config_; }
  Device device() const { return device_; }

 private:
  struct LayerNormWeights {
    Tensor weight, bias;
  };
  struct Layer {
    Tensor qkv_weight;  // [3 hidden, hidden]: query, key, value
    Tensor query_bias;  // [hidden]; the key's is dropped, the value's folded below
    Tensor attention_out_weight;
    Tensor attention_out_bias;  // b_o + W_o b_v
    LayerNormWeights attention_norm;
    Tensor intermediate_weight, intermediate_bias;
    Tensor output_weight, output_bias;
    LayerNormWeights output_norm;
  };

  BertModel(BertConfig config, Device device) : config_(config), device_(device) {}
  Tensor embed(const Tensor& input_ids, const Tensor& token_type_ids) const;
  // x [tokens, hidden] through one layer, for `batch` rows of `seq` tokens.
  Tensor run_layer(const Layer& layer, const Tensor& x, int64_t batch, int64_t seq,
                   const Tensor& attention_bias) const;
  Tensor activation(Tensor x) const;
  Tensor norm(const Tensor& x, const LayerNormWeights& w) const;

  BertConfig config_;
  Device device_;
  Tensor word_embeddings_;              // [vocab, hidden]
  Tensor position_embeddings_;          // [max_positions, hidden]
  Tensor token_type_embeddings_;        // [type_vocab, hidden]
  // position_embeddings_ + token_type_embeddings_[0]: the sum every
  // single-segment input (all token types 0) adds, made once.
  Tensor position_and_type0_;
  LayerNormWeights embedding_norm_;
  std::vector<Layer> layers_;
};

}  // namespace tessera::models
