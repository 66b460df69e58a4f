// IndexBounds, Gather, Scatter and IndexPut on the CPU.
//
// Gather and Scatter walk (out or index, self) with one StridedIter: self is
// re-strided to index's sizes with stride 0 along dim, so the iterator
// yields the address of self[..., 0, ...] for each index element and the
// loop body adds index * stride(dim). That keeps the coalescing and the
// threading of the elementwise kernels for free.
#include <algorithm>
#include <limits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

// The iteration never runs scatters in parallel: two index elements may
// name one destination, and the result must not depend on thread timing.
inline constexpr int64_t kSerial = std::numeric_limits<int64_t>::max();

void index_bounds_kernel(const KernelContext&, Tensor& out, const Tensor& index) {
  TESSERA_CHECK(is_integral(index.dtype()) && index.numel() > 0, TypeError,
                "index_bounds: the cpu kernel needs a non-empty integer tensor, got ",
                describe(index));
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  StridedIter<1> it({&index}, "index_bounds");
  dispatch_dtype(index.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_int_v<T>) {
      it.run({static_cast<char*>(index.data_ptr())},
             [&](char* const* p, const int64_t* s, int64_t n) {
               for (int64_t i = 0; i < n; ++i) {
                 const int64_t v = static_cast<int64_t>(at<T>(p[0], s[0], i));
                 lo = std::min(lo, v);
                 hi = std::max(hi, v);
               }
             },
             kSerial);
    }
  });
  out.select(0, 0).fill_(lo);
  out.select(0, 1).fill_(hi);
}

// self viewed with `sizes` and stride 0 along dim (the base of each gather).
Tensor restrided_base(const Tensor& self, const Shape& sizes, int64_t dim) {
  Shape strides = self.strides();
  strides[dim] = 0;
  return self.as_strided(sizes, strides, self.storage_offset());
}

void gather_kernel(const KernelContext&, Tensor& out, const Tensor& self, int64_t dim,
                   const Tensor& index) {
  if (out.numel() == 0) return;
  const Tensor base = restrided_base(self, out.sizes(), dim);
  const int64_t size = self.size(dim);
  const int64_t dim_stride = self.stride(dim);
  StridedIter<3> it({&out, &index, &base}, "gather");
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    it.run({static_cast<char*>(out.data_ptr()), static_cast<char*>(index.data_ptr()),
            static_cast<char*>(base.data_ptr())},
           [&](char* const* p, const int64_t* s, int64_t n) {
             for (int64_t i = 0; i < n; ++i) {
               int64_t k = at<int64_t>(p[1], s[1], i);
               if (k < 0) k += size;
               const T* src = reinterpret_cast<const T*>(p[2] + i * s[2]) + k * dim_stride;
               at<T>(p[0], s[0], i) = *src;
             }
           });
  });
}

// dst (op) v for one ScatterReduce kind, rounded to T: PyTorch's CPU
// scatter reductions, element by element (max/min are std::max/std::min
// with a NaN in v taking over, so NaN on either side wins).
template <kernels::ScatterReduce kReduce, typename T>
inline T scatter_fold(T dst, T v) {
  using kernels::ScatterReduce;
  using C = compute_t<T>;
  if constexpr (kReduce == ScatterReduce::kNone) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    const bool either = kReduce == ScatterReduce::kAdd || kReduce == ScatterReduce::kMax;
    return either ? (dst || v) : (dst && v);
  } else if constexpr (kReduce == ScatterReduce::kAdd) {
    if constexpr (is_int_v<T>) return wrap_add(dst, v);
    else return convert<T>(static_cast<C>(dst) + static_cast<C>(v));
  } else if constexpr (kReduce == ScatterReduce::kMul) {
    if constexpr (is_int_v<T>) return wrap_mul(dst, v);
    else return convert<T>(static_cast<C>(dst) * static_cast<C>(v));
  } else {
    const C a = static_cast<C>(dst), b = static_cast<C>(v);
    if constexpr (!is_int_v<T>) {
      if (b != b) return v;  // NaN
    }
    const bool take_v = kReduce == ScatterReduce::kMax ? a < b : b < a;
    return take_v ? v : dst;
  }
}

template <kernels::ScatterReduce kReduce>
void scatter_with(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const Tensor base = restrided_base(self, index.sizes(), dim);
  const int64_t size = self.size(dim);
  const int64_t dim_stride = self.stride(dim);
  // reorder = false: duplicates resolve in row-major order of index.
  StridedIter<3> it({&index, &src, &base}, "scatter", /*reorder=*/false);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    it.run({static_cast<char*>(index.data_ptr()), static_cast<char*>(src.data_ptr()),
            static_cast<char*>(base.data_ptr())},
           [&](char* const* p, const int64_t* s, int64_t n) {
             for (int64_t i = 0; i < n; ++i) {
               int64_t k = at<int64_t>(p[0], s[0], i);
               if (k < 0) k += size;
               T* dst = reinterpret_cast<T*>(p[2] + i * s[2]) + k * dim_stride;
               *dst = scatter_fold<kReduce, T>(*dst, at<T>(p[1], s[1], i));
             }
           },
           kSerial);
  });
}

void scatter_kernel(const KernelContext&, Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src, kernels::ScatterReduce reduce) {
  using kernels::ScatterReduce;
  if (index.numel() == 0) return;
  switch (reduce) {
    case ScatterReduce::kNone: return scatter_with<ScatterReduce::kNone>(self, dim, index, src);
    case ScatterReduce::kAdd: return scatter_with<ScatterReduce::kAdd>(self, dim, index, src);
    case ScatterReduce::kMul: return scatter_with<ScatterReduce::kMul>(self, dim, index, src);
    case ScatterReduce::kMax: return scatter_with<ScatterReduce::kMax>(self, dim, index, src);
    case ScatterReduce::kMin: return scatter_with<ScatterReduce::kMin>(self, dim, index, src);
  }
}

void index_put_kernel(const KernelContext&, Tensor& self, const Tensor& indices,
                      const Tensor& values, bool accumulate) {
  const int64_t k = indices.size(0);
  const int64_t nb = indices.numel() / std::max<int64_t>(k, 1);
  if (nb == 0 || indices.numel() == 0) return;
  const Tensor idx = indices.contiguous();  // [k, nb] row-major
  const int64_t* ip = idx.data<int64_t>();
  const int64_t nbdims = indices.dim() - 1;
  // Layout of the rest dims: self's dims k.., values' trailing dims.
  const int64_t rest_dims = self.dim() - k;
  Shape rest_sizes(self.sizes().begin() + k, self.sizes().end());
  Shape self_rest_strides(self.strides().begin() + k, self.strides().end());
  Shape val_rest_strides(values.strides().begin() + nbdims, values.strides().end());
  StridedIter<2> it(static_cast<int>(rest_dims), rest_sizes.data(),
                    {self_rest_strides.data(), val_rest_strides.data()},
                    {static_cast<int64_t>(self.itemsize()), static_cast<int64_t>(values.itemsize())},
                    /*reorder=*/true, "index_put");
  const Shape& bsizes = values.sizes();
  char* self_base = static_cast<char*>(self.data_ptr());
  char* val_base = static_cast<char*>(values.data_ptr());
  const int64_t item = static_cast<int64_t>(self.itemsize());
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    for (int64_t b = 0; b < nb; ++b) {
      int64_t self_off = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t v = ip[d * nb + b];
        if (v < 0) v += self.size(d);
        self_off += v * self.stride(d);
      }
      int64_t val_off = 0, rem = b;
      for (int64_t d = nbdims - 1; d >= 0; --d) {
        val_off += (rem % bsizes[d]) * values.stride(d);
        rem /= bsizes[d];
      }
      it.for_range({self_base + self_off * item, val_base + val_off * item}, 0, it.numel(),
                   [&](char* const* p, const int64_t* s, int64_t n) {
                     for (int64_t i = 0; i < n; ++i) {
                       T& dst = at<T>(p[0], s[0], i);
                       const T v = at<T>(p[1], s[1], i);
                       if (!accumulate) {
                         dst = v;
                       } else if constexpr (std::is_same_v<T, bool>) {
                         dst = dst || v;
                       } else if constexpr (is_int_v<T>) {
                         dst = wrap_add(dst, v);
                       } else {
                         dst = convert<T>(static_cast<C>(dst) + static_cast<C>(v));
                       }
                     }
                   });
    }
  });
}

}  // namespace

void register_indexing_gather_scatter_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::IndexBounds>(type, &index_bounds_kernel);
  registry.register_kernel<kernels::Gather>(type, &gather_kernel);
  registry.register_kernel<kernels::Scatter>(type, &scatter_kernel);
  registry.register_kernel<kernels::IndexPut>(type, &index_put_kernel);
}

}  // namespace tessera::cpu
