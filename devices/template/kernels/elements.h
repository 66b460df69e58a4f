// Element conversions and integer arithmetic with PyTorch's semantics,
// which every device's kernels must reproduce (the conformance suite
// compares them with the CPU device's results):
//  - converting to bool is "!= 0"; f16 and bf16 convert through float;
//  - the 16-bit floats compute in float (compute_t, runtime/core/dtype.h);
//  - integer add/sub/mul wrap around modulo 2^bits instead of overflowing
//    (signed overflow is undefined in C++, so they compute unsigned).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/dtype.h"
#include "runtime/core/half.h"

namespace tessera::template_device {

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Integer types other than bool.
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// v as a D, as PyTorch converts elements.
template <typename D, typename S>
D convert(S v) {
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

template <typename T>
using wrap_uint_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
T wrap_add(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

}  // namespace tessera::template_device
