// embedding_bag and its backward, composed from indexing ops that every
// device has (index_select, index_add_, scatter_reduce_, cumsum), in the
// order PyTorch's CPU kernels fold: each bag sums its rows in index order
// (float16/bfloat16 in float, rounded once), max keeps the first of equal
// rows and a NaN only when it opens the bag. The auxiliary results
// (offset2bag, bag_size, max_indices) are aten's, so PyTorch's autograd
// formula can hand them back to the backward.
#include <limits>

#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {
namespace {

constexpr const char* kOp = "embedding_bag";

void check_index_dtype(const char* what, const Tensor& t) {
  TESSERA_CHECK(t.dtype() == DType::kI64 || t.dtype() == DType::kI32, TypeError, kOp,
                ": expected ", what, " of dtype int64 or int32, got ", describe(t));
}

void check_weight(const Tensor& weight) {
  TESSERA_CHECK(weight.defined(), ValueError, kOp, ": undefined weight");
  TESSERA_CHECK(weight.dim() == 2, ValueError, kOp, ": weight must be 2-D, got ",
                describe(weight));
  TESSERA_CHECK(is_floating(weight.dtype()), TypeError, kOp,
                ": weight must be float16, bfloat16, float32 or float64, got ",
                describe(weight));
}

// padding_idx wrapped into [0, V), or -1 for none.
int64_t wrapped_padding(std::optional<int64_t> padding_idx, int64_t num_weights) {
  if (!padding_idx) return -1;
  const int64_t p = *padding_idx;
  TESSERA_CHECK(p >= -num_weights && p < num_weights, ValueError, kOp,
                ": padding_idx must be within the number of embeddings, -", num_weights,
                " through ", num_weights - 1, ", but got ", p);
  return p < 0 ? p + num_weights : p;
}

// Positions of indices that take part in the reduction (not padding_idx).
Tensor kept_positions(const Tensor& indices, int64_t padding) {
  return nonzero(ne(indices, Scalar(padding))).reshape({-1});
}

// The bag of each index: 1 at every bag's start, summed from the left,
// minus one (bags that start at the same offset are empty but the last).
Tensor offset2bag_of(const Tensor& starts, int64_t n, DType index_dtype) {
  const TensorOptions options(index_dtype, starts.device());
  Tensor marks = zeros({n + 1}, options);
  if (starts.numel() > 0) index_add_(marks, 0, starts, ones({starts.numel()}, options));
  Tensor first = marks.narrow(0, 0, 1);
  first.sub_(ones({1}, options));
  return cumsum(marks, 0, index_dtype).narrow(0, 0, n);
}

// rows [m, D] (bag of each row: bag [m]) folded into [num_bags, D] by max,
// as PyTorch's kernels fold: a row replaces the bag's value when it is
// greater, so a NaN stays only when it opens the bag and ties keep the
// first row. Returns {output, the kept rows' positions [num_bags, D] (m
// where the bag is empty)}.
std::pair<Tensor, Tensor> max_per_bag(const Tensor& rows, const Tensor& bag, int64_t num_bags) {
  const int64_t m = rows.size(0);
  const int64_t d = rows.size(1);
  const Device device = rows.device();
  const TensorOptions long_options(DType::kI64, device);
  Tensor output = zeros({num_bags, d}, TensorOptions(rows.dtype(), device));
  Tensor first_row = full({num_bags, d}, m, long_options);
  if (m == 0) return {output, first_row};
  const Tensor bag64 = bag.to(DType::kI64);
  // A NaN that does not open its bag never wins: it becomes -inf.
  const Tensor previous = cat({full({1}, -1, long_options), bag64.narrow(0, 0, m - 1)});
  const Tensor opens = ne(bag64, previous).unsqueeze(1);
  const Tensor late_nan = logical_and(isnan(rows), logical_not(opens));
  const Tensor folded = where(late_nan, Scalar(-std::numeric_limits<double>::infinity()), rows);
  const Tensor bag_index = bag64.unsqueeze(1).expand({m, d});
  scatter_reduce_(output, 0, bag_index, folded, "amax", /*include_self=*/false);
  // The first row equal to its bag's max (NaN equal to NaN).
  const Tensor bag_max = index_select(output, 0, bag64);
  const Tensor equal =
      logical_or(eq(folded, bag_max), logical_and(isnan(folded), isnan(bag_max)));
  const Tensor position = arange(m, long_options).unsqueeze(1).expand({m, d});
  scatter_reduce_(first_row, 0, bag_index, where(equal, position, Scalar(m)), "amin", true);
  return {output, first_row};
}

}  // namespace

EmbeddingBagResult embedding_bag(const Tensor& weight, const Tensor& indices_in,
                                 const Tensor& offsets_in, EmbeddingBagMode mode,
                                 const Tensor& per_sample_weights, bool include_last_offset,
                                 std::optional<int64_t> padding_idx) {
  check_weight(weight);
  TESSERA_CHECK(indices_in.defined(), ValueError, kOp, ": undefined indices");
  check_index_dtype("indices", indices_in);
  nn_detail::check_same_device(kOp, weight, indices_in);
  const Device device = weight.device();
  Tensor indices = indices_in;
  Tensor offsets = offsets_in;
  if (indices.dim() == 2) {
    // One bag per row.
    TESSERA_CHECK(!offsets.defined(), ValueError, kOp,
                  ": offsets must be None when indices are 2-D, got indices ",
                  describe(indices), " and offsets ", describe(offsets));
    const int64_t length = indices.size(1);
    offsets = arange(Scalar(int64_t{0}), Scalar(indices.numel()),
                     Scalar(std::max<int64_t>(length, 1)), TensorOptions(indices.dtype(), device));
    if (length == 0) offsets = zeros({indices.size(0)}, TensorOptions(indices.dtype(), device));
    indices = indices.reshape({-1});
    include_last_offset = false;
  } else {
    TESSERA_CHECK(indices.dim() == 1, ValueError, kOp,
                  ": indices must be 1-D (with offsets) or 2-D, got ", describe(indices));
    TESSERA_CHECK(offsets.defined(), ValueError, kOp, ": 1-D indices need offsets");
    check_index_dtype("offsets", offsets);
    nn_detail::check_same_device(kOp, weight, offsets);
    TESSERA_CHECK(offsets.dim() == 1, ValueError, kOp, ": offsets must be 1-D, got ",
                  describe(offsets));
  }
  // int32 with int64 computes in int64, as PyTorch promotes them.
  const DType index_dtype =
      indices.dtype() == offsets.dtype() ? indices.dtype() : DType::kI64;
  indices = indices.to(index_dtype).contiguous();
  offsets = offsets.to(index_dtype).contiguous();
  const int64_t n = indices.numel();
  const int64_t num_weights = weight.size(0);
  const int64_t dim = weight.size(1);
  TESSERA_CHECK(!include_last_offset || offsets.numel() >= 1, ValueError, kOp,
                ": include_last_offset needs at least one offset");
  const int64_t num_bags = offsets.numel() - (include_last_offset ? 1 : 0);
  int64_t end = n;  // indices from `end` on are in no bag
  if (offsets.numel() > 0) {
    const std::vector<int64_t> ends =
        stack({offsets.select(0, 0), offsets.select(0, -1)}).to(DType::kI64).to_vector<int64_t>();
    TESSERA_CHECK(ends[0] == 0, ValueError, kOp,
                  ": offsets[0] has to be 0, i.e., the first bag starts at position 0, got ",
                  ends[0]);
    TESSERA_CHECK(ends[1] <= n, ValueError, kOp, ": offsets[-1] (", ends[1],
                  ") can not be greater than the number of indices (", n, ")");
    if (include_last_offset) end = ends[1];
  }
  const bool weighted = per_sample_weights.defined();
  if (weighted) {
    TESSERA_CHECK(mode == EmbeddingBagMode::kSum, ValueError, kOp,
                  ": per_sample_weights only supported with mode='sum'");
    nn_detail::check_same_device(kOp, weight, per_sample_weights);
    TESSERA_CHECK(per_sample_weights.dtype() == weight.dtype(), TypeError, kOp,
                  ": per_sample_weights ", describe(per_sample_weights),
                  " must have weight's dtype (", describe(weight), ")");
    TESSERA_CHECK(per_sample_weights.dim() == 1 && per_sample_weights.numel() == n, ValueError,
                  kOp, ": per_sample_weights must be 1-D with one weight per index (", n,
                  "), got ", describe(per_sample_weights));
  }
  if (n > 0) indexing::check_index_bounds(kOp, indices, num_weights, 0, /*allow_negative=*/false);
  const int64_t padding = wrapped_padding(padding_idx, num_weights);

  const TensorOptions index_options(index_dtype, device);
  EmbeddingBagResult r;
  r.offset2bag = offset2bag_of(offsets.narrow(0, 0, num_bags), n, index_dtype);
  // The indices that take part and their bags (and weights).
  Tensor kept = indices.narrow(0, 0, end);
  Tensor bag = r.offset2bag.narrow(0, 0, end);
  Tensor sample_weights = weighted ? per_sample_weights.narrow(0, 0, end) : Tensor();
  if (padding >= 0) {
    const Tensor keep = kept_positions(kept, padding);
    kept = index_select(kept, 0, keep);
    bag = index_select(bag, 0, keep);
    if (weighted) sample_weights = index_select(sample_weights, 0, keep);
  }
  r.bag_size = zeros({num_bags}, index_options);
  if (mode != EmbeddingBagMode::kSum && kept.numel() > 0 && num_bags > 0) {
    index_add_(r.bag_size, 0, bag, ones({kept.numel()}, index_options));
  }
  if (num_bags == 0 || kept.numel() == 0) {
    r.output = zeros({num_bags, dim}, TensorOptions(weight.dtype(), device));
    r.max_indices = mode == EmbeddingBagMode::kMax ? zeros({num_bags, dim}, index_options)
                                                   : r.bag_size.clone();
    return r;
  }
  Tensor rows = index_select(weight, 0, kept);
  if (mode == EmbeddingBagMode::kMax) {
    auto [output, first_row] = max_per_bag(rows, bag, num_bags);
    const int64_t m = kept.numel();
    const Tensor row_word =
        index_select(kept.to(DType::kI64), 0, clamp_max(first_row, Scalar(m - 1)).reshape({-1}))
            .view({num_bags, dim});
    r.output = output;
    r.max_indices = where(lt(first_row, Scalar(m)), row_word, Scalar(int64_t{0})).to(index_dtype);
    return r;
  }
  const DType accumulate = nn_detail::compute_dtype(weight.dtype());
  rows = rows.to(accumulate);
  if (weighted) rows = mul(rows, sample_weights.to(accumulate).unsqueeze(1));
  Tensor sums = zeros({num_bags, dim}, TensorOptions(accumulate, device));
  index_add_(sums, 0, bag, rows);
  r.output = sums.to(weight.dtype());
  if (mode == EmbeddingBagMode::kMean) {
    div_(r.output, clamp_min(r.bag_size, Scalar(int64_t{1})).to(weight.dtype()).unsqueeze(1));
  }
  r.max_indices = r.bag_size.clone();
  return r;
}

Tensor embedding_bag_dense_backward(const Tensor& grad, const Tensor& indices_in,
                                    const Tensor& offset2bag, const Tensor& bag_size,
                                    const Tensor& max_indices, int64_t num_weights,
                                    bool scale_grad_by_freq, EmbeddingBagMode mode,
                                    const Tensor& per_sample_weights,
                                    std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag_backward";
  TESSERA_CHECK(grad.defined() && grad.dim() == 2 && is_floating(grad.dtype()), ValueError, op,
                ": grad must be a 2-D floating tensor, got ", describe(grad));
  TESSERA_CHECK(indices_in.defined() && indices_in.dim() == 1, ValueError, op,
                ": indices must be 1-D, got ", describe(indices_in));
  check_index_dtype("indices", indices_in);
  nn_detail::check_same_device(op, grad, indices_in);
  TESSERA_CHECK(num_weights >= 0, ValueError, op, ": num_weights must be non-negative, got ",
                num_weights);
  const Device device = grad.device();
  const int64_t dim = grad.size(1);
  const int64_t num_bags = grad.size(0);
  Tensor grad_weight = zeros({num_weights, dim}, TensorOptions(grad.dtype(), device));
  const int64_t padding = wrapped_padding(padding_idx, num_weights);
  if (mode == EmbeddingBagMode::kMax) {
    TESSERA_CHECK(max_indices.defined() && max_indices.dim() == 2 &&
                      max_indices.size(0) == num_bags && max_indices.size(1) == dim &&
                      bag_size.defined() && bag_size.numel() == num_bags,
                  ValueError, op, ": max mode needs max_indices [", num_bags, ", ", dim,
                  "] and bag_size [", num_bags, "], got ", describe(max_indices), " and ",
                  describe(bag_size));
    // Each non-empty bag's gradient goes to the rows its max came from.
    const Tensor filled = nonzero(bag_size).reshape({-1});
    if (filled.numel() == 0) return grad_weight;
    const Tensor rows = index_select(max_indices, 0, filled).to(DType::kI64);
    indexing::check_index_bounds(op, rows, num_weights, 0, /*allow_negative=*/false);
    scatter_add_(grad_weight, 0, rows, index_select(grad, 0, filled).contiguous());
    return grad_weight;
  }
  const int64_t n = indices_in.numel();
  TESSERA_CHECK(offset2bag.defined() && offset2bag.numel() == n, ValueError, op,
                ": offset2bag must hold the bag of each of the ", n, " indices, got ",
                describe(offset2bag));
  if (n == 0) return grad_weight;
  indexing::check_index_bounds(op, indices_in, num_weights, 0, /*allow_negative=*/false);
  Tensor indices = indices_in.to(DType::kI64);
  Tensor bag = offset2bag.to(DType::kI64);
  indexing::check_index_bounds(op, bag, num_bags, 0, /*allow_negative=*/false);
  // The per-index factor, in double as PyTorch's kernel forms it.
  std::optional<Tensor> scale;
  auto scale_by = [&](const Tensor& factor) {
    scale = scale ? mul(*scale, factor) : factor.to(DType::kF64);
  };
  if (per_sample_weights.defined()) {
    TESSERA_CHECK(mode == EmbeddingBagMode::kSum && per_sample_weights.numel() == n, ValueError,
                  op, ": per_sample_weights (mode sum only) need one weight per index (", n,
                  "), got ", describe(per_sample_weights));
    scale_by(per_sample_weights.reshape({-1}));
  }
  if (scale_grad_by_freq) {
    const TensorOptions f64(DType::kF64, device);
    Tensor counts = zeros({num_weights}, f64);
    index_add_(counts, 0, indices, ones({n}, f64));
    scale_by(reciprocal(index_select(counts, 0, indices)));
  }
  if (mode == EmbeddingBagMode::kMean) {
    TESSERA_CHECK(bag_size.defined() && bag_size.numel() == num_bags, ValueError, op,
                  ": mean mode needs bag_size [", num_bags, "], got ", describe(bag_size));
    const Tensor size = index_select(bag_size.reshape({-1}), 0, bag).to(DType::kF64);
    scale_by(reciprocal(where(eq(size, Scalar(0.0)), Scalar(1.0), size)));
  }
  if (padding >= 0) {
    const Tensor keep = kept_positions(indices, padding);
    indices = index_select(indices, 0, keep);
    bag = index_select(bag, 0, keep);
    if (scale) scale = index_select(*scale, 0, keep);
    if (indices.numel() == 0) return grad_weight;
  }
  Tensor contributions = index_select(grad, 0, bag);
  if (scale) contributions = mul(contributions, scale->to(grad.dtype()).unsqueeze(1));
  index_add_(grad_weight, 0, indices, contributions);
  return grad_weight;
}

Tensor embedding_bag_per_sample_weights_backward(const Tensor& grad, const Tensor& weight,
                                                 const Tensor& indices, const Tensor& offset2bag,
                                                 EmbeddingBagMode mode,
                                                 std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag_per_sample_weights_backward";
  TESSERA_CHECK(mode == EmbeddingBagMode::kSum, ValueError, op,
                ": per_sample_weights only supported for mode='sum'");
  check_weight(weight);
  TESSERA_CHECK(grad.defined() && grad.dim() == 2 && grad.size(1) == weight.size(1), ValueError,
                op, ": grad must be [bags, ", weight.size(1), "], got ", describe(grad));
  TESSERA_CHECK(indices.defined() && indices.dim() == 1, ValueError, op,
                ": indices must be 1-D, got ", describe(indices));
  check_index_dtype("indices", indices);
  nn_detail::check_same_device(op, grad, weight);
  nn_detail::check_same_device(op, grad, indices);
  const int64_t n = indices.numel();
  TESSERA_CHECK(offset2bag.defined() && offset2bag.numel() == n, ValueError, op,
                ": offset2bag must hold the bag of each of the ", n, " indices, got ",
                describe(offset2bag));
  const TensorOptions options(grad.dtype(), grad.device());
  if (n == 0) return zeros({0}, options);
  indexing::check_index_bounds(op, indices, weight.size(0), 0, /*allow_negative=*/false);
  const Tensor bag = offset2bag.to(DType::kI64);
  indexing::check_index_bounds(op, bag, grad.size(0), 0, /*allow_negative=*/false);
  const DType accumulate = nn_detail::compute_dtype(grad.dtype());
  const Tensor products = mul(index_select(grad, 0, bag).to(accumulate),
                              index_select(weight, 0, indices).to(accumulate));
  Tensor dots = sum(products, {1}).to(grad.dtype());
  const int64_t padding = wrapped_padding(padding_idx, weight.size(0));
  if (padding >= 0) dots = where(eq(indices, Scalar(padding)), Scalar(0.0), dots);
  return dots;
}

}  // namespace tessera
