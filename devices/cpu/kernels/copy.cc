// Copy on the CPU: dst = src converted to dst's dtype, any strides on both
// sides. The workhorse behind contiguous(), clone(), to(dtype), expand
// copies and the host side of device copies, so it has fast paths:
//  - same dtype, both contiguous: one memcpy split over threads;
//  - same dtype, strided: moved as 1/2/4/8-byte words (no per-dtype code),
//    with memcpy rows where both sides are contiguous in iteration order
//    and fill rows where src is broadcast (stride 0);
//  - dtype casts: a flat conversion loop with __restrict pointers for
//    contiguous rows (auto-vectorized at -O3), a strided one otherwise;
//    casts from or to f16/bf16 staged through float blocks;
//  - transposes (dst contiguous where src has a large stride): tiled.
#include <algorithm>
#include <cstring>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

template <typename D, typename S>
void cast_contiguous(D* __restrict d, const S* __restrict s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = convert<D>(s[i]);
}

// One row of a cast. Casts from or to f16/bf16 go through float blocks
// (the same values as convert<D>, which also goes through float for them),
// so that both conversions vectorize.
template <typename D, typename S>
void cast_row(char* const* p, const int64_t* s, int64_t n) {
  if constexpr (is_half_v<D> || is_half_v<S>) {
    float buf[kStageBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
      const int64_t m = std::min(kStageBlock, n - i0);
      gather_float<S>(p[1] + i0 * s[1], s[1], buf, m);
      scatter_float<D>(buf, p[0] + i0 * s[0], s[0], m);
    }
  } else if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
    cast_contiguous<D, S>(reinterpret_cast<D*>(p[0]), reinterpret_cast<const S*>(p[1]), n);
  } else if (s[1] == 0) {
    const D v = convert<D>(*reinterpret_cast<const S*>(p[1]));
    for (int64_t i = 0; i < n; ++i) at<D>(p[0], s[0], i) = v;
  } else {
    for (int64_t i = 0; i < n; ++i) at<D>(p[0], s[0], i) = convert<D>(at<const S>(p[1], s[1], i));
  }
}

// Transpose-like copies: dst walks its memory contiguously along the
// iteration's inner dim while src is contiguous along the next one (e.g.
// x.t().contiguous()). A row-by-row loop would read src with a large stride
// and use one element per cache line fetched. Instead the two dims are cut
// into square tiles of one cache line a side: each tile is read into a
// local buffer one whole src line at a time, then written out one whole dst
// line at a time, so no line has to stay cached between uses (with
// power-of-two strides, lines one stride apart compete for the same few
// cache sets).
template <typename S>
inline constexpr int64_t kTile = sizeof(S) >= 4 ? 16 : (sizeof(S) == 2 ? 32 : 64);

bool is_transpose_like(const StridedIter<2>& it, int64_t dsize, int64_t ssize) {
  return it.ndim() >= 2 && it.stride(0, 0) == dsize && it.stride(1, 1) == ssize && it.stride(0, 1) != ssize &&
         it.size(0) >= 8 && it.size(1) >= 8;
}

template <typename D, typename S>
void transpose_copy(const StridedIter<2>& it, char* dst, const char* src) {
  constexpr int64_t T = kTile<S>;
  const int64_t n0 = it.size(0), n1 = it.size(1);
  const int64_t d0 = it.stride(0, 0), d1 = it.stride(1, 0);
  const int64_t s0 = it.stride(0, 1), s1 = it.stride(1, 1);
  const int64_t tiles0 = (n0 + T - 1) / T, tiles1 = (n1 + T - 1) / T;
  const int64_t outer = it.numel() / (n0 * n1);
  // Work items: (outer index, tile row along dim 1).
  parallel_for_range(outer * tiles1, std::max<int64_t>(1, kElementwiseGrain / (T * n0)), [&](int64_t b, int64_t e) {
    S buf[T][T];  // buf[i0][i1]
    for (int64_t w = b; w < e; ++w) {
      const int64_t t1 = w % tiles1;
      int64_t o = w / tiles1;
      const char* sp = src;
      char* dp = dst;
      for (int d = 2; d < it.ndim(); ++d) {  // offsets of outer index o
        const int64_t c = o % it.size(d);
        o /= it.size(d);
        dp += c * it.stride(d, 0);
        sp += c * it.stride(d, 1);
      }
      const int64_t i1b = t1 * T, m1 = std::min(T, n1 - i1b);
      for (int64_t t0 = 0; t0 < tiles0; ++t0) {
        const int64_t i0b = t0 * T, m0 = std::min(T, n0 - i0b);
        for (int64_t a = 0; a < m0; ++a) {  // src lines
          const char* line = sp + (i0b + a) * s0 + i1b * s1;
          if (s1 == static_cast<int64_t>(sizeof(S))) {
            std::memcpy(buf[a], line, static_cast<size_t>(m1) * sizeof(S));
          } else {
            for (int64_t c = 0; c < m1; ++c) std::memcpy(&buf[a][c], line + c * s1, sizeof(S));
          }
        }
        for (int64_t c = 0; c < m1; ++c) {  // dst lines
          D* line = reinterpret_cast<D*>(dp + (i1b + c) * d1 + i0b * d0);
          for (int64_t a = 0; a < m0; ++a) line[a] = convert<D>(buf[a][c]);
        }
      }
    }
  });
}

template <typename W>
void copy_words(const StridedIter<2>& it, char* dst, const char* src) {
  if (is_transpose_like(it, sizeof(W), sizeof(W))) return transpose_copy<W, W>(it, dst, src);
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
void cast_strided(const StridedIter<2>& it, char* dst, const char* src) {
  if (is_transpose_like(it, sizeof(D), sizeof(S))) return transpose_copy<D, S>(it, dst, src);
  it.run({dst, const_cast<char*>(src)}, [](char* const* p, const int64_t* s, int64_t n) { cast_row<D, S>(p, s, n); });
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

void cpu_copy(Tensor& dst, const Tensor& src) { copy_kernel(KernelContext{}, dst, src); }

void register_copy_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Copy>(type, &copy_kernel);
}

}  // namespace tessera::cpu
