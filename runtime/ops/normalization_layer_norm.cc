// layer_norm and rms_norm over the trailing normalized_shape dims, with the
// statistics autograd keeps (mean, rstd) and their backward.
#include <limits>
#include <optional>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// Checks x against normalized_shape and an optional weight / bias of that
// shape; returns the number of leading (batch) dims.
int64_t check_norm_args(const char* name, const Tensor& x, const Shape& normalized_shape,
                        const Tensor& weight, const Tensor& bias) {
  TESSERA_CHECK(x.defined(), ValueError, name, ": undefined input");
  TESSERA_CHECK(!normalized_shape.empty(), ValueError, name,
                ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                "least one element, but got normalized_shape = ",
                shape_to_string(normalized_shape));
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, name, ": not implemented for ",
                dtype_name(x.dtype()), ", got input ", describe(x));
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  const int64_t axis = x.dim() - nd;
  bool fits = axis >= 0;
  for (int64_t i = 0; fits && i < nd; ++i) fits = x.sizes()[axis + i] == normalized_shape[i];
  TESSERA_CHECK(fits, ValueError, name, ": Given normalized_shape=",
                shape_to_string(normalized_shape), ", expected input with shape [*, ",
                shape_to_string(normalized_shape).substr(1), ", but got input of size",
                shape_to_string(x.sizes()));
  for (const Tensor* p : {&weight, &bias}) {
    if (!p->defined()) continue;
    const char* what = p == &weight ? "weight" : "bias";
    TESSERA_CHECK(p->sizes() == normalized_shape, ValueError, name, ": Expected ", what,
                  " to be of same shape as normalized_shape, but got ", what, " of shape ",
                  shape_to_string(p->sizes()), " and normalized_shape = ",
                  shape_to_string(normalized_shape));
    TESSERA_CHECK(p->device() == x.device(), DeviceError, name, ": ", what, " is ", describe(*p),
                  " but the input is ", describe(x));
    TESSERA_CHECK(is_floating(p->dtype()), TypeError, name, ": ", what,
                  " must be floating, got ", describe(*p));
  }
  return axis;
}

// weight / bias flattened, contiguous, in dtype (undefined stays undefined).
Tensor flat_param(const Tensor& p, DType dtype) {
  if (!p.defined()) return p;
  return p.to(dtype).contiguous().reshape({-1});
}

Shape stat_sizes(const Tensor& x, int64_t axis) {
  Shape s = x.sizes();
  for (int64_t d = axis; d < x.dim(); ++d) s[d] = 1;
  return s;
}

std::tuple<Tensor, Tensor, Tensor> norm_forward(bool rms, const char* name, const Tensor& x,
                                                const Shape& normalized_shape,
                                                const Tensor& weight, const Tensor& bias,
                                                double eps) {
  const int64_t axis = check_norm_args(name, x, normalized_shape, weight, bias);
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  // layer_norm keeps its statistics in x's dtype; rms_norm in float32 for
  // the 16-bit floats (as aten::_fused_rms_norm).
  const DType stat_dtype =
      rms && x.dtype() != DType::kF64 ? DType::kF32 : x.dtype();
  Tensor out = empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  Tensor mean;
  if (!rms) mean = empty(stat_sizes(x, axis), TensorOptions(stat_dtype, x.device()));
  Tensor rstd = empty(stat_sizes(x, axis), TensorOptions(stat_dtype, x.device()));
  if (rstd.numel() == 0) return {out, mean, rstd};
  if (out.numel() == 0) {
    // Rows of zero elements: mean 0 and rstd NaN (0 / 0), as PyTorch.
    if (mean.defined()) mean.zero_();
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return {out, mean, rstd};
  }
  // A device's fused kernel when it has one (the CPU does); otherwise the
  // composite from primitives.
  if (try_call_kernel<kernels::LayerNorm>(x.device(), rms, out, mean, rstd, x,
                                          flat_param(weight, x.dtype()),
                                          flat_param(bias, x.dtype()), nd, eps)) {
    return {out, mean, rstd};
  }
  Shape dims;
  for (int64_t d = axis; d < x.dim(); ++d) dims.push_back(d);
  // The 16-bit floats compute in float32, as the kernels do.
  const Tensor xf = x.dtype() == DType::kF64 ? x : x.to(DType::kF32);
  Tensor centered = xf;
  if (!rms) {
    const Tensor mu = tessera::mean(xf, dims, true);
    mean.copy_(mu);
    centered = sub(xf, mu);
  }
  const Tensor rs = rsqrt(add(tessera::mean(mul(centered, centered), dims, true), Scalar(eps)));
  rstd.copy_(rs);
  Tensor y = mul(centered, rs);
  if (weight.defined()) y = mul(y, weight);
  if (!rms && bias.defined()) y = add(y, bias);
  out.copy_(y);
  return {out, mean, rstd};
}

double default_rms_eps(DType t) {
  switch (t) {
    case DType::kF64: return std::numeric_limits<double>::epsilon();
    case DType::kF16: return 0.0009765625;  // 2^-10
    case DType::kBF16: return 0.0078125;    // 2^-7
    default: return std::numeric_limits<float>::epsilon();
  }
}

void check_backward_arg(const char* name, const char* what, const Tensor& t, const Tensor& x,
                        const Shape& sizes) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined ", what);
  TESSERA_CHECK(t.sizes() == sizes, ValueError, name, ": expected ", what, " of shape ",
                shape_to_string(sizes), ", got ", describe(t));
  TESSERA_CHECK(t.device() == x.device(), DeviceError, name, ": ", what, " is ", describe(t),
                " but the input is ", describe(x));
}

std::tuple<Tensor, Tensor, Tensor> norm_backward(bool rms, const char* name,
                                                 const Tensor& grad_out, const Tensor& x,
                                                 const Shape& normalized_shape,
                                                 const Tensor& mean, const Tensor& rstd,
                                                 const Tensor& weight, const Tensor& bias,
                                                 std::array<bool, 3> mask) {
  const int64_t axis = check_norm_args(name, x, normalized_shape, weight, bias);
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  check_backward_arg(name, "grad_out", grad_out, x, x.sizes());
  TESSERA_CHECK(grad_out.dtype() == x.dtype(), TypeError, name,
                ": grad_out must have the input's dtype, got ", describe(grad_out), " and ",
                describe(x));
  const Shape ss = stat_sizes(x, axis);
  if (!rms) check_backward_arg(name, "mean", mean, x, ss);
  check_backward_arg(name, "rstd", rstd, x, ss);
  Tensor gi, gw, gb;
  if (mask[0]) gi = empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  if (mask[1] && weight.defined()) gw = empty(weight.sizes(), TensorOptions(weight.dtype(), x.device()));
  if (!rms && mask[2] && bias.defined()) {
    gb = empty(bias.sizes(), TensorOptions(bias.dtype(), x.device()));
  }
  if (x.numel() == 0) {
    if (gw.defined()) gw.zero_();
    if (gb.defined()) gb.zero_();
    return {gi, gw, gb};
  }
  // The kernel writes N-element weight grads in x's dtype; convert after.
  Tensor gw_k = gw.defined() ? empty({gw.numel()}, TensorOptions(x.dtype(), x.device())) : Tensor();
  Tensor gb_k = gb.defined() ? empty({gb.numel()}, TensorOptions(x.dtype(), x.device())) : Tensor();
  call_kernel<kernels::LayerNormBackward>(x.device(), rms, gi, gw_k, gb_k, grad_out, x,
                                          rms ? Tensor() : mean, rstd,
                                          flat_param(weight, x.dtype()), nd);
  if (gw.defined()) gw.copy_(gw_k.view(gw.sizes()));
  if (gb.defined()) gb.copy_(gb_k.view(gb.sizes()));
  return {gi, gw, gb};
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return std::get<0>(norm_forward(false, "layer_norm", x, normalized_shape, weight, bias, eps));
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& x,
                                                     const Shape& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps) {
  return norm_forward(false, "native_layer_norm", x, normalized_shape, weight, bias, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& x, const Shape& normalized_shape, const Tensor& mean,
    const Tensor& rstd, const Tensor& weight, const Tensor& bias, std::array<bool, 3> output_mask) {
  return norm_backward(false, "native_layer_norm_backward", grad_out, x, normalized_shape, mean,
                       rstd, weight, bias, output_mask);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  return std::get<0>(rms_norm_forward(x, normalized_shape, weight, eps));
}

std::tuple<Tensor, Tensor> rms_norm_forward(const Tensor& x, const Shape& normalized_shape,
                                            const Tensor& weight, std::optional<double> eps) {
  TESSERA_CHECK(x.defined(), ValueError, "rms_norm: undefined input");
  auto [out, mean, rstd] = norm_forward(true, "rms_norm", x, normalized_shape, weight, Tensor(),
                                        eps.value_or(default_rms_eps(x.dtype())));
  (void)mean;
  return {out, rstd};
}

std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_out, const Tensor& x,
                                             const Shape& normalized_shape, const Tensor& rstd,
                                             const Tensor& weight, std::array<bool, 2> output_mask) {
  auto [gi, gw, gb] = norm_backward(true, "rms_norm_backward", grad_out, x, normalized_shape,
                                    Tensor(), rstd, weight, Tensor(),
                                    {output_mask[0], output_mask[1], false});
  (void)gb;
  return {gi, gw};
}

}  // namespace tessera
