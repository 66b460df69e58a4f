// Element conversions and wrap-around integer arithmetic shared by the CPU
// kernels.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

#include "runtime/core/dtype.h"
#include "runtime/core/half.h"

namespace tessera::cpu {

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// Integer types other than bool.
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Value of S as D, as PyTorch's static_cast_with_inter_type: to bool is
// "!= 0", the 16-bit floats go through float. Out-of-range float-to-integer
// conversions are undefined in C++ as in PyTorch; on x86 they give the
// "integer indefinite" value.
template <typename D, typename S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (is_half_v<S>) {
    return convert<D>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (is_half_v<D>) {
    return D(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}

// Integer add/sub/mul that wrap modulo 2^bits as PyTorch's do (signed
// overflow is undefined in C++, so compute in an unsigned type at least as
// wide as int, then convert back, which C++20 defines as modular).
template <typename T>
using wrap_uint_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
inline T wrap_add(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
inline T wrap_sub(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
inline T wrap_mul(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// -- Bulk conversions between the 16-bit floats and float. Kernels on f16
// and bf16 stage blocks of elements through float buffers with these, so
// the arithmetic itself runs as vectorized float code. With F16C (x86
// -march=native on any recent CPU) f16 converts 8 values per instruction,
// rounding to nearest even as Half::from_float does (only NaN payloads
// may differ: F16C keeps the top payload bits, Half makes a canonical
// NaN); bf16 is plain bit manipulation, which GCC vectorizes.

inline void to_float_n(const Half* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

inline void from_float_n(const float* src, Half* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = Half(src[i]);
}

inline void to_float_n(const BFloat16* __restrict src, float* __restrict dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(static_cast<uint32_t>(src[i].bits) << 16);
}

inline void from_float_n(const float* __restrict src, BFloat16* __restrict dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // BFloat16::from_float, written branch-free so that it vectorizes.
    const uint32_t x = std::bit_cast<uint32_t>(src[i]);
    const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    const uint32_t nan = (x >> 16) | 0x40u;
    dst[i].bits = static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

// n elements of T, `stride` bytes apart (0: one value repeated), as floats.
template <typename T>
inline void gather_float(const char* src, int64_t stride, float* dst, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    } else if constexpr (is_half_v<T>) {
      to_float_n(reinterpret_cast<const T*>(src), dst, n);
    } else {
      const T* s = reinterpret_cast<const T*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = convert<float>(s[i]);
    }
  } else if (stride == 0) {
    T v;
    std::memcpy(&v, src, sizeof(T));
    const float f = convert<float>(v);
    for (int64_t i = 0; i < n; ++i) dst[i] = f;
  } else {
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, src + i * stride, sizeof(T));
      dst[i] = convert<float>(v);
    }
  }
}

// n floats converted to T, stored `stride` bytes apart.
template <typename T>
inline void scatter_float(const float* src, char* dst, int64_t stride, int64_t n) {
  if (stride == static_cast<int64_t>(sizeof(T))) {
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    } else if constexpr (is_half_v<T>) {
      from_float_n(src, reinterpret_cast<T*>(dst), n);
    } else {
      T* d = reinterpret_cast<T*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = convert<T>(src[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T v = convert<T>(src[i]);
      std::memcpy(dst + i * stride, &v, sizeof(T));
    }
  }
}

// Elements per float staging block (three blocks fit easily in L1).
inline constexpr int64_t kStageBlock = 512;

}  // namespace tessera::cpu
