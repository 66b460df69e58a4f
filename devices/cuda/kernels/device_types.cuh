// Element types on the GPU: the CUDA type of each runtime dtype, the type a
// kernel computes in, conversions with the CPU device's semantics, and
// dispatch over dtypes. Included by every .cu file.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"

namespace tessera::cuda {

// The CUDA storage type of each dtype (bool is one byte, 0 or 1).
template <DType D> struct storage_of;
template <> struct storage_of<DType::kBool> { using type = bool; };
template <> struct storage_of<DType::kU8> { using type = uint8_t; };
template <> struct storage_of<DType::kI8> { using type = int8_t; };
template <> struct storage_of<DType::kI16> { using type = int16_t; };
template <> struct storage_of<DType::kI32> { using type = int32_t; };
template <> struct storage_of<DType::kI64> { using type = int64_t; };
template <> struct storage_of<DType::kF16> { using type = __half; };
template <> struct storage_of<DType::kBF16> { using type = __nv_bfloat16; };
template <> struct storage_of<DType::kF32> { using type = float; };
template <> struct storage_of<DType::kF64> { using type = double; };

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
// Integer types other than bool.
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// What a kernel computes in: float for the 16-bit floats (as the CPU
// device: convert on load and store), the type itself otherwise.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

// The accumulator of sums and products: double for f64, float for the
// other floats, int64 for integers and bool (as the CPU device).
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<is_float_v<T>, float, int64_t>>;

// S converted to D as the CPU device converts (PyTorch's
// static_cast_with_inter_type): to bool is "!= 0", 16-bit floats go through
// float and round to nearest even. Out-of-range float-to-integer
// conversions are undefined in C++ as in PyTorch.
template <typename D, typename S>
__host__ __device__ __forceinline__ D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<S, __half>) {
    return convert<D>(__half2float(v));
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return convert<D>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}

// Integer add/sub/mul that wrap modulo 2^bits as PyTorch's do.
template <typename T>
using wrap_uint_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
template <typename T>
__host__ __device__ __forceinline__ T wrap_add(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
__host__ __device__ __forceinline__ T wrap_sub(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
__host__ __device__ __forceinline__ T wrap_mul(T a, T b) {
  using U = wrap_uint_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

// Calls fn(T{}) with the CUDA storage type of t.
template <typename Fn>
decltype(auto) dispatch_cuda_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kBool: return fn(bool{});
    case DType::kU8: return fn(uint8_t{});
    case DType::kI8: return fn(int8_t{});
    case DType::kI16: return fn(int16_t{});
    case DType::kI32: return fn(int32_t{});
    case DType::kI64: return fn(int64_t{});
    case DType::kF16: return fn(__half{});
    case DType::kBF16: return fn(__nv_bfloat16{});
    case DType::kF32: return fn(float{});
    case DType::kF64: return fn(double{});
  }
  throw TypeError("cuda: unknown dtype");
}

// The same over the floating dtypes only; TypeError naming `op` otherwise.
template <typename Fn>
decltype(auto) dispatch_float_dtype(DType t, const char* op, Fn&& fn) {
  switch (t) {
    case DType::kF16: return fn(__half{});
    case DType::kBF16: return fn(__nv_bfloat16{});
    case DType::kF32: return fn(float{});
    case DType::kF64: return fn(double{});
    default: break;
  }
  throw TypeError(detail::concat(op, ": the cuda kernel takes floating dtypes, got ", dtype_name(t)));
}

}  // namespace tessera::cuda
