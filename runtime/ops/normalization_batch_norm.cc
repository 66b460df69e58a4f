// batch_norm over the channel dim (dim 1), training and eval, as
// aten::native_batch_norm, and its backward.
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// The dtype of the saved statistics: float32 for the 16-bit floats.
DType stat_dtype(DType x) { return x == DType::kF64 ? DType::kF64 : DType::kF32; }

void check_channel_vec(const char* name, const char* what, const Tensor& t, const Tensor& x,
                       int64_t channels) {
  if (!t.defined()) return;
  TESSERA_CHECK(t.dim() == 1 && t.sizes()[0] == channels, ValueError, name, ": expected ", what,
                " of shape [", channels, "] (the channels of input ", describe(x), "), got ",
                describe(t));
  TESSERA_CHECK(t.device() == x.device(), DeviceError, name, ": ", what, " is ", describe(t),
                " but the input is ", describe(x));
  TESSERA_CHECK(is_floating(t.dtype()), TypeError, name, ": ", what, " must be floating, got ",
                describe(t));
}

int64_t check_input(const char* name, const Tensor& x) {
  TESSERA_CHECK(x.defined(), ValueError, name, ": undefined input");
  TESSERA_CHECK(x.dim() >= 2, ValueError, name,
                ": expected an input of at least 2 dims [N, C, ...], got ", describe(x));
  TESSERA_CHECK(is_floating(x.dtype()), TypeError, name, ": not implemented for ",
                dtype_name(x.dtype()), ", got input ", describe(x));
  return x.sizes()[1];
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& x, const Tensor& weight,
                                              const Tensor& bias, const Tensor& running_mean,
                                              const Tensor& running_var, bool training,
                                              double momentum, double eps) {
  const char* name = "batch_norm";
  const int64_t c = check_input(name, x);
  check_channel_vec(name, "weight", weight, x, c);
  check_channel_vec(name, "bias", bias, x, c);
  check_channel_vec(name, "running_mean", running_mean, x, c);
  check_channel_vec(name, "running_var", running_var, x, c);
  TESSERA_CHECK(running_mean.defined() == running_var.defined(), ValueError, name,
                ": running_mean and running_var must both be given or both be undefined");
  TESSERA_CHECK(training || running_mean.defined(), ValueError, name,
                ": running_mean and running_var must be defined in evaluation mode");
  if (training) {
    TESSERA_CHECK(x.numel() / (c == 0 ? 1 : c) > 0 || x.numel() == 0, ValueError, name,
                  ": no values per channel in ", describe(x));
  }
  Tensor out = empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  const DType sd = stat_dtype(x.dtype());
  Tensor save_mean = empty({training ? c : 0}, TensorOptions(sd, x.device()));
  Tensor save_invstd = empty({training ? c : 0}, TensorOptions(sd, x.device()));
  Tensor rm = running_mean, rv = running_var;
  call_kernel<kernels::BatchNorm>(x.device(), out, save_mean, save_invstd, rm, rv, x, weight, bias,
                                  training, momentum, eps);
  return {out, save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& running_mean,
    const Tensor& running_var, const Tensor& save_mean, const Tensor& save_invstd, bool training,
    double eps, std::array<bool, 3> output_mask) {
  const char* name = "batch_norm_backward";
  const int64_t c = check_input(name, x);
  TESSERA_CHECK(grad_out.defined() && grad_out.sizes() == x.sizes(), ValueError, name,
                ": expected grad_out of the input's shape ", shape_to_string(x.sizes()), ", got ",
                describe(grad_out));
  TESSERA_CHECK(grad_out.device() == x.device(), DeviceError, name, ": grad_out is ",
                describe(grad_out), " but the input is ", describe(x));
  TESSERA_CHECK(grad_out.dtype() == x.dtype(), TypeError, name,
                ": grad_out must have the input's dtype, got ", describe(grad_out), " and ",
                describe(x));
  check_channel_vec(name, "weight", weight, x, c);
  if (training) {
    TESSERA_CHECK(save_mean.defined() && save_invstd.defined(), ValueError, name,
                  ": training needs save_mean and save_invstd");
    check_channel_vec(name, "save_mean", save_mean, x, c);
    check_channel_vec(name, "save_invstd", save_invstd, x, c);
  } else {
    TESSERA_CHECK(running_mean.defined() && running_var.defined(), ValueError, name,
                  ": evaluation mode needs running_mean and running_var");
    check_channel_vec(name, "running_mean", running_mean, x, c);
    check_channel_vec(name, "running_var", running_var, x, c);
  }
  Tensor gi, gw, gb;
  if (output_mask[0]) gi = empty(x.sizes(), TensorOptions(x.dtype(), x.device()));
  // grad_weight / grad_bias exist with or without a weight, as PyTorch.
  const DType wd = weight.defined() ? weight.dtype() : x.dtype();
  if (output_mask[1]) gw = empty({c}, TensorOptions(wd, x.device()));
  if (output_mask[2]) gb = empty({c}, TensorOptions(wd, x.device()));
  call_kernel<kernels::BatchNormBackward>(x.device(), gi, gw, gb, grad_out, x, weight,
                                          running_mean, running_var, save_mean, save_invstd,
                                          training, eps);
  return {gi, gw, gb};
}

}  // namespace tessera
