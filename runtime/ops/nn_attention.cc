// scaled_dot_product_attention, the math path written once from matmul,
// softmax, where and dropout: softmax(q k^T * scale + mask) v. A device
// with a fused attention kernel can take it over later without changing
// callers.
#include <cmath>
#include <limits>

#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  const char* op = "scaled_dot_product_attention";
  nn_detail::check_same_device(op, query, key);
  nn_detail::check_same_device(op, query, value);
  TESSERA_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), TypeError, op,
                ": expected query, key and value to have the same dtype, got ", describe(query),
                ", ", describe(key), " and ", describe(value));
  TESSERA_CHECK(is_floating(query.dtype()), TypeError, op,
                ": expected floating query, key and value, got ", describe(query));
  TESSERA_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, ValueError, op,
                ": expected query, key and value of at least 2 dims, got ", describe(query), ", ",
                describe(key), " and ", describe(value));
  TESSERA_CHECK(query.size(-1) == key.size(-1) && key.size(-2) == value.size(-2), ValueError, op,
                ": shapes do not match: query ", shape_to_string(query.sizes()), ", key ",
                shape_to_string(key.sizes()), ", value ", shape_to_string(value.sizes()));
  TESSERA_CHECK(!(is_causal && attn_mask.defined()), ValueError, op,
                ": explicit attn_mask should not be set when is_causal=True");
  TESSERA_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, ValueError, op,
                ": dropout probability has to be between 0 and 1, but got ", dropout_p);
  const int64_t L = query.size(-2), S = key.size(-2);
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));

  Tensor scores = mul(matmul(query, key.transpose(-2, -1)), s);
  Tensor keep;  // bool, true = attend
  if (is_causal) {
    keep = tril(ones({L, S}, TensorOptions(DType::kBool, query.device())));
  } else if (attn_mask.defined()) {
    nn_detail::check_same_device(op, query, attn_mask);
    TESSERA_CHECK(nn_detail::broadcasts_to(attn_mask.sizes(), scores.sizes()),
                  ValueError, op, ": attn_mask ", shape_to_string(attn_mask.sizes()),
                  " cannot be broadcast to the scores ", shape_to_string(scores.sizes()));
    if (attn_mask.dtype() == DType::kBool) {
      keep = attn_mask;
    } else {
      TESSERA_CHECK(attn_mask.dtype() == query.dtype(), TypeError, op,
                    ": expected a bool attn_mask or one of query's dtype, got ",
                    describe(attn_mask), " and ", describe(query));
      scores = add(scores, attn_mask);
    }
  }
  Tensor probs;
  if (keep.defined()) {
    // Masked positions get probability 0; a row with no position to attend
    // gives zeros rather than NaN, as PyTorch's math path (_safe_softmax).
    const double neg_inf = -std::numeric_limits<double>::infinity();
    probs = where(keep, softmax(where(keep, scores, neg_inf), -1), 0.0);
  } else if (attn_mask.defined()) {
    // An additive mask can make a whole row -inf: zeros there, not NaN,
    // as for a bool mask.
    const double neg_inf = -std::numeric_limits<double>::infinity();
    probs = where(eq(amax(scores, {-1}, true), neg_inf), 0.0, softmax(scores, -1));
  } else {
    probs = softmax(scores, -1);
  }
  if (dropout_p > 0.0) probs = dropout(probs, dropout_p, true);
  return matmul(probs, value);
}

}  // namespace tessera
