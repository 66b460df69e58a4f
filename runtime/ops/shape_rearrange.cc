// flip, roll, repeat, constant_pad: composites of views and copies.
// - flip gathers along each flipped dim with a descending arange index
//   (views cannot have negative strides here);
// - roll copies the two pieces of each rolled dim;
// - repeat copies one expanded view [r0, s0, r1, s1, ...] of self, so the
//   whole tile is written by a single Copy;
// - pad fills the new tensor and copies the kept region of self into it.
#include <algorithm>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

Tensor flip(const Tensor& self, const Shape& dims) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  Shape wrapped;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "flip");
    TESSERA_CHECK(!seen[d], ValueError, "flip: dim ", d, " appears multiple times in the list of dims ",
                  shape_to_string(dims));
    seen[d] = true;
    wrapped.push_back(d);
  }
  Tensor out = self;
  for (int64_t d : wrapped) {
    if (self.dim() == 0 || self.sizes()[d] <= 1) continue;
    const int64_t n = self.sizes()[d];
    Tensor index = arange(n - 1, -1, -1, TensorOptions(DType::kI64, self.device()));
    out = index_select(out, d, index);
  }
  return out.is_same(self) ? self.clone() : out;
}

namespace {
// out = self rolled by shift along d (0 <= shift < n), written into out.
void roll_dim_into(Tensor& out, const Tensor& self, int64_t d, int64_t shift) {
  const int64_t n = self.sizes()[d];
  Tensor head = out.narrow(d, shift, n - shift);
  head.copy_(self.narrow(d, 0, n - shift));
  if (shift > 0) {
    Tensor tail = out.narrow(d, 0, shift);
    tail.copy_(self.narrow(d, n - shift, shift));
  }
}
}  // namespace

Tensor roll(const Tensor& self, const Shape& shifts, const Shape& dims) {
  TESSERA_CHECK(!shifts.empty(), ValueError, "roll: `shifts` required");
  if (dims.empty()) {
    TESSERA_CHECK(shifts.size() == 1, ValueError,
                  "roll: shifts and dimensions must align. shifts: ", shifts.size(), ", dims:0");
    Tensor flat = self.contiguous().reshape({self.numel()});
    return roll(flat, shifts, {0}).view(self.sizes());
  }
  TESSERA_CHECK(shifts.size() == dims.size(), ValueError,
                "roll: shifts and dimensions must align. shifts: ", shifts.size(), ", dims:",
                dims.size());
  Tensor cur = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], std::max<int64_t>(self.dim(), 1), "roll");
    if (self.dim() == 0) continue;
    const int64_t n = self.sizes()[d];
    if (n == 0) continue;
    int64_t shift = shifts[i] % n;
    if (shift < 0) shift += n;
    Tensor out = empty_like(self);
    roll_dim_into(out, cur, d, shift);
    cur = out;
  }
  return cur.is_same(self) ? self.clone() : cur;
}

Tensor repeat(const Tensor& self, const Shape& repeats) {
  const int64_t nd = static_cast<int64_t>(repeats.size());
  TESSERA_CHECK(nd >= self.dim(), ValueError,
                "repeat: Number of dimensions of repeat dims can not be smaller than number of "
                "dimensions of tensor (repeats ", shape_to_string(repeats), ", tensor ",
                describe(self), ")");
  for (int64_t r : repeats) {
    TESSERA_CHECK(r >= 0, ValueError, "repeat: Trying to create tensor with negative dimension ",
                  r, ": ", shape_to_string(repeats));
  }
  // self padded with leading 1-dims to nd dims.
  Shape padded(static_cast<size_t>(nd - self.dim()), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  Tensor src = self.reshape(padded);
  Shape tiled, result;
  Tensor view = src;
  for (int64_t d = 0; d < nd; ++d) {
    tiled.push_back(repeats[d]);
    tiled.push_back(padded[d]);
    result.push_back(checked_mul(repeats[d], padded[d], "repeat"));
  }
  // Interleave new size-1 dims before each dim of src, then expand them.
  for (int64_t d = 0; d < nd; ++d) view = view.unsqueeze(2 * d);
  Tensor out = empty(tiled, TensorOptions(self.dtype(), self.device()));
  if (out.numel() > 0) out.copy_(view.expand(tiled));
  return out.view(result);
}

Tensor constant_pad(const Tensor& self, const Shape& pad, Scalar value) {
  const int64_t n = static_cast<int64_t>(pad.size());
  TESSERA_CHECK(n % 2 == 0, ValueError, "constant_pad: Padding length must be divisible by 2, got ",
                shape_to_string(pad));
  TESSERA_CHECK(n / 2 <= self.dim(), ValueError,
                "constant_pad: Padding length should be less than or equal to two times the input "
                "dimension but got padding length ", n, " and input of dimension ", self.dim());
  Shape sizes = self.sizes();
  for (int64_t i = 0; i < n / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    const int64_t size = checked_add(checked_add(sizes[d], before, "constant_pad"), after,
                                     "constant_pad");
    TESSERA_CHECK(size >= 0, ValueError, "constant_pad: The input size ", sizes[d],
                  ", plus negative padding ", before, " and ", after,
                  " resulted in a negative output size, which is invalid. Check dimension ", d,
                  " of your input.");
    sizes[d] = size;
  }
  Tensor out = full(sizes, value, TensorOptions(self.dtype(), self.device()));
  Tensor dst = out, src = self;
  for (int64_t i = 0; i < n / 2; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    const int64_t s = self.sizes()[d];
    const int64_t src_start = std::max<int64_t>(0, -before);
    const int64_t dst_start = std::max<int64_t>(0, before);
    const int64_t len = std::max<int64_t>(
        0, s + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0));
    src = src.narrow(d, std::min(src_start, s), std::min(len, s - std::min(src_start, s)));
    dst = dst.narrow(d, std::min(dst_start, sizes[d]), src.sizes()[d]);
  }
  if (dst.numel() > 0) dst.copy_(src);
  return out;
}

}  // namespace tessera
