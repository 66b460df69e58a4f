// Element kinds of the typed elementwise shaders (shaders/element_kinds.glsl):
// the dtypes they load and store, and Scalar arguments encoded for them.
// f64 has no kind: it runs in shaders of its own (the *_f64 ones) where the
// device has shaderFloat64, and stages through the host elsewhere.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>

#include "runtime/core/dtype.h"
#include "runtime/core/scalar.h"

namespace tessera::vulkan {

enum class ElementKind : uint32_t { kF32, kF16, kI32, kI64, kBool, kU8, kI8, kI16, kBF16 };

inline std::optional<ElementKind> element_kind(DType dtype) {
  switch (dtype) {
    case DType::kF32: return ElementKind::kF32;
    case DType::kF16: return ElementKind::kF16;
    case DType::kI32: return ElementKind::kI32;
    case DType::kI64: return ElementKind::kI64;
    case DType::kBool: return ElementKind::kBool;
    case DType::kU8: return ElementKind::kU8;
    case DType::kI8: return ElementKind::kI8;
    case DType::kI16: return ElementKind::kI16;
    case DType::kBF16: return ElementKind::kBF16;
    default: return std::nullopt;
  }
}

inline uint32_t kind_constant(ElementKind kind) { return static_cast<uint32_t>(kind); }

// A Scalar as the shaders' scalar_float / scalar_int / scalar_long read it
// (a uvec2): floating dtypes get the f32 bits of the value (f16 and bf16
// compute in f32, as the CPU kernel's compute type); integral ones the value
// converted to the dtype first, as the CPU kernel's p.to<T>() (so it wraps
// the same way), sign-extended to 64 bits; bool 0 or 1; f64 the double's
// bits (doubles.glsl, scalar_double).
struct EncodedScalar {
  uint32_t lo = 0;
  uint32_t hi = 0;
};

inline EncodedScalar encode_scalar(const Scalar& s, DType dtype) {
  int64_t v = 0;
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16: return {std::bit_cast<uint32_t>(s.to<float>()), 0};
    case DType::kF64: {
      const auto bits = std::bit_cast<uint64_t>(s.to<double>());
      return {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)};
    }
    case DType::kBool: v = s.to<bool>() ? 1 : 0; break;
    case DType::kU8: v = s.to<uint8_t>(); break;
    case DType::kI8: v = s.to<int8_t>(); break;
    case DType::kI16: v = s.to<int16_t>(); break;
    case DType::kI32: v = s.to<int32_t>(); break;
    default: v = s.to<int64_t>(); break;
  }
  const auto bits = static_cast<uint64_t>(v);
  return {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)};
}

}  // namespace tessera::vulkan
