// softmax and log_softmax along one dim, and the backward kernels autograd
// calls for them (_softmax_backward_data, _log_softmax_backward_data).
#include <optional>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/reduction_common.h"

namespace tessera {

namespace {

Tensor softmax_impl(bool log, const char* name, const Tensor& x, int64_t dim,
                    std::optional<DType> dtype) {
  TESSERA_CHECK(x.defined(), ValueError, name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, x.dim(), name);
  // An explicit dtype converts the input first (PyTorch's way of computing
  // a half softmax in float32).
  const Tensor in = dtype && *dtype != x.dtype() ? x.to(*dtype) : x;
  TESSERA_CHECK(is_floating(in.dtype()), TypeError, name, ": not implemented for ",
                dtype_name(in.dtype()), " (pass a floating dtype), got ", describe(x));
  Tensor out = empty(in.sizes(), TensorOptions(in.dtype(), in.device()));
  if (out.numel() == 0) return out;
  if (in.dim() == 0) {
    // One element: softmax 1, log_softmax 0.
    out.fill_(log ? 0 : 1);
    return out;
  }
  // A device's fused kernel when it has one (the CPU does); otherwise the
  // composite, so a new device gets softmax from its primitives.
  if (!try_call_kernel<kernels::Softmax>(in.device(), log, out, in, d)) {
    out.copy_(reduction::softmax_composite(log, in, d));
  }
  return out;
}

Tensor softmax_backward_impl(bool log, const char* name, const Tensor& grad_output,
                             const Tensor& output, int64_t dim, std::optional<DType> input_dtype) {
  TESSERA_CHECK(grad_output.defined() && output.defined(), ValueError, name,
                ": undefined tensor");
  TESSERA_CHECK(grad_output.sizes() == output.sizes(), ValueError, name,
                ": grad_output and output must have the same shape, got ", describe(grad_output),
                " and ", describe(output));
  TESSERA_CHECK(grad_output.device() == output.device(), DeviceError, name,
                ": expected grad_output and output on one device, got ", describe(grad_output),
                " and ", describe(output));
  TESSERA_CHECK(is_floating(output.dtype()), TypeError, name,
                ": expected a floating output, got ", describe(output));
  TESSERA_CHECK(grad_output.dtype() == output.dtype(), TypeError, name,
                ": grad_output and output must have the same dtype, got ", describe(grad_output),
                " and ", describe(output));
  const int64_t d = wrap_dim(dim, output.dim(), name);
  Tensor grad_in = empty(output.sizes(), TensorOptions(output.dtype(), output.device()));
  if (grad_in.numel() > 0) {
    if (output.dim() == 0) {
      // One element: d softmax = 0; d log_softmax = g - exp(y) * g = 0 too.
      grad_in.zero_();
    } else {
      call_kernel<kernels::SoftmaxBackward>(output.device(), log, grad_in, grad_output, output, d);
    }
  }
  if (input_dtype && *input_dtype != grad_in.dtype()) return grad_in.to(*input_dtype);
  return grad_in;
}

}  // namespace

namespace reduction {

Tensor softmax_composite(bool log, const Tensor& x, int64_t dim) {
  // 16-bit floats compute in f32 and round once at the end, as the fused
  // kernels do: rounding after each primitive (sub, exp, sum, div) loses
  // more than half precision's tolerance.
  if (is_reduced_float(x.dtype())) {
    return softmax_composite(log, x.to(DType::kF32), dim).to(x.dtype());
  }
  // Shift by the row max so exp never overflows.
  const Tensor shifted = sub(x, amax(x, {dim}, true));
  if (log) return sub(shifted, tessera::log(sum(exp(shifted), {dim}, true)));
  const Tensor e = exp(shifted);
  return div(e, sum(e, {dim}, true));
}

}  // namespace reduction

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl(false, "softmax", x, dim, dtype);
}

Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl(true, "log_softmax", x, dim, dtype);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              std::optional<DType> input_dtype) {
  return softmax_backward_impl(false, "_softmax_backward_data", grad_output, output, dim,
                               input_dtype);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  std::optional<DType> input_dtype) {
  return softmax_backward_impl(true, "_log_softmax_backward_data", grad_output, output, dim,
                               input_dtype);
}

}  // namespace tessera
