#include "models/sentence_encoder.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <numeric>

#include "models/host_tensor.h"
#include "models/sentence_transformer_config.h"
#include "runtime/core/error.h"
#include "runtime/io/safetensors.h"
#include "runtime/ops/ops.h"

namespace tessera::models {

namespace {

namespace fs = std::filesystem;

std::string join(const std::string& dir, const char* name) {
  return (fs::path(dir) / name).string();
}

// The folder's tokenizer truncating at max_seq_length (else its own max
// length), never beyond the model's positions: sentence-transformers'
// rule.
BertTokenizer make_tokenizer(const SentenceTransformerConfig& st, const BertConfig& config) {
  BertTokenizer tokenizer = BertTokenizer::from_folder(st.transformer_dir);
  const int64_t wanted = st.max_seq_length.value_or(tokenizer.max_length());
  tokenizer.set_max_length(std::min(wanted, config.max_position_embeddings));
  return tokenizer;
}

// Rows divided by their L2 norms (at least 1e-12), as torch's
// F.normalize, which sentence-transformers' Normalize module calls.
Tensor l2_normalize_rows(const Tensor& x) {
  return div(x, clamp_min(norm(x, 2.0, {1}, /*keepdim=*/true), 1e-12));
}

}  // namespace

SentenceEncoder::SentenceEncoder(BertTokenizer tokenizer, BertModel model,
                                 std::vector<PoolingMode> pooling, bool normalize)
    : tokenizer_(std::move(tokenizer)),
      model_(std::move(model)),
      pooling_(std::move(pooling)),
      normalize_(normalize) {}

SentenceEncoder SentenceEncoder::load(const std::string& model_dir, Device device) {
  const SentenceTransformerConfig st = SentenceTransformerConfig::read(model_dir);
  const BertConfig config = BertConfig::from_file(join(st.transformer_dir, "config.json"));
  BertTokenizer tokenizer = make_tokenizer(st, config);
  TESSERA_CHECK(tokenizer.vocab_size() <= config.vocab_size, ValueError, model_dir,
                ": the tokenizer's vocabulary has ", tokenizer.vocab_size(),
                " tokens, the model's embeddings only ", config.vocab_size);
  if (st.pooling_dimension) {
    TESSERA_CHECK(*st.pooling_dimension == config.hidden_size, ValueError, model_dir,
                  ": the Pooling module expects vectors of ", *st.pooling_dimension,
                  ", the model's hidden size is ", config.hidden_size);
  }
  const std::string weights_path = join(st.transformer_dir, "model.safetensors");
  std::error_code error;
  TESSERA_CHECK(fs::exists(weights_path, error), ValueError, "no weights file ", weights_path,
                " (the weights must be in safetensors format)");
  const SafetensorsFile weights = SafetensorsFile::open(weights_path);
  return SentenceEncoder(std::move(tokenizer), BertModel::load(weights, config, device),
                         st.pooling, st.normalize);
}

BertTokenizer SentenceEncoder::load_tokenizer(const std::string& model_dir) {
  const SentenceTransformerConfig st = SentenceTransformerConfig::read(model_dir);
  return make_tokenizer(st, BertConfig::from_file(join(st.transformer_dir, "config.json")));
}

int64_t SentenceEncoder::dimension() const {
  return static_cast<int64_t>(pooling_.size()) * model_.config().hidden_size;
}

void SentenceEncoder::set_max_length(int64_t max_length) {
  const int64_t positions = model_.config().max_position_embeddings;
  TESSERA_CHECK(max_length >= 2 && max_length <= positions, ValueError,
                "SentenceEncoder::set_max_length: ", max_length,
                " is outside [2, ", positions, "] (the model's positions)");
  tokenizer_.set_max_length(max_length);
}

std::vector<std::vector<int64_t>> SentenceEncoder::tokenize(
    const std::vector<std::string>& sentences) const {
  std::vector<std::vector<int64_t>> token_ids;
  token_ids.reserve(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    try {
      token_ids.push_back(tokenizer_.encode(sentences[i]));
    } catch (const ValueError& e) {
      throw ValueError(detail::concat("sentence ", i, ": ", e.what()));
    }
  }
  return token_ids;
}

Tensor SentenceEncoder::encode(const std::vector<std::string>& sentences,
                               int64_t batch_size) const {
  TESSERA_CHECK(batch_size >= 1, ValueError,
                "SentenceEncoder::encode: batch_size must be >= 1, got ", batch_size);
  return encode_tokens(tokenize(sentences), batch_size);
}

Tensor SentenceEncoder::encode_tokens(const std::vector<std::vector<int64_t>>& token_ids,
                                      int64_t batch_size) const {
  const char* op = "SentenceEncoder::encode_tokens";
  TESSERA_CHECK(batch_size >= 1, ValueError, op, ": batch_size must be >= 1, got ", batch_size);
  const BertConfig& config = model_.config();
  for (size_t i = 0; i < token_ids.size(); ++i) {
    const std::vector<int64_t>& ids = token_ids[i];
    const int64_t count = static_cast<int64_t>(ids.size());
    TESSERA_CHECK(count >= 1 && count <= config.max_position_embeddings, ValueError, op,
                  ": sentence ", i, " has ", count,
                  " tokens, expected 1 to ", config.max_position_embeddings);
    for (int64_t id : ids) {
      TESSERA_CHECK(id >= 0 && id < config.vocab_size, ValueError, op, ": sentence ", i,
                    " has the token id ", id, ", outside the vocabulary [0, ", config.vocab_size,
                    ")");
    }
  }
  const size_t n = token_ids.size();
  if (n == 0) return empty({0, dimension()}, TensorOptions(DType::kF32, device()));

  // Longest first: sentences of similar length share a batch, and the
  // largest batch comes first, when the allocator has the most to give.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return token_ids[a].size() > token_ids[b].size();
  });
  // A batch takes up to batch_size sentences in that order, and ends
  // early at one shorter than half its first (longest): rows padded to
  // more than twice their length would cost more than another pass.
  std::vector<Tensor> batches;
  const size_t limit = static_cast<size_t>(batch_size);
  for (size_t begin = 0, end; begin < n; begin = end) {
    const size_t longest = token_ids[order[begin]].size();
    end = begin + 1;
    while (end < n && end - begin < limit && 2 * token_ids[order[end]].size() >= longest) ++end;
    batches.push_back(encode_batch(token_ids, order, begin, end));
  }
  Tensor sorted = batches.size() == 1 ? batches.front() : cat(batches, 0);
  if (normalize_) sorted = l2_normalize_rows(sorted);

  // Row order[i] of the result is row i of sorted.
  std::vector<int64_t> source_row(n);
  bool in_order = true;
  for (size_t i = 0; i < n; ++i) {
    source_row[order[i]] = static_cast<int64_t>(i);
    in_order = in_order && order[i] == i;
  }
  if (in_order) return sorted.contiguous();
  return index_select(sorted, 0, tensor_on(device(), source_row, {static_cast<int64_t>(n)}));
}

Tensor SentenceEncoder::encode_batch(const std::vector<std::vector<int64_t>>& token_ids,
                                     const std::vector<size_t>& order, size_t begin,
                                     size_t end) const {
  const size_t rows = end - begin;
  size_t seq = 0;
  for (size_t r = begin; r < end; ++r) seq = std::max(seq, token_ids[order[r]].size());

  std::vector<int64_t> ids(rows * seq, tokenizer_.pad_id()), lengths(rows);
  bool padded = false;
  for (size_t r = 0; r < rows; ++r) {
    const std::vector<int64_t>& row = token_ids[order[begin + r]];
    std::copy(row.begin(), row.end(), ids.begin() + static_cast<ptrdiff_t>(r * seq));
    lengths[r] = static_cast<int64_t>(row.size());
    padded = padded || row.size() < seq;
  }
  const int64_t b = static_cast<int64_t>(rows), s = static_cast<int64_t>(seq);
  // Padding keys get -inf: no query attends them. Without padding there
  // is nothing to mask and attention runs without a bias.
  Tensor bias;
  if (padded) {
    std::vector<float> values(rows * seq, 0.0f);
    for (size_t r = 0; r < rows; ++r) {
      std::fill(values.begin() + static_cast<ptrdiff_t>(r * seq + static_cast<size_t>(lengths[r])),
                values.begin() + static_cast<ptrdiff_t>((r + 1) * seq),
                -std::numeric_limits<float>::infinity());
    }
    bias = tensor_on(device(), values, {b, 1, 1, s});
  }
  const Tensor hidden = model_.forward(tensor_on(device(), ids, {b, s}), Tensor(), bias);
  return pool(hidden, lengths, pooling_);
}

}  // namespace tessera::models
