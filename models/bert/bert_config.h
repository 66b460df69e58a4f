// The hyperparameters of a BERT encoder, read from a Hugging Face
// config.json (BertConfig). Keys that are absent take Hugging Face's
// defaults; a key with the wrong JSON type or an impossible value is a
// ValueError naming the file and the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::models {

// config.json's hidden_act.
enum class BertActivation {
  kGelu,      // "gelu": x * Phi(x) with the exact erf
  kGeluTanh,  // "gelu_new", "gelu_pytorch_tanh": the tanh approximation
  kRelu,      // "relu"
};

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  BertActivation hidden_act = BertActivation::kGelu;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 0;

  int64_t head_dim() const { return hidden_size / num_attention_heads; }

  // Parses config.json's text; `source` names it in errors (a path).
  static BertConfig from_json(std::string_view json_text, std::string_view source);
  // Reads and parses the file at path.
  static BertConfig from_file(const std::string& path);
};

}  // namespace tessera::models
