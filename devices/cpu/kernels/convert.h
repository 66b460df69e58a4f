// Element conversions and wrap-around integer arithmetic shared by the CPU
// kernels.
#pragma once

#include <cstdint>
#include <type_traits>

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

}  // namespace tessera::cpu
