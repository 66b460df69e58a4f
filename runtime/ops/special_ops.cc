// Front end of the special functions: dtype rules, broadcasting, the
// integer cases that stay exact, then the SpecialFunction kernel.
#include "runtime/ops/special_ops.h"

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"
#include "runtime/ops/pointwise_ops.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {
namespace {

using pointwise::Target;

enum class Rule {
  kToFloat,    // integers and bool compute in float32
  kFloatOnly,  // floating dtypes only
  kPredicate,  // any dtype in, bool out
  kKeep,       // integer dtypes kept (computed exactly by other ops)
};

struct SpecialInfo {
  const char* name;
  Rule rule;
};

SpecialInfo info(SpecialOp op) {
  switch (op) {
    case SpecialOp::kErfc: return {"erfc", Rule::kToFloat};
    case SpecialOp::kErfinv: return {"erfinv", Rule::kToFloat};
    case SpecialOp::kExp2: return {"exp2", Rule::kToFloat};
    case SpecialOp::kFrac: return {"frac", Rule::kFloatOnly};
    case SpecialOp::kSinc: return {"sinc", Rule::kToFloat};
    case SpecialOp::kDigamma: return {"digamma", Rule::kToFloat};
    case SpecialOp::kLgamma: return {"lgamma", Rule::kToFloat};
    case SpecialOp::kI0: return {"i0", Rule::kToFloat};
    case SpecialOp::kI0e: return {"special_i0e", Rule::kToFloat};
    case SpecialOp::kI1: return {"special_i1", Rule::kToFloat};
    case SpecialOp::kI1e: return {"special_i1e", Rule::kToFloat};
    case SpecialOp::kNdtri: return {"special_ndtri", Rule::kToFloat};
    case SpecialOp::kLogNdtr: return {"special_log_ndtr", Rule::kToFloat};
    case SpecialOp::kErfcx: return {"special_erfcx", Rule::kToFloat};
    case SpecialOp::kEntr: return {"special_entr", Rule::kToFloat};
    case SpecialOp::kAiryAi: return {"special_airy_ai", Rule::kToFloat};
    case SpecialOp::kBesselJ0: return {"special_bessel_j0", Rule::kToFloat};
    case SpecialOp::kBesselJ1: return {"special_bessel_j1", Rule::kToFloat};
    case SpecialOp::kBesselY0: return {"special_bessel_y0", Rule::kToFloat};
    case SpecialOp::kBesselY1: return {"special_bessel_y1", Rule::kToFloat};
    case SpecialOp::kModifiedBesselI0: return {"special_modified_bessel_i0", Rule::kToFloat};
    case SpecialOp::kModifiedBesselI1: return {"special_modified_bessel_i1", Rule::kToFloat};
    case SpecialOp::kModifiedBesselK0: return {"special_modified_bessel_k0", Rule::kToFloat};
    case SpecialOp::kModifiedBesselK1: return {"special_modified_bessel_k1", Rule::kToFloat};
    case SpecialOp::kScaledModifiedBesselK0:
      return {"special_scaled_modified_bessel_k0", Rule::kToFloat};
    case SpecialOp::kScaledModifiedBesselK1:
      return {"special_scaled_modified_bessel_k1", Rule::kToFloat};
    case SpecialOp::kSphericalBesselJ0: return {"special_spherical_bessel_j0", Rule::kToFloat};
    case SpecialOp::kPolygamma: return {"polygamma", Rule::kToFloat};
    case SpecialOp::kSignbit: return {"signbit", Rule::kPredicate};
    case SpecialOp::kZeta: return {"special_zeta", Rule::kToFloat};
    case SpecialOp::kIgamma: return {"igamma", Rule::kToFloat};
    case SpecialOp::kIgammac: return {"igammac", Rule::kToFloat};
    case SpecialOp::kXlog1py: return {"special_xlog1py", Rule::kToFloat};
    case SpecialOp::kHypot: return {"hypot", Rule::kFloatOnly};
    case SpecialOp::kCopysign: return {"copysign", Rule::kToFloat};
    case SpecialOp::kNextafter: return {"nextafter", Rule::kFloatOnly};
    case SpecialOp::kFmax: return {"fmax", Rule::kKeep};
    case SpecialOp::kFmin: return {"fmin", Rule::kKeep};
    case SpecialOp::kHeaviside: return {"heaviside", Rule::kKeep};
    case SpecialOp::kChebyshevT: return {"special_chebyshev_polynomial_t", Rule::kToFloat};
    case SpecialOp::kChebyshevU: return {"special_chebyshev_polynomial_u", Rule::kToFloat};
    case SpecialOp::kChebyshevV: return {"special_chebyshev_polynomial_v", Rule::kToFloat};
    case SpecialOp::kChebyshevW: return {"special_chebyshev_polynomial_w", Rule::kToFloat};
    case SpecialOp::kShiftedChebyshevT:
      return {"special_shifted_chebyshev_polynomial_t", Rule::kToFloat};
    case SpecialOp::kShiftedChebyshevU:
      return {"special_shifted_chebyshev_polynomial_u", Rule::kToFloat};
    case SpecialOp::kShiftedChebyshevV:
      return {"special_shifted_chebyshev_polynomial_v", Rule::kToFloat};
    case SpecialOp::kShiftedChebyshevW:
      return {"special_shifted_chebyshev_polynomial_w", Rule::kToFloat};
    case SpecialOp::kHermiteH: return {"special_hermite_polynomial_h", Rule::kToFloat};
    case SpecialOp::kHermiteHe: return {"special_hermite_polynomial_he", Rule::kToFloat};
    case SpecialOp::kLaguerreL: return {"special_laguerre_polynomial_l", Rule::kToFloat};
    case SpecialOp::kLegendreP: return {"special_legendre_polynomial_p", Rule::kToFloat};
  }
  return {"special_function", Rule::kToFloat};
}

DType compute_dtype(SpecialOp op, DType common, const std::string& operands) {
  const SpecialInfo i = info(op);
  switch (i.rule) {
    case Rule::kToFloat: return is_floating(common) ? common : DType::kF32;
    case Rule::kFloatOnly:
      TESSERA_CHECK(is_floating(common), TypeError, i.name,
                    ": needs floating dtypes (float16, bfloat16, float32, float64), got ",
                    operands);
      return common;
    case Rule::kKeep:
      TESSERA_CHECK(common != DType::kBool, TypeError, i.name, ": not implemented for bool (",
                    operands, ")");
      return common;
    case Rule::kPredicate: return common;
  }
  return common;
}

Tensor unary_value(SpecialOp op, const Tensor& x, Target target, Scalar p0 = 0) {
  const SpecialInfo i = info(op);
  TESSERA_CHECK(!kernels::is_binary(op), ValueError, i.name, ": needs two operands");
  TESSERA_CHECK(x.defined(), ValueError, i.name, ": undefined tensor argument");
  const DType cdt = compute_dtype(op, x.dtype(), describe(x));
  const DType result = i.rule == Rule::kPredicate ? DType::kBool : cdt;
  const Device device = x.device();
  return pointwise::deliver_value(i.name, target, x.sizes(), result, device, {&x},
                                  [&](Tensor& dst) {
    call_kernel<kernels::SpecialFunction>(device, op, dst, prepare_operand(x, device, cdt),
                                          Tensor(), p0);
  });
}

// fmax, fmin and heaviside of integer tensors: no NaN to ignore, so the
// exact integer ops give the result.
Tensor integer_value(SpecialOp op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case SpecialOp::kFmax: return maximum(a, b);
    case SpecialOp::kFmin: return minimum(a, b);
    default: break;
  }
  // heaviside: b where a == 0, else a > 0.
  const DType dtype = result_type(a, b);
  return where(eq(a, Scalar(int64_t{0})), b.to(dtype), gt(a, Scalar(int64_t{0})).to(dtype));
}

Tensor binary_value(SpecialOp op, const Tensor& a, const Tensor& b, Target target) {
  const SpecialInfo i = info(op);
  TESSERA_CHECK(kernels::is_binary(op), ValueError, i.name, ": takes one operand");
  TESSERA_CHECK(a.defined() && b.defined(), ValueError, i.name, ": undefined tensor argument");
  const DType common = result_type(a, b);
  const Device device = common_device(i.name, a, b);
  const Shape shape = broadcast_shapes(a.sizes(), b.sizes(), i.name);
  const DType dtype = compute_dtype(op, common, describe(a) + " and " + describe(b));
  return pointwise::deliver_value(i.name, target, shape, dtype, device, {&a, &b},
                                  [&](Tensor& dst) {
    if (i.rule == Rule::kKeep && !is_floating(dtype)) {
      dst.copy_(integer_value(op, a, b));
      return;
    }
    call_kernel<kernels::SpecialFunction>(device, op, dst,
                                          prepare_operand(a, device, dtype).expand(shape),
                                          prepare_operand(b, device, dtype).expand(shape),
                                          Scalar(0));
  });
}

}  // namespace

const char* special_name(SpecialOp op) { return info(op).name; }

Tensor special_function(SpecialOp op, const Tensor& x) {
  return unary_value(op, x, pointwise::functional());
}

Tensor& special_function_out(Tensor& out, SpecialOp op, const Tensor& x) {
  unary_value(op, x, pointwise::into(out));
  return out;
}

Tensor special_function(SpecialOp op, const Tensor& a, const Tensor& b) {
  return binary_value(op, a, b, pointwise::functional());
}

Tensor& special_function_out(Tensor& out, SpecialOp op, const Tensor& a, const Tensor& b) {
  binary_value(op, a, b, pointwise::into(out));
  return out;
}

Tensor polygamma(int64_t n, const Tensor& x) {
  TESSERA_CHECK(n >= 0, ValueError, "polygamma: the order n must be >= 0, got ", n);
  return unary_value(SpecialOp::kPolygamma, x, pointwise::functional(), Scalar(n));
}

Tensor& polygamma_out(Tensor& out, int64_t n, const Tensor& x) {
  TESSERA_CHECK(n >= 0, ValueError, "polygamma: the order n must be >= 0, got ", n);
  unary_value(SpecialOp::kPolygamma, x, pointwise::into(out), Scalar(n));
  return out;
}

}  // namespace tessera
