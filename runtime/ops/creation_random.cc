// randint, bernoulli, dropout: random ops on the counter-based Philox
// generator, so one seed gives the same values on every device. The dropout
// mask is a bernoulli draw, hence device-independent as well.
#include <limits>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

// The integer range a dtype holds exactly ([lo, hi]); floats hold every
// integer up to 2^mantissa bits.
std::pair<double, double> exact_integer_range(DType t) {
  switch (t) {
    case DType::kBool: return {0, 1};
    case DType::kU8: return {0, 255};
    case DType::kI8: return {-128, 127};
    case DType::kI16: return {-32768, 32767};
    case DType::kI32: return {-2147483648.0, 2147483647.0};
    case DType::kI64: return {-9223372036854775808.0, 9223372036854775807.0};
    case DType::kF16: return {-2048, 2048};
    case DType::kBF16: return {-256, 256};
    case DType::kF32: return {-16777216.0, 16777216.0};
    case DType::kF64: return {-9007199254740992.0, 9007199254740992.0};
  }
  return {0, 0};
}

Generator& generator_for(Device device, Generator* gen) {
  return gen ? *gen : default_generator(device);
}

}  // namespace

Tensor randint(int64_t high, const Shape& sizes, TensorOptions options, Generator* gen) {
  return randint(0, high, sizes, options, gen);
}

Tensor randint(int64_t low, int64_t high, const Shape& sizes, TensorOptions options,
               Generator* gen) {
  TESSERA_CHECK(low < high, ValueError, "randint: random_ expects 'from' to be less than 'to', "
                "but got from=", low, " >= to=", high);
  DType dtype = options.dtype_or(DType::kI64);
  auto [lo, hi] = exact_integer_range(dtype);
  TESSERA_CHECK(static_cast<double>(low) >= lo && static_cast<double>(low) <= hi, ValueError,
                "randint: from is out of bounds for ", dtype_name(dtype), " (from=", low, ")");
  TESSERA_CHECK(static_cast<double>(high) - 1 <= hi, ValueError, "randint: to - 1 is out of bounds for ",
                dtype_name(dtype), " (to=", high, ")");
  Tensor out = empty(sizes, TensorOptions(dtype, options.device));
  // high - low as unsigned: exact even when it exceeds INT64_MAX.
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  PhiloxState state = generator_for(out.device(), gen).reserve(static_cast<uint64_t>(out.numel()));
  if (out.numel() > 0) call_kernel<kernels::Randint>(out.device(), out, state, low, range);
  return out;
}

namespace detail {
// bernoulli_ without the range check on p, for callers whose p is known good.
Tensor& bernoulli_unchecked_(Tensor& self, const Tensor& p, Generator* gen);
}  // namespace detail

namespace {

// p's values must lie in [0, 1] (NaN does not), as PyTorch checks on the
// CPU: out-of-range probabilities would silently saturate.
void check_probabilities(const Tensor& p) {
  if (p.numel() == 0) return;
  const double lo = amin(p).item<double>();
  const double hi = amax(p).item<double>();
  TESSERA_CHECK(lo >= 0 && hi <= 1, ValueError, "bernoulli_: expected all probabilities in [0, 1], "
                "got values in [", lo, ", ", hi, "] in ", describe(p));
}

}  // namespace

Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen) {
  if (p.defined() && is_floating(p.dtype())) check_probabilities(p);
  return detail::bernoulli_unchecked_(self, p, gen);
}

Tensor& detail::bernoulli_unchecked_(Tensor& self, const Tensor& p, Generator* gen) {
  TESSERA_CHECK(self.defined() && p.defined(), ValueError, "bernoulli_: undefined tensor");
  TESSERA_CHECK(is_floating(p.dtype()), TypeError,
                "bernoulli_: expected a floating probability tensor, got ", describe(p));
  Device device = common_device("bernoulli_", self, p);
  TESSERA_CHECK(device == self.device(), DeviceError, "bernoulli_: expected p on ",
                self.device().to_string(), ", got ", describe(p));
  Shape b = broadcast_shapes(self.sizes(), p.sizes(), "bernoulli_");
  TESSERA_CHECK(b == self.sizes(), ValueError, "bernoulli_: p of shape ",
                shape_to_string(p.sizes()), " does not broadcast to self's shape ",
                shape_to_string(self.sizes()));
  PhiloxState state = generator_for(device, gen).reserve(static_cast<uint64_t>(self.numel()));
  if (self.numel() > 0) {
    call_kernel<kernels::Bernoulli>(device, self, p.to(device).expand(b), state);
  }
  return self;
}

Tensor& bernoulli_(Tensor& self, double p, Generator* gen) {
  TESSERA_CHECK(p >= 0 && p <= 1, ValueError, "bernoulli_: bernoulli_ expects p to be in [0, 1], "
                "but got p=", p);
  Tensor prob = full({}, p, TensorOptions(DType::kF64, self.device()));
  return detail::bernoulli_unchecked_(self, prob, gen);
}

Tensor bernoulli(const Tensor& p, Generator* gen) {
  TESSERA_CHECK(p.defined() && is_floating(p.dtype()), TypeError,
                "bernoulli: expected a floating probability tensor, got ",
                p.defined() ? describe(p) : std::string("undefined"));
  Tensor out = empty_like(p);
  return bernoulli_(out, p, gen);
}

Tensor bernoulli(const Tensor& self, double p, Generator* gen) {
  Tensor out = empty_like(self);
  return bernoulli_(out, p, gen);
}

std::pair<Tensor, Tensor> native_dropout(const Tensor& input, double p, bool train,
                                         Generator* gen) {
  TESSERA_CHECK(input.defined(), ValueError, "dropout: undefined tensor");
  TESSERA_CHECK(p >= 0 && p <= 1, ValueError,
                "dropout: dropout probability has to be between 0 and 1, but got ", p);
  TESSERA_CHECK(is_floating(input.dtype()), TypeError,
                "dropout: expected a floating input, got ", describe(input));
  if (!train) {
    return {input.clone(), full(input.sizes(), true, TensorOptions(DType::kBool, input.device()))};
  }
  Tensor mask = empty(input.sizes(), TensorOptions(DType::kBool, input.device()));
  bernoulli_(mask, 1.0 - p, gen);
  if (p == 1) return {zeros_like(input), mask};  // 1 / (1 - p) would be inf
  return {native_dropout_backward(input, mask, 1.0 / (1.0 - p)), mask};
}

Tensor dropout(const Tensor& input, double p, bool train, Generator* gen) {
  return native_dropout(input, p, train, gen).first;
}

Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  TESSERA_CHECK(grad.defined() && mask.defined(), ValueError,
                "native_dropout_backward: undefined tensor");
  TESSERA_CHECK(mask.dtype() == DType::kBool, TypeError,
                "native_dropout_backward: mask should be a bool tensor, got ", describe(mask));
  TESSERA_CHECK(is_floating(grad.dtype()), TypeError,
                "native_dropout_backward: expected a floating grad, got ", describe(grad));
  TESSERA_CHECK(grad.sizes() == mask.sizes(), ValueError, "native_dropout_backward: grad ",
                describe(grad), " and mask ", describe(mask), " must have one shape");
  return mul(mul(grad, mask), scale);
}

}  // namespace tessera
