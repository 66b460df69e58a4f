#include "runtime/ops/type_promotion.h"

#include <cmath>
#include <limits>
#include <optional>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// PyTorch's ResultTypeState: operands are grouped by priority (dimensioned
// tensors, 0-d tensors, Scalars); a lower group only raises the result when
// it is of a higher category.
struct ResultTypeState {
  std::optional<DType> dim_result, zero_dim_result, wrapped_result;

  static void promote_into(std::optional<DType>& slot, DType t) {
    slot = slot ? promote_types(*slot, t) : t;
  }
  void add(const Tensor& t) { promote_into(t.dim() > 0 ? dim_result : zero_dim_result, t.dtype()); }
  void add(const Scalar& s) { promote_into(wrapped_result, default_dtype_for(s.category())); }

  static std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_floating(*higher)) return higher;
    if (*higher == DType::kBool || is_floating(*lower)) return promote_types(*higher, *lower);
    return higher;
  }
  DType result() const {
    return combine(dim_result, combine(zero_dim_result, wrapped_result)).value_or(DType::kF32);
  }
};

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

DType result_type(const Tensor& a, Scalar b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TESSERA_CHECK(da == db || da == 1 || db == 1, ValueError, op,
                  ": shapes ", shape_to_string(a), " and ", shape_to_string(b),
                  " cannot be broadcast together (size ", da, " vs ", db,
                  " at dimension ", i, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

void check_scalar_fits(const char* op, const Scalar& value, DType dtype) {
  if (dtype == DType::kBool) return;
  bool fits = dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return true;
    } else {
      double lo, hi;
      if constexpr (std::is_same_v<T, Half>) {
        lo = -65504.0, hi = 65504.0;
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        lo = -3.3895313892515355e38, hi = 3.3895313892515355e38;
      } else {
        hi = static_cast<double>(std::numeric_limits<T>::max());
        // Unsigned types accept negatives down to -max (two's complement
        // wrap), as c10's overflow check does.
        lo = std::is_unsigned_v<T> ? -hi : static_cast<double>(std::numeric_limits<T>::lowest());
      }
      if (value.is_floating()) {
        double v = value.to<double>();
        if (!std::isfinite(v)) return is_floating(dtype);
        if constexpr (std::is_same_v<T, double>) return true;
        return v >= lo && v <= hi;
      }
      if (value.is_bool()) return true;
      int64_t v = value.to<int64_t>();
      if (is_floating(dtype)) return true;
      return static_cast<double>(v) >= lo && static_cast<double>(v) <= hi;
    }
  });
  TESSERA_CHECK(fits, ValueError, op, ": value ", value.to_string(), " cannot be converted to ",
                dtype_name(dtype), " without overflow");
}

Device common_device(const char* op, const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.defined() && b.defined(), ValueError, op, ": undefined tensor argument");
  Device da = a.device(), db = b.device();
  if (da == db) return da;
  Device host = host_device();
  if (b.dim() == 0 && db == host) return da;
  if (a.dim() == 0 && da == host) return db;
  throw DeviceError(detail::concat(op, ": expected all tensors to be on the same device, got ",
                                   describe(a), " and ", describe(b)));
}

Tensor prepare_operand(const Tensor& t, Device device, DType dtype) {
  if (t.device() == device && t.dtype() == dtype) return t;
  return t.to(device, dtype);
}

}  // namespace tessera
