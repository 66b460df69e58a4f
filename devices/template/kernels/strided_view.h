// What a template kernel takes from a tensor into its task, and the loop
// that visits the elements of a few such views together.
//
// A kernel runs later, on the stream's worker, so it must capture what it
// needs by value when it is called. It captures the address and layout
// (StridedView), never the Tensor: a Tensor owns its storage, and if the
// task held the last reference, the memory would be freed on the worker,
// and the caching allocator may wait for this very stream there. The
// memory stays valid without a reference because the caching allocator
// hands a block freed on a stream only to later work on that same stream,
// which runs after this task (a tensor used on another stream must be
// marked with record_stream, as with CUDA).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace tessera::template_device {

struct StridedView {
  char* data = nullptr;  // element 0
  DType dtype = DType::kF32;
  Shape sizes;
  Shape strides;  // in elements; 0 where a dim is broadcast

  static StridedView of(const Tensor& t) {
    return StridedView{static_cast<char*>(t.data_ptr()), t.dtype(), t.sizes(), t.strides()};
  }
};

// Calls f(p) for every element of views (which share their sizes) in
// row-major order, p[k] being the element's address in views[k]. The
// index advances like an odometer, so each step adds a stride instead of
// recomputing an offset. A vendor's kernels do this per GPU thread with a
// division per dim instead; see devices/vulkan/kernels/strided_layout.h.
template <size_t N, typename F>
void for_each_element(const std::array<const StridedView*, N>& views, F&& f) {
  const Shape& sizes = views[0]->sizes;
  const size_t ndim = sizes.size();
  for (int64_t size : sizes) {
    if (size == 0) return;
  }
  std::array<char*, N> p;
  std::array<Shape, N> step;  // byte strides
  for (size_t k = 0; k < N; ++k) {
    p[k] = views[k]->data;
    step[k] = Shape(ndim);
    const int64_t item = static_cast<int64_t>(itemsize(views[k]->dtype));
    for (size_t d = 0; d < ndim; ++d) step[k][d] = views[k]->strides[d] * item;
  }
  Shape index(ndim, 0);
  for (;;) {
    f(p);
    size_t d = ndim;
    for (; d > 0; --d) {
      const size_t dim = d - 1;
      for (size_t k = 0; k < N; ++k) p[k] += step[k][dim];
      if (++index[dim] < sizes[dim]) break;
      for (size_t k = 0; k < N; ++k) p[k] -= step[k][dim] * sizes[dim];
      index[dim] = 0;
    }
    if (d == 0) return;  // every dim wrapped around: done (a 0-d view runs once)
  }
}

}  // namespace tessera::template_device
