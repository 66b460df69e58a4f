#include "models/pooling.h"

#include <cmath>
#include <limits>

#include "models/host_tensor.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera::models {

namespace {

constexpr struct {
  PoolingMode mode;
  std::string_view name;
} kModeNames[] = {
    {PoolingMode::kCls, "cls"},
    {PoolingMode::kMax, "max"},
    {PoolingMode::kMean, "mean"},
    {PoolingMode::kMeanSqrtLen, "mean_sqrt_len_tokens"},
    {PoolingMode::kWeightedMean, "weightedmean"},
    {PoolingMode::kLastToken, "lasttoken"},
};

// The weighted sums over each row's tokens, sum_s weights[b, s] hidden[b, s],
// as one batched product [batch, 1, seq] @ [batch, seq, hidden].
Tensor weighted_token_sum(const Tensor& hidden, const std::vector<float>& weights) {
  const int64_t batch = hidden.size(0), seq = hidden.size(1);
  const Tensor w = tensor_on(hidden.device(), weights, {batch, 1, seq});
  return bmm(w, hidden).view({batch, hidden.size(2)});
}

// sums [batch, hidden] divided by the per-row divisors.
Tensor divide_rows(const Tensor& sums, const std::vector<float>& divisors) {
  return div(sums, tensor_on(sums.device(), divisors, {sums.size(0), 1}));
}

}  // namespace

PoolingMode pooling_mode_from_name(std::string_view name) {
  for (const auto& entry : kModeNames) {
    if (entry.name == name) return entry.mode;
  }
  throw ValueError(detail::concat("unknown pooling mode \"", name,
                                  "\" (expected cls, max, mean, mean_sqrt_len_tokens, "
                                  "weightedmean or lasttoken)"));
}

std::string_view pooling_mode_name(PoolingMode mode) {
  for (const auto& entry : kModeNames) {
    if (entry.mode == mode) return entry.name;
  }
  return "?";
}

Tensor pool(const Tensor& hidden, const std::vector<int64_t>& lengths,
            const std::vector<PoolingMode>& modes) {
  const char* op = "pool";
  TESSERA_CHECK(hidden.dim() == 3 && hidden.dtype() == DType::kF32, ValueError, op,
                ": expected float32 token vectors [batch, seq, hidden], got ", describe(hidden));
  const int64_t batch = hidden.size(0), seq = hidden.size(1), width = hidden.size(2);
  TESSERA_CHECK(static_cast<int64_t>(lengths.size()) == batch, ValueError, op, ": ",
                lengths.size(), " lengths for ", batch, " rows");
  for (int64_t len : lengths) {
    TESSERA_CHECK(len >= 1 && len <= seq, ValueError, op, ": a row length of ", len,
                  " for rows of ", seq, " tokens");
  }
  TESSERA_CHECK(!modes.empty(), ValueError, op, ": no pooling mode given");

  const size_t rows = static_cast<size_t>(batch), cols = static_cast<size_t>(seq);
  std::vector<Tensor> parts;
  for (PoolingMode mode : modes) {
    switch (mode) {
      case PoolingMode::kCls:
        parts.push_back(hidden.select(1, 0));
        break;
      case PoolingMode::kLastToken: {
        std::vector<int64_t> last(rows);
        for (size_t b = 0; b < rows; ++b) last[b] = static_cast<int64_t>(b) * seq + lengths[b] - 1;
        parts.push_back(index_select(hidden.reshape({batch * seq, width}), 0,
                                     tensor_on(hidden.device(), last, {batch})));
        break;
      }
      case PoolingMode::kMax: {
        std::vector<uint8_t> padding(rows * cols, 0);
        for (size_t b = 0; b < rows; ++b) {
          for (size_t s = static_cast<size_t>(lengths[b]); s < cols; ++s) padding[b * cols + s] = 1;
        }
        const Tensor pad = bool_tensor_on(hidden.device(), padding, {batch, seq, 1});
        parts.push_back(
            amax(masked_fill(hidden, pad, -std::numeric_limits<double>::infinity()), {1}));
        break;
      }
      case PoolingMode::kMean:
      case PoolingMode::kMeanSqrtLen: {
        std::vector<float> mask(rows * cols, 0.0f), divisors(rows);
        for (size_t b = 0; b < rows; ++b) {
          for (size_t s = 0; s < static_cast<size_t>(lengths[b]); ++s) mask[b * cols + s] = 1.0f;
          const float count = static_cast<float>(lengths[b]);
          divisors[b] = mode == PoolingMode::kMean ? count : std::sqrt(count);
        }
        parts.push_back(divide_rows(weighted_token_sum(hidden, mask), divisors));
        break;
      }
      case PoolingMode::kWeightedMean: {
        std::vector<float> weights(rows * cols, 0.0f), divisors(rows, 0.0f);
        for (size_t b = 0; b < rows; ++b) {
          for (size_t s = 0; s < static_cast<size_t>(lengths[b]); ++s) {
            weights[b * cols + s] = static_cast<float>(s + 1);
            divisors[b] += static_cast<float>(s + 1);
          }
        }
        parts.push_back(divide_rows(weighted_token_sum(hidden, weights), divisors));
        break;
      }
    }
  }
  return parts.size() == 1 ? parts.front() : cat(parts, 1);
}

}  // namespace tessera::models
