// Element types and PyTorch's type-promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/half.h"

namespace tessera {

// The order matters: it is the index into the promotion table.
enum class DType : uint8_t {
  kBool,
  kU8,
  kI8,
  kI16,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
};

inline constexpr int kNumDTypes = 10;

// Bytes per element. Inline: every kernel and view computes addresses with it.
constexpr size_t itemsize(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8: return 1;
    case DType::kI16:
    case DType::kF16:
    case DType::kBF16: return 2;
    case DType::kI32:
    case DType::kF32: return 4;
    case DType::kI64:
    case DType::kF64: return 8;
  }
  return 0;
}
std::string_view dtype_name(DType t);  // "float32", "int64", ... as PyTorch prints
bool is_floating(DType t);
bool is_integral(DType t);  // excludes bool
bool is_signed(DType t);
// float16 and bfloat16: the 16-bit floats whose arithmetic PyTorch's
// kernels do in float32, rounding once at the end.
constexpr bool is_reduced_float(DType t) { return t == DType::kF16 || t == DType::kBF16; }

// torch.promote_types: the smallest type both a and b convert to without
// losing their category (bool < integer < floating).
DType promote_types(DType a, DType b);

// The category of a value, for result_type's rule that a 0-d tensor or a
// Scalar only raises the result when it is of a higher category.
enum class DTypeCategory : uint8_t { kBool = 0, kIntegral = 1, kFloating = 2 };
DTypeCategory category(DType t);

// The dtype that a Python-style number of that category becomes:
// bool, int64, or the default float dtype (float32).
DType default_dtype_for(DTypeCategory c);

// C++ type <-> DType.
template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::kBool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::kU8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::kI8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::kI16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::kF16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::kBF16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::kF32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::kF64; };
template <typename T> inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls fn(T{}) with the C++ type of dtype t. Kernels use it to instantiate
// one loop per dtype.
template <typename Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::kBool: return fn(bool{});
    case DType::kU8: return fn(uint8_t{});
    case DType::kI8: return fn(int8_t{});
    case DType::kI16: return fn(int16_t{});
    case DType::kI32: return fn(int32_t{});
    case DType::kI64: return fn(int64_t{});
    case DType::kF16: return fn(Half{});
    case DType::kBF16: return fn(BFloat16{});
    case DType::kF32: return fn(float{});
    case DType::kF64: return fn(double{});
  }
  __builtin_unreachable();
}

// The type a kernel computes in for storage type T: float for the 16-bit
// floats (they accumulate in f32), T otherwise.
template <typename T> struct compute_type { using type = T; };
template <> struct compute_type<Half> { using type = float; };
template <> struct compute_type<BFloat16> { using type = float; };
template <typename T> using compute_t = typename compute_type<T>::type;

}  // namespace tessera
