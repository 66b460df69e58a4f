#include "runtime/core/dtype.h"

#include <ostream>

namespace tessera {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kU8: return "uint8";
    case DType::kI8: return "int8";
    case DType::kI16: return "int16";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kF32: return "float32";
    case DType::kF64: return "float64";
  }
  return "unknown";
}

bool is_floating(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}

bool is_integral(DType t) { return !is_floating(t) && t != DType::kBool; }

bool is_signed(DType t) { return t != DType::kBool && t != DType::kU8; }

DTypeCategory category(DType t) {
  if (t == DType::kBool) return DTypeCategory::kBool;
  return is_floating(t) ? DTypeCategory::kFloating : DTypeCategory::kIntegral;
}

DType default_dtype_for(DTypeCategory c) {
  switch (c) {
    case DTypeCategory::kBool: return DType::kBool;
    case DTypeCategory::kIntegral: return DType::kI64;
    case DTypeCategory::kFloating: return DType::kF32;
  }
  return DType::kF32;
}

DType promote_types(DType a, DType b) {
  // PyTorch's table (c10/core/ScalarType.cpp), restricted to our dtypes and
  // in our enum order: b1 u1 i1 i2 i4 i8 f2 bf f4 f8.
  constexpr DType b1 = DType::kBool, u1 = DType::kU8, i1 = DType::kI8,
                  i2 = DType::kI16, i4 = DType::kI32, i8 = DType::kI64,
                  f2 = DType::kF16, bf = DType::kBF16, f4 = DType::kF32,
                  f8 = DType::kF64;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace tessera
