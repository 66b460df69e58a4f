// What a sentence-transformers model folder says about its pipeline:
// modules.json lists the modules (Transformer, Pooling, Normalize), the
// Pooling module's config.json its modes, and sentence_bert_config.json the
// longest input. A folder without modules.json is a plain Hugging Face
// model, which sentence-transformers runs with mean pooling and no
// normalization; so does this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/pooling.h"

namespace tessera::models {

struct SentenceTransformerConfig {
  // The Transformer module's folder: config.json, model.safetensors and the
  // tokenizer's files.
  std::string transformer_dir;
  std::vector<PoolingMode> pooling = {PoolingMode::kMean};
  // The Pooling config's embedding dimension (the transformer's hidden
  // size), when it gives one.
  std::optional<int64_t> pooling_dimension;
  bool normalize = false;  // a Normalize module: L2-normalized embeddings
  // sentence_bert_config.json's max_seq_length, when given.
  std::optional<int64_t> max_seq_length;

  // ValueError naming the file for a missing folder, unreadable or
  // malformed JSON, and modules this runtime does not implement (Dense,
  // ...), so that a model is never run with part of its pipeline missing.
  static SentenceTransformerConfig read(const std::string& model_dir);
};

}  // namespace tessera::models
