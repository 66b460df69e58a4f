// Sentence-transformers' pooling: one vector per sentence from the
// encoder's token vectors [batch, seq, hidden], over the real tokens of
// each row (rows are padded on the right). Several modes concatenate, in
// the order given, as sentence_transformers.models.Pooling does.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"

namespace tessera::models {

enum class PoolingMode {
  kCls,           // "cls": the first token ([CLS])
  kMax,           // "max": the element-wise maximum over the tokens
  kMean,          // "mean": the mean over the tokens
  kMeanSqrtLen,   // "mean_sqrt_len_tokens": the sum over sqrt(token count)
  kWeightedMean,  // "weightedmean": token i weighted by i + 1
  kLastToken,     // "lasttoken": the last real token ([SEP])
};

// The mode named as in a Pooling config.json ("mean", "cls", ...);
// ValueError listing the names for any other.
PoolingMode pooling_mode_from_name(std::string_view name);
std::string_view pooling_mode_name(PoolingMode mode);

// [batch, modes.size() * hidden] float32 on hidden's device, from hidden
// [batch, seq, hidden] float32 whose row b has lengths[b] real tokens
// (1 <= lengths[b] <= seq) followed by padding.
Tensor pool(const Tensor& hidden, const std::vector<int64_t>& lengths,
            const std::vector<PoolingMode>& modes);

}  // namespace tessera::models
