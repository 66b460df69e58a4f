#include "models/bert/bert_config.h"

#include <optional>

#include "models/json_config.h"
#include "runtime/core/error.h"

namespace tessera::models {

namespace {

void read_positive(const JsonObject& config, const char* key, int64_t& field) {
  if (std::optional<int64_t> value = config.get_int(key)) {
    TESSERA_CHECK(*value > 0, ValueError, config.source(), ": \"", key,
                  "\" must be positive, got ", *value);
    field = *value;
  }
}

BertActivation parse_activation(const std::string& name, const std::string& source) {
  if (name == "gelu") return BertActivation::kGelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return BertActivation::kGeluTanh;
  if (name == "relu") return BertActivation::kRelu;
  throw ValueError(detail::concat(source, ": \"hidden_act\" \"", name,
                                  "\" is not supported (expected gelu, gelu_new, "
                                  "gelu_pytorch_tanh or relu)"));
}

BertConfig read_config(const JsonObject& config) {
  const std::string& where = config.source();
  // Models of another architecture (RoBERTa offsets its positions, for
  // one) would load without error and compute something else.
  if (std::optional<std::string> type = config.get_string("model_type")) {
    TESSERA_CHECK(*type == "bert", ValueError, where, ": \"model_type\" is \"", *type,
                  "\": only BERT encoders (\"bert\") are supported");
  }
  if (std::optional<std::string> kind = config.get_string("position_embedding_type")) {
    TESSERA_CHECK(*kind == "absolute", ValueError, where, ": \"position_embedding_type\" \"",
                  *kind, "\" is not supported (only \"absolute\")");
  }

  BertConfig c;
  read_positive(config, "vocab_size", c.vocab_size);
  read_positive(config, "hidden_size", c.hidden_size);
  read_positive(config, "num_hidden_layers", c.num_hidden_layers);
  read_positive(config, "num_attention_heads", c.num_attention_heads);
  read_positive(config, "intermediate_size", c.intermediate_size);
  read_positive(config, "max_position_embeddings", c.max_position_embeddings);
  read_positive(config, "type_vocab_size", c.type_vocab_size);
  if (std::optional<std::string> act = config.get_string("hidden_act")) {
    c.hidden_act = parse_activation(*act, where);
  }
  if (std::optional<double> eps = config.get_number("layer_norm_eps")) {
    TESSERA_CHECK(*eps > 0.0, ValueError, where, ": \"layer_norm_eps\" must be positive, got ",
                  *eps);
    c.layer_norm_eps = *eps;
  }
  if (std::optional<int64_t> pad = config.get_int("pad_token_id")) {
    TESSERA_CHECK(*pad >= 0 && *pad < c.vocab_size, ValueError, where, ": \"pad_token_id\" ",
                  *pad, " is outside the vocabulary [0, ", c.vocab_size, ")");
    c.pad_token_id = *pad;
  }
  TESSERA_CHECK(c.hidden_size % c.num_attention_heads == 0, ValueError, where,
                ": \"hidden_size\" ", c.hidden_size,
                " is not a multiple of \"num_attention_heads\" ", c.num_attention_heads);
  return c;
}

}  // namespace

BertConfig BertConfig::from_json(std::string_view json_text, std::string_view source) {
  return read_config(JsonObject::parse(json_text, std::string(source)));
}

BertConfig BertConfig::from_file(const std::string& path) {
  return read_config(JsonObject::read(path, "model config"));
}

}  // namespace tessera::models
