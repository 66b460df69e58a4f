// The [M, N] row view the reduction-family kernels work on: the input's
// kept dims first (in order, M rows) and the reduced dims last (N elements
// per row), contiguous. Copies only when the input is not already laid out
// that way (e.g. a softmax over the last dim of a contiguous tensor reads
// the input in place), so the row loops stay simple and vectorizable.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::cpu {

struct RowLayout {
  Shape perm;       // kept dims, then reduced dims
  int64_t m = 1;    // number of rows (product of kept sizes)
  int64_t n = 1;    // row length (product of reduced sizes)
};

inline RowLayout row_layout(const Tensor& in, const Shape& rdims) {
  RowLayout l;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (std::find(rdims.begin(), rdims.end(), d) == rdims.end()) {
      l.perm.push_back(d);
      l.m *= in.sizes()[d];
    }
  }
  for (int64_t d : rdims) {
    l.perm.push_back(d);
    l.n *= in.sizes()[d];
  }
  return l;
}

// in permuted to the layout, contiguous (a copy only when needed).
inline Tensor rows_of(const Tensor& in, const RowLayout& l) {
  Tensor p = in.dim() == 0 ? in : in.permute(l.perm);
  if (p.is_contiguous()) return p;
  Tensor c = empty(p.sizes(), TensorOptions(p.dtype(), p.device()));
  cpu_copy(c, p);
  return c;
}

// A destination laid out like rows_of(target): the target itself when it
// is contiguous in that order, else a scratch tensor that finish() copies
// back into the target.
class RowsOut {
 public:
  RowsOut(Tensor& target, const RowLayout& l) : target_(target) {
    Tensor p = target.dim() == 0 ? target : target.permute(l.perm);
    if (p.is_contiguous()) {
      rows_ = p;
    } else {
      rows_ = empty(p.sizes(), TensorOptions(p.dtype(), p.device()));
      permuted_ = p;
      copy_back_ = true;
    }
  }
  template <typename T>
  T* data() const { return static_cast<T*>(rows_.data_ptr()); }
  void finish() {
    if (copy_back_) cpu_copy(permuted_, rows_);
  }

 private:
  Tensor& target_;
  Tensor rows_, permuted_;
  bool copy_back_ = false;
};

}  // namespace tessera::cpu
