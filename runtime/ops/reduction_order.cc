// Order statistics and running extremes: cummax / cummin, kthvalue and
// median (over a dim and over everything). Composites over the sort and
// pointwise ops, so every device runs them natively.
#include <cmath>
#include <optional>
#include <tuple>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// The positions 0..n-1 along dim d of a tensor of `sizes`, as int64.
Tensor positions_along(const Shape& sizes, int64_t d, Device device) {
  Shape view(sizes.size(), 1);
  view[d] = sizes[d];
  return arange(sizes[d], TensorOptions(DType::kI64, device)).view(view).expand(sizes);
}

// cummax / cummin as a Hillis-Steele scan: after the step of shift s, each
// position holds the extreme of the 2s positions ending at it. The combine
// keeps the later of two (value, index) pairs when its value is NaN, or
// when neither is NaN and it is at least (at most) the earlier's, which is
// PyTorch's rule (ties and NaNs take the last index); the rule picks the
// last position holding the extreme of a total order, so it is
// associative and the scan is exact. log2(n) steps of a few pointwise ops.
std::tuple<Tensor, Tensor> running_extreme(bool is_max, const char* name, const Tensor& t,
                                           int64_t dim) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  Tensor values = t.contiguous().clone();
  if (t.dim() == 0) return {values, zeros({}, TensorOptions(DType::kI64, t.device()))};
  Tensor indices = positions_along(t.sizes(), d, t.device()).contiguous();
  const int64_t n = t.size(d);
  if (t.numel() == 0) return {values, indices};
  for (int64_t s = 1; s < n; s *= 2) {
    const Tensor left_v = values.narrow(d, 0, n - s), right_v = values.narrow(d, s, n - s);
    const Tensor left_i = indices.narrow(d, 0, n - s), right_i = indices.narrow(d, s, n - s);
    const Tensor beats = is_max ? ge(right_v, left_v) : le(right_v, left_v);
    const Tensor take_right =
        logical_or(isnan(right_v), logical_and(logical_not(isnan(left_v)), beats));
    values = cat({values.narrow(d, 0, s), where(take_right, right_v, left_v)}, d);
    indices = cat({indices.narrow(d, 0, s), where(take_right, right_i, left_i)}, d);
  }
  return {values, indices};
}

// The k-th smallest (0-based position `pos`, per line) along d of t's
// stable ascending sort, NaN sorting last: values and their indices.
std::tuple<Tensor, Tensor> pick_sorted(const Tensor& t, int64_t d, const Tensor& pos,
                                       bool keepdim) {
  auto [sorted, order] = sort(t, d, /*descending=*/false, /*stable=*/true);
  Tensor v = gather(sorted, d, pos), i = gather(order, d, pos);
  if (!keepdim) {
    v = v.squeeze(d);
    i = i.squeeze(d);
  }
  return {v, i};
}

Shape line_sizes(const Tensor& t, int64_t d) {
  Shape s = t.sizes();
  s[d] = 1;
  return s;
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) {
  return running_extreme(true, "cummax", t, dim);
}
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) {
  return running_extreme(false, "cummin", t, dim);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  const char* name = "kthvalue";
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  TESSERA_CHECK(k >= 1 && k <= n, IndexError, name,
                "(): selected number k out of range for dimension ", d, " (k = ", k,
                ", size ", n, ")");
  TESSERA_CHECK(t.dtype() != DType::kBool, TypeError, name, "(): not implemented for bool (",
                describe(t), ")");
  if (t.dim() == 0) return {t.clone(), zeros({}, TensorOptions(DType::kI64, t.device()))};
  const Tensor pos = full(line_sizes(t, d), k - 1, TensorOptions(DType::kI64, t.device()));
  return pick_sorted(t, d, pos, keepdim);
}

// The lower median; a line holding NaN gives NaN at its first NaN, as
// PyTorch (NaNs sort last, so the first NaN sits at n - count(NaN)).
std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  const char* name = "median";
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  TESSERA_CHECK(t.dtype() != DType::kBool, TypeError, name, "(): not implemented for bool (",
                describe(t), ")");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  if (t.dim() == 0) return {t.clone(), zeros({}, TensorOptions(DType::kI64, t.device()))};
  const int64_t n = t.size(d);
  Shape out_sizes = line_sizes(t, d);
  if (!keepdim) out_sizes.erase(out_sizes.begin() + d);
  if (checked_numel(out_sizes, name) == 0) {
    return {empty(out_sizes, TensorOptions(t.dtype(), t.device())),
            empty(out_sizes, TensorOptions(DType::kI64, t.device()))};
  }
  TESSERA_CHECK(n > 0, IndexError, name, "(): Expected reduction dim ", d,
                " to have non-zero size, got ", describe(t));
  Tensor pos = full(line_sizes(t, d), (n - 1) / 2, TensorOptions(DType::kI64, t.device()));
  if (is_floating(t.dtype())) {
    const Tensor nans = sum(isnan(t), {d}, /*keepdim=*/true);  // int64
    pos = where(gt(nans, 0), add(neg(nans), n), pos);
  }
  return pick_sorted(t, d, pos, keepdim);
}

Tensor median(const Tensor& t) {
  TESSERA_CHECK(t.defined(), ValueError, "median: undefined tensor");
  if (t.numel() == 0) {
    TESSERA_CHECK(t.dtype() != DType::kBool, TypeError, "median(): not implemented for bool");
    // As PyTorch: NaN for floating dtypes (an integer dtype has no NaN).
    TESSERA_CHECK(is_floating(t.dtype()), ValueError,
                  "median(): cannot compute the median of an empty integer tensor, got ",
                  describe(t));
    return full({}, NAN, TensorOptions(t.dtype(), t.device()));
  }
  return std::get<0>(median(t.reshape({-1}), 0, false));
}

}  // namespace tessera
