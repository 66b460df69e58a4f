// Staging helpers for the nn kernels: read any strided tensor into a
// contiguous row-major buffer of an accumulation type, and write such a
// buffer back into any strided tensor. The nn kernels that are not on a
// tuned path (f64/f16/bf16 convolution, pooling backward, losses) work on
// these buffers so that each loop is written once, for contiguous data.
#pragma once

#include <cstdint>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu::nn {

// Calls f(element pointer offset in elements) for each element of t in
// row-major order.
template <typename F>
void for_each_offset(const Tensor& t, F&& f) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const int64_t nd = t.dim();
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.sizes()[d]) {
        off += t.strides()[d];
        break;
      }
      off -= t.strides()[d] * (t.sizes()[d] - 1);
      idx[d] = 0;
    }
  }
}

// Row-major values of t converted to A.
template <typename A>
std::vector<A> read_as(const Tensor& t) {
  std::vector<A> out(static_cast<size_t>(t.numel()));
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(t.data_ptr());
    A* o = out.data();
    if (t.is_contiguous()) {
      for (int64_t i = 0; i < t.numel(); ++i) o[i] = convert<A>(p[i]);
    } else {
      for_each_offset(t, [&](int64_t off) { *o++ = convert<A>(p[off]); });
    }
  });
  return out;
}

// Writes row-major values (converted to t's dtype) into t.
template <typename A>
void write_from(Tensor& t, const std::vector<A>& values) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(t.data_ptr());
    const A* v = values.data();
    if (t.is_contiguous()) {
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = convert<T>(v[i]);
    } else {
      for_each_offset(t, [&](int64_t off) { p[off] = convert<T>(*v++); });
    }
  });
}

}  // namespace tessera::cpu::nn
