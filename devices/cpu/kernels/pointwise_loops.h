// Elementwise loop drivers shared by the pointwise CPU kernels: map1, map2
// and map3 apply a functor on compute types (float for f16/bf16) over
// tensors of one shape, any strides, in parallel above the grain size.
//
// Each inner row picks a loop by its strides: contiguous rows (and rows
// whose input is one broadcast value) get plain indexed loops that GCC
// vectorizes; other rows a strided loop. 16-bit float rows are staged
// through float blocks (vectorized conversions); a block is read whole
// before it is written, which keeps in-place calls (out == input) correct.
#pragma once

#include <algorithm>
#include <cstdint>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu::pw {

template <typename T>
inline char* bytes(const Tensor& t) {
  return static_cast<char*>(t.data_ptr());
}

// out[i] = f(in[i]); O and I are the storage types, f takes compute_t<I>.
template <typename O, typename I, typename F>
void map1(Tensor& out, const Tensor& in, const F& f, const char* name) {
  using CI = compute_t<I>;
  StridedIter<2> it({&out, &in}, name);
  it.run({bytes<O>(out), bytes<I>(in)}, [&f](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (is_half_v<I> || is_half_v<O>) {
      float x[kStageBlock], z[kStageBlock];
      for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
        const int64_t m = std::min(kStageBlock, n - i0);
        gather_float<I>(p[1] + i0 * s[1], s[1], x, m);
        if constexpr (is_half_v<O>) {
          for (int64_t i = 0; i < m; ++i) z[i] = static_cast<float>(f(x[i]));
          scatter_float<O>(z, p[0] + i0 * s[0], s[0], m);
        } else {
          for (int64_t i = 0; i < m; ++i) at<O>(p[0], s[0], i0 + i) = convert<O>(f(x[i]));
        }
      }
    } else {
      O* o = reinterpret_cast<O*>(p[0]);
      const I* x = reinterpret_cast<const I*>(p[1]);
      if (s[0] == sizeof(O) && s[1] == sizeof(I)) {
        for (int64_t i = 0; i < n; ++i) o[i] = convert<O>(f(static_cast<CI>(x[i])));
      } else {
        for (int64_t i = 0; i < n; ++i) {
          at<O>(p[0], s[0], i) = convert<O>(f(static_cast<CI>(at<const I>(p[1], s[1], i))));
        }
      }
    }
  });
}

// out[i] = f(a[i], b[i]); a and b of storage type I.
template <typename O, typename I, typename F>
void map2(Tensor& out, const Tensor& a, const Tensor& b, const F& f, const char* name) {
  using C = compute_t<I>;
  StridedIter<3> it({&out, &a, &b}, name);
  it.run({bytes<O>(out), bytes<I>(a), bytes<I>(b)},
         [&f](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (is_half_v<I> || is_half_v<O>) {
      float x[kStageBlock], y[kStageBlock], z[kStageBlock];
      for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
        const int64_t m = std::min(kStageBlock, n - i0);
        gather_float<I>(p[1] + i0 * s[1], s[1], x, m);
        gather_float<I>(p[2] + i0 * s[2], s[2], y, m);
        if constexpr (is_half_v<O>) {
          for (int64_t i = 0; i < m; ++i) z[i] = static_cast<float>(f(x[i], y[i]));
          scatter_float<O>(z, p[0] + i0 * s[0], s[0], m);
        } else {
          for (int64_t i = 0; i < m; ++i) at<O>(p[0], s[0], i0 + i) = convert<O>(f(x[i], y[i]));
        }
      }
    } else {
      O* o = reinterpret_cast<O*>(p[0]);
      const I* x = reinterpret_cast<const I*>(p[1]);
      const I* y = reinterpret_cast<const I*>(p[2]);
      constexpr int64_t wo = sizeof(O), wi = sizeof(I);
      if (s[0] == wo && s[1] == wi && s[2] == wi) {
        for (int64_t i = 0; i < n; ++i) o[i] = convert<O>(f(static_cast<C>(x[i]), static_cast<C>(y[i])));
      } else if (s[0] == wo && s[1] == wi && s[2] == 0) {
        const C yv = static_cast<C>(*y);
        for (int64_t i = 0; i < n; ++i) o[i] = convert<O>(f(static_cast<C>(x[i]), yv));
      } else if (s[0] == wo && s[1] == 0 && s[2] == wi) {
        const C xv = static_cast<C>(*x);
        for (int64_t i = 0; i < n; ++i) o[i] = convert<O>(f(xv, static_cast<C>(y[i])));
      } else {
        for (int64_t i = 0; i < n; ++i) {
          at<O>(p[0], s[0], i) = convert<O>(f(static_cast<C>(at<const I>(p[1], s[1], i)),
                                              static_cast<C>(at<const I>(p[2], s[2], i))));
        }
      }
    }
  });
}

// out[i] = f(a[i], b[i], c[i]); a of storage type A (bool for where), b and
// c of type I, out of type I.
template <typename A, typename I, typename F>
void map3(Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, const F& f,
          const char* name) {
  using CA = compute_t<A>;
  using C = compute_t<I>;
  StridedIter<4> it({&out, &a, &b, &c}, name);
  it.run({bytes<I>(out), bytes<A>(a), bytes<I>(b), bytes<I>(c)},
         [&f](char* const* p, const int64_t* s, int64_t n) {
    if constexpr (is_half_v<I>) {
      float x[kStageBlock], y[kStageBlock], z[kStageBlock], r[kStageBlock];
      for (int64_t i0 = 0; i0 < n; i0 += kStageBlock) {
        const int64_t m = std::min(kStageBlock, n - i0);
        gather_float<A>(p[1] + i0 * s[1], s[1], x, m);
        gather_float<I>(p[2] + i0 * s[2], s[2], y, m);
        gather_float<I>(p[3] + i0 * s[3], s[3], z, m);
        for (int64_t i = 0; i < m; ++i) r[i] = static_cast<float>(f(x[i], y[i], z[i]));
        scatter_float<I>(r, p[0] + i0 * s[0], s[0], m);
      }
    } else {
      I* o = reinterpret_cast<I*>(p[0]);
      const A* x = reinterpret_cast<const A*>(p[1]);
      const I* y = reinterpret_cast<const I*>(p[2]);
      const I* z = reinterpret_cast<const I*>(p[3]);
      constexpr int64_t wa = sizeof(A), wi = sizeof(I);
      if (s[0] == wi && s[1] == wa && s[2] == wi && s[3] == wi) {
        for (int64_t i = 0; i < n; ++i) {
          o[i] = static_cast<I>(f(static_cast<CA>(x[i]), static_cast<C>(y[i]), static_cast<C>(z[i])));
        }
      } else {
        for (int64_t i = 0; i < n; ++i) {
          at<I>(p[0], s[0], i) = static_cast<I>(f(static_cast<CA>(at<const A>(p[1], s[1], i)),
                                                  static_cast<C>(at<const I>(p[2], s[2], i)),
                                                  static_cast<C>(at<const I>(p[3], s[3], i))));
        }
      }
    }
  });
}

}  // namespace tessera::cpu::pw
