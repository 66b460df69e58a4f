// linalg.cross and cdist (with its backward): composites over pointwise
// ops, rolls and reductions, so every device runs them natively.
#include <cmath>
#include <limits>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

// -- cross: along dim, with a' and a'' the components rolled by one and
// two, a x b = a' b'' - a'' b' (component 0 is a1 b2 - a2 b1, and so on).
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  const char* op = "linalg.cross";
  TESSERA_CHECK(a.defined() && b.defined(), ValueError, op, ": undefined tensor argument");
  nn_detail::check_same_device(op, a, b);
  TESSERA_CHECK(a.dim() == b.dim(), ValueError, op,
                ": inputs must have the same number of dimensions, got ", describe(a), " and ",
                describe(b));
  TESSERA_CHECK(a.dtype() == b.dtype(), TypeError, op, ": expected inputs of one dtype, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.dtype() != DType::kBool, TypeError, op, ": not implemented for bool (",
                describe(a), ")");
  TESSERA_CHECK(a.dim() > 0, ValueError, op, ": expected inputs of at least 1 dimension");
  const int64_t d = wrap_dim(dim, a.dim(), op);
  TESSERA_CHECK(a.size(d) == 3 && b.size(d) == 3, ValueError, op, ": inputs dimension ", dim,
                " must have length 3. Got ", a.size(d), " and ", b.size(d));
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  if (checked_numel(shape, op) == 0) return empty(shape, TensorOptions(a.dtype(), a.device()));
  const Tensor a1 = roll(a, {-1}, {d}), a2 = roll(a, {-2}, {d});
  const Tensor b1 = roll(b, {-1}, {d}), b2 = roll(b, {-2}, {d});
  return sub(mul(a1, b2), mul(a2, b1));
}

Tensor& linalg_cross_out(Tensor& out, const Tensor& a, const Tensor& b, int64_t dim) {
  return write_out("linalg.cross", out, linalg_cross(a, b, dim));
}

// -- cdist. The rows' differences [..., R1, R2, M] are formed for a block
// of x1's rows at a time, so the temporary stays near kBlockElements
// whatever R1 is.
namespace {

constexpr int64_t kBlockElements = int64_t{1} << 24;

struct CdistShapes {
  Shape batch;      // broadcast batch dims
  int64_t r1, r2, m;
};

CdistShapes check_cdist(const char* op, const Tensor& x1, const Tensor& x2, double p) {
  TESSERA_CHECK(x1.defined() && x2.defined(), ValueError, op, ": undefined tensor argument");
  nn_detail::check_same_device(op, x1, x2);
  TESSERA_CHECK(x1.dim() >= 2 && x2.dim() >= 2, ValueError, op,
                ": only supports at least 2D tensors, got ", describe(x1), " and ",
                describe(x2));
  TESSERA_CHECK(x1.dtype() == DType::kF32 || x1.dtype() == DType::kF64, TypeError, op,
                ": only supports float32 and float64 (as PyTorch), got ", describe(x1));
  TESSERA_CHECK(x1.dtype() == x2.dtype(), TypeError, op, ": expected inputs of one dtype, got ",
                describe(x1), " and ", describe(x2));
  TESSERA_CHECK(x1.size(-1) == x2.size(-1), ValueError, op,
                ": X1 and X2 must have the same number of columns. X1: ", x1.size(-1),
                " X2: ", x2.size(-1));
  TESSERA_CHECK(p >= 0 && !std::isnan(p), ValueError, op,
                ": only supports non-negative p values, got ", p);
  const Shape b1(x1.sizes().begin(), x1.sizes().end() - 2);
  const Shape b2(x2.sizes().begin(), x2.sizes().end() - 2);
  return {broadcast_shapes(b1, b2, op), x1.size(-2), x2.size(-2), x1.size(-1)};
}

Shape concat(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// Rows of x1 per block: the [block, R2, M] differences fit kBlockElements.
int64_t rows_per_block(const CdistShapes& s) {
  const int64_t per_row =
      std::max<int64_t>(1, checked_mul(checked_numel(s.batch, "cdist"),
                                       checked_mul(s.r2, s.m, "cdist"), "cdist"));
  return std::max<int64_t>(1, kBlockElements / per_row);
}

// Calls f(first_row, rows) for each block of x1's rows.
template <typename F>
void for_each_block(const CdistShapes& s, F&& f) {
  const int64_t block = rows_per_block(s);
  for (int64_t r = 0; r < s.r1; r += block) f(r, std::min(block, s.r1 - r));
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  const char* op = "cdist";
  const CdistShapes s = check_cdist(op, x1, x2, p);
  const Tensor a = x1.expand(concat(s.batch, {s.r1, s.m}));
  const Tensor b = x2.expand(concat(s.batch, {s.r2, s.m})).unsqueeze(-3);  // [..., 1, R2, M]
  Tensor out = empty(concat(s.batch, {s.r1, s.r2}), TensorOptions(x1.dtype(), x1.device()));
  if (out.numel() == 0) return out;
  if (s.m == 0) return out.zero_();  // every distance over no coordinates is 0
  for_each_block(s, [&](int64_t row, int64_t rows) {
    const Tensor diff = sub(a.narrow(-2, row, rows).unsqueeze(-2), b);  // [..., rows, R2, M]
    Tensor dist;
    if (p == 0) {
      dist = sum(ne(diff, 0).to(x1.dtype()), {-1});
    } else if (p == 1) {
      dist = sum(abs(diff), {-1});
    } else if (p == 2) {
      dist = sqrt(sum(mul(diff, diff), {-1}));
    } else if (std::isinf(p)) {
      dist = amax(abs(diff), {-1});
    } else {
      dist = pow(sum(pow(abs(diff), p), {-1}), 1.0 / p);
    }
    Tensor block = out.narrow(-2, row, rows);
    block.copy_(dist);
  });
  return out;
}

// d dist_ij / d x1_ik for diff = x1_i - x2_j, as PyTorch's _cdist_backward:
//   p = 1: sign(diff);  p = 2: diff / dist;  p = inf: sign(diff) where
//   |diff| == dist;  p < 2: sign(diff) |diff|^(p-1) / dist^(p-1);
//   p > 2: diff |diff|^(p-2) / dist^(p-1);  p = 0: 0;
// 0 where dist is 0 (and, for p < 1, where diff is 0), then weighted by
// grad and summed over j.
Tensor cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                      const Tensor& dist) {
  const char* op = "cdist_backward";
  const CdistShapes s = check_cdist(op, x1, x2, p);
  const Shape out_sizes = concat(s.batch, {s.r1, s.r2});
  TESSERA_CHECK(grad.defined() && dist.defined(), ValueError, op,
                ": undefined grad or dist");
  TESSERA_CHECK(grad.sizes() == out_sizes && dist.sizes() == out_sizes, ValueError, op,
                ": expected grad and dist of shape ", shape_to_string(out_sizes), ", got ",
                describe(grad), " and ", describe(dist));
  nn_detail::check_same_device(op, x1, grad);
  nn_detail::check_same_device(op, x1, dist);
  const Tensor a = x1.expand(concat(s.batch, {s.r1, s.m}));
  const Tensor b = x2.expand(concat(s.batch, {s.r2, s.m})).unsqueeze(-3);
  Tensor out = zeros(concat(s.batch, {s.r1, s.m}), TensorOptions(x1.dtype(), x1.device()));
  if (out.numel() == 0 || s.r2 == 0 || p == 0) return out;
  for_each_block(s, [&](int64_t row, int64_t rows) {
    const Tensor diff = sub(a.narrow(-2, row, rows).unsqueeze(-2), b);  // [..., rows, R2, M]
    const Tensor d = dist.narrow(-2, row, rows).unsqueeze(-1);           // [..., rows, R2, 1]
    const Tensor g = grad.narrow(-2, row, rows).unsqueeze(-1);
    Tensor term;
    if (p == 1) {
      term = sign(diff);
    } else if (p == 2) {
      term = div(diff, d);
    } else if (std::isinf(p)) {
      term = mul(sign(diff), eq(abs(diff), d).to(x1.dtype()));
    } else if (p < 2) {
      term = div(mul(sign(diff), pow(abs(diff), p - 1)), pow(d, p - 1));
      if (p < 1) term = where(eq(diff, 0), 0, term);
    } else {
      term = div(mul(diff, pow(abs(diff), p - 2)), pow(d, p - 1));
    }
    // Where dist is 0 every term is 0 (the formulas would divide by it).
    term = where(eq(d, 0), 0, term);
    Tensor block = out.narrow(-2, row, rows);
    block.copy_(sum(mul(term, g), {-2}));
  });
  return out;
}

}  // namespace tessera
