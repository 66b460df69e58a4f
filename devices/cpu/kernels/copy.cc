// Copy on the CPU: dst = src converted to dst's dtype, any strides on both
// sides. The workhorse behind contiguous(), clone(), to(dtype), expand
// copies and the host side of device copies, so it has fast paths:
//  - same dtype, both contiguous: one memcpy split over threads;
//  - same dtype, strided: moved as 1/2/4/8-byte words (no per-dtype code),
//    with memcpy rows where both sides are contiguous in iteration order
//    and fill rows where src is broadcast (stride 0);
//  - dtype casts: a flat conversion loop with __restrict pointers for
//    contiguous rows (auto-vectorized at -O3), a strided one otherwise.
#include <algorithm>
#include <cstring>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

template <typename W>
void copy_words(const StridedIter<2>& it, char* dst, const char* src) {
  it.run({dst, const_cast<char*>(src)}, [](char* const* p, const int64_t* s, int64_t n) {
    constexpr int64_t w = sizeof(W);
    if (s[0] == w && s[1] == w) {
      std::memcpy(p[0], p[1], static_cast<size_t>(n) * w);
    } else if (s[1] == 0) {
      W v;
      std::memcpy(&v, p[1], w);
      if (s[0] == w) {
        std::fill_n(reinterpret_cast<W*>(p[0]), n, v);
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], &v, w);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], w);
    }
  });
}

template <typename D, typename S>
void cast_contiguous(D* __restrict d, const S* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i]);
}

template <typename D, typename S>
void cast_strided(const StridedIter<2>& it, char* dst, const char* src) {
  it.run({dst, const_cast<char*>(src)}, [](char* const* p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
      cast_contiguous<D, S>(reinterpret_cast<D*>(p[0]), reinterpret_cast<const S*>(p[1]), n);
    } else if (s[1] == 0) {
      const D v = convert<D>(*reinterpret_cast<const S*>(p[1]));
      for (int64_t i = 0; i < n; ++i) at<D>(p[0], s[0], i) = v;
    } else {
      for (int64_t i = 0; i < n; ++i) at<D>(p[0], s[0], i) = convert<D>(at<const S>(p[1], s[1], i));
    }
  });
}

void copy_kernel(const KernelContext&, Tensor& dst, const Tensor& src) {
  TESSERA_CHECK(dst.sizes() == src.sizes(), ValueError, "copy: the cpu kernel needs equal sizes, got dst ",
                describe(dst), " and src ", describe(src));
  if (dst.numel() == 0) return;
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  if (dst.dtype() == src.dtype()) {
    if (d == s && dst.strides() == src.strides()) return;  // copying onto itself
    if (dst.is_contiguous() && src.is_contiguous()) {
      parallel_memcpy(d, s, dst.nbytes());
      return;
    }
    StridedIter<2> it({&dst, &src}, "copy");
    switch (dst.itemsize()) {
      case 1: copy_words<uint8_t>(it, d, s); break;
      case 2: copy_words<uint16_t>(it, d, s); break;
      case 4: copy_words<uint32_t>(it, d, s); break;
      case 8: copy_words<uint64_t>(it, d, s); break;
      default: TESSERA_CHECK(false, TypeError, "copy: unexpected itemsize ", dst.itemsize(), " of ",
                             dtype_name(dst.dtype()));
    }
    return;
  }
  StridedIter<2> it({&dst, &src}, "copy");
  dispatch_dtype(dst.dtype(), [&](auto dtag) {
    using D = decltype(dtag);
    dispatch_dtype(src.dtype(), [&](auto stag) {
      using S = decltype(stag);
      cast_strided<D, S>(it, d, s);
    });
  });
}

}  // namespace

void register_copy_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Copy>(type, &copy_kernel);
}

}  // namespace tessera::cpu
