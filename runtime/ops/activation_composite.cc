// Activations written once from the pointwise ops, so that every device
// runs them with the kernels it already has (no CPU fallback): leaky_relu,
// elu (PyTorch's selu and celu are elu with other coefficients), softplus,
// hardtanh (relu6), log_sigmoid and mish, each with the gradient autograd
// asks for. Formulas and NaN behaviour as PyTorch's CPU kernels. float16
// and bfloat16 compute in float32 and round once at the end, as PyTorch's
// kernels do (exp of a half overflows from 11.1 on).
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

void check_floating(const char* op, const Tensor& x) {
  TESSERA_CHECK(x.defined(), ValueError, op, ": undefined tensor argument");
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, op, ": not implemented for ",
                dtype_name(x.dtype()), " (", describe(x), "); it takes floating tensors");
}


// x in the dtype the formula runs in: float32 for the half types.
Tensor widen(const Tensor& x) { return is_reduced_float(x.dtype()) ? x.to(DType::kF32) : x; }

// f(x) computed in the wide dtype, returned in x's dtype.
template <typename F>
Tensor unary(const char* op, const Tensor& x, F&& f) {
  check_floating(op, x);
  Tensor r = f(widen(x));
  return r.dtype() == x.dtype() ? r : r.to(x.dtype());
}

// f(grad, saved) likewise; grad and saved broadcast, the result has their
// promoted dtype (as the other activation gradients).
template <typename F>
Tensor gradient(const char* op, const Tensor& grad, const Tensor& saved, F&& f) {
  check_floating(op, grad);
  check_floating(op, saved);
  const DType out = promote_types(grad.dtype(), saved.dtype());
  Tensor r = f(widen(grad), widen(saved));
  return r.dtype() == out ? r : r.to(out);
}

double to_double(const Scalar& s) { return s.to<double>(); }

}  // namespace

Tensor leaky_relu(const Tensor& x, Scalar negative_slope) {
  return unary("leaky_relu", x, [&](const Tensor& v) {
    return where(gt(v, Scalar(0)), v, mul(v, negative_slope));
  });
}

Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, Scalar negative_slope) {
  return gradient("leaky_relu_backward", grad, self, [&](const Tensor& g, const Tensor& x) {
    return where(gt(x, Scalar(0)), g, mul(g, negative_slope));
  });
}

Tensor elu(const Tensor& x, Scalar alpha, Scalar scale, Scalar input_scale) {
  const double neg = to_double(alpha) * to_double(scale);
  return unary("elu", x, [&](const Tensor& v) {
    Tensor negative = mul(expm1(mul(v, input_scale)), Scalar(neg));
    return where(gt(v, Scalar(0)), mul(v, scale), negative);
  });
}

Tensor elu_backward(const Tensor& grad, Scalar alpha, Scalar scale, Scalar input_scale,
                    bool is_result, const Tensor& self_or_result) {
  const double neg = to_double(alpha) * to_double(scale), in = to_double(input_scale);
  return gradient("elu_backward", grad, self_or_result, [&](const Tensor& g, const Tensor& v) {
    // d/dx of neg * expm1(in * x) is in * neg * exp(in * x) = in * (result + neg).
    Tensor negative = is_result ? mul(mul(g, Scalar(in)), add(v, Scalar(neg)))
                                : mul(g, mul(exp(mul(v, Scalar(in))), Scalar(in * neg)));
    return where(gt(v, Scalar(0)), mul(g, scale), negative);
  });
}

Tensor softplus(const Tensor& x, Scalar beta, Scalar threshold) {
  return unary("softplus", x, [&](const Tensor& v) {
    Tensor bx = mul(v, beta);
    return where(gt(bx, threshold), v, div(log1p(exp(bx)), beta));
  });
}

Tensor softplus_backward(const Tensor& grad, const Tensor& self, Scalar beta, Scalar threshold) {
  return gradient("softplus_backward", grad, self, [&](const Tensor& g, const Tensor& x) {
    Tensor bx = mul(x, beta);
    return where(gt(bx, threshold), g, mul(g, sigmoid(bx)));
  });
}

// Integer tensors too (PyTorch's hardtanh is clamp): the limits are cast to
// the tensor's kind first, so the result keeps its dtype.
Tensor hardtanh(const Tensor& x, Scalar min_val, Scalar max_val) {
  if (x.defined() && !is_floating(x.dtype())) {
    TESSERA_CHECK(x.dtype() != DType::kBool, TypeError, "hardtanh: not implemented for bool (",
                  describe(x), ")");
    return clamp(x, Scalar(min_val.to<int64_t>()), Scalar(max_val.to<int64_t>()));
  }
  return unary("hardtanh", x, [&](const Tensor& v) { return clamp(v, min_val, max_val); });
}

// 0 at and beyond the limits, grad inside them and for NaN (PyTorch's rule).
Tensor hardtanh_backward(const Tensor& grad, const Tensor& self, Scalar min_val,
                         Scalar max_val) {
  return gradient("hardtanh_backward", grad, self, [&](const Tensor& g, const Tensor& x) {
    return where(logical_or(le(x, min_val), ge(x, max_val)), Scalar(0), g);
  });
}

// min(x, 0) - log1p(exp(-|x|)): no overflow for large |x|.
Tensor log_sigmoid(const Tensor& x) {
  return unary("log_sigmoid", x, [](const Tensor& v) {
    return sub(clamp_max(v, Scalar(0)), log1p(exp(neg(abs(v)))));
  });
}

// d/dx log(sigmoid(x)) = sigmoid(-x).
Tensor log_sigmoid_backward(const Tensor& grad, const Tensor& self) {
  return gradient("log_sigmoid_backward", grad, self,
                  [](const Tensor& g, const Tensor& x) { return mul(g, sigmoid(neg(x))); });
}

namespace {
// tanh(softplus(x)) with softplus's beta 1 and threshold 20, as mish uses.
Tensor tanh_softplus(const Tensor& x) { return tanh(softplus(x, Scalar(1), Scalar(20))); }
}  // namespace

Tensor mish(const Tensor& x) {
  return unary("mish", x, [](const Tensor& v) { return mul(v, tanh_softplus(v)); });
}

// tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2), sp = softplus(x).
Tensor mish_backward(const Tensor& grad, const Tensor& self) {
  return gradient("mish_backward", grad, self, [](const Tensor& g, const Tensor& x) {
    Tensor t = tanh_softplus(x);
    return mul(g, add(t, mul(mul(x, sigmoid(x)), add(neg(mul(t, t)), Scalar(1)))));
  });
}

}  // namespace tessera
