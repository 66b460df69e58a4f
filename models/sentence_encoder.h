// Sentence embeddings from a sentence-transformers model folder (for
// example all-MiniLM-L6-v2): tokenizer, BERT encoder, pooling and the
// optional L2 normalization, on any device, with no Python.
//
//   using tessera::models::SentenceEncoder;
//   SentenceEncoder encoder = SentenceEncoder::load(model_dir, tessera::Device::parse("cpu"));
//   tessera::Tensor e = encoder.encode({"A sentence.", "Another one."});  // [2, 384]
//   std::vector<float> values = e.to_vector<float>();
//
// encode() sorts the sentences by token count and batches neighbours in
// that order, so each batch pads only to its own longest sentence (and a
// batch stops short of a sentence under half that length); the rows come
// back in the input order. The const methods may run on several threads
// at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/bert/bert_model.h"
#include "models/pooling.h"
#include "models/text/bert_tokenizer.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace tessera::models {

class SentenceEncoder {
 public:
  // Loads model_dir (modules.json, the Pooling config,
  // sentence_bert_config.json, config.json, model.safetensors and the
  // tokenizer's files) onto device. ValueError naming the file for
  // anything missing or malformed, and for pipelines this runtime does
  // not run (modules other than Transformer, Pooling, Normalize).
  static SentenceEncoder load(const std::string& model_dir, Device device);
  // The folder's tokenizer alone, with the encoder's max length (its
  // max_seq_length, capped by the model's positions), without loading
  // any weights.
  static BertTokenizer load_tokenizer(const std::string& model_dir);

  // [n, dimension()] float32 on device(), row i the embedding of
  // sentences[i]; L2-normalized when the folder's modules say so.
  // Sentences longer than max_length() tokens are truncated. batch_size
  // >= 1: the most sentences one forward pass encodes. ValueError naming
  // the sentence for invalid UTF-8.
  Tensor encode(const std::vector<std::string>& sentences, int64_t batch_size = 32) const;
  // The two halves of encode: the token ids of each sentence ([CLS] ...
  // [SEP], truncated), and their embeddings. Each token list must hold
  // 1 to max_position_embeddings ids of the vocabulary.
  std::vector<std::vector<int64_t>> tokenize(const std::vector<std::string>& sentences) const;
  Tensor encode_tokens(const std::vector<std::vector<int64_t>>& token_ids,
                       int64_t batch_size = 32) const;

  int64_t dimension() const;
  Device device() const { return model_.device(); }
  const BertTokenizer& tokenizer() const { return tokenizer_; }
  const BertModel& model() const { return model_; }
  const std::vector<PoolingMode>& pooling() const { return pooling_; }
  bool normalizes() const { return normalize_; }

  // Longest input in tokens, [CLS] and [SEP] included.
  int64_t max_length() const { return tokenizer_.max_length(); }
  // 2 <= max_length <= the model's max_position_embeddings, else ValueError.
  void set_max_length(int64_t max_length);

 private:
  SentenceEncoder(BertTokenizer tokenizer, BertModel model, std::vector<PoolingMode> pooling,
                  bool normalize);
  // One batch: the rows token_ids[order[begin..end)], padded to the
  // longest of them -> pooled [end - begin, dimension()].
  Tensor encode_batch(const std::vector<std::vector<int64_t>>& token_ids,
                      const std::vector<size_t>& order, size_t begin, size_t end) const;

  BertTokenizer tokenizer_;
  BertModel model_;
  std::vector<PoolingMode> pooling_;
  bool normalize_ = false;
};

}  // namespace tessera::models
