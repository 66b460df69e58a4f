// The multi-tensor norm (foreach_ops.h): every entry validated up front,
// then the device's ForeachNorm kernel for orders 1, 2 and inf, or each
// entry on its own.
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

using kernels::ReduceExtOp;

void check_tensors(const char* op, const std::vector<Tensor>& tensors, double p,
                   std::optional<DType> dtype) {
  TESSERA_CHECK(!std::isnan(p), ValueError, op, ": the norm's order p must not be NaN");
  if (dtype) {
    TESSERA_CHECK(is_floating(*dtype), TypeError, op,
                  ": dtype must be a floating dtype, got ", dtype_name(*dtype));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TESSERA_CHECK(t.defined(), ValueError, op, ": entry ", i, " is undefined");
    TESSERA_CHECK(is_floating(t.dtype()), TypeError, op,
                  ": expected floating tensors, got entry ", i, "'s ", describe(t));
    TESSERA_CHECK(t.device() == tensors[0].device(), ValueError, op, ": entry ", i, "'s ",
                  describe(t), " is not on entry 0's device (", describe(tensors[0]), ")");
    TESSERA_CHECK(!(std::isinf(p) && t.numel() == 0), IndexError, op, ": cannot compute the ",
                  p, " norm of entry ", i, ", an empty tensor ", describe(t),
                  " (a max or min has no identity)");
  }
}

// The fused orders' ReduceExt op; nullopt for the orders norm() composes.
std::optional<ReduceExtOp> fused_order(double p) {
  if (p == 1.0) return ReduceExtOp::kNorm1;
  if (p == 2.0) return ReduceExtOp::kNorm2;
  if (std::isinf(p) && p > 0) return ReduceExtOp::kNormInf;
  return std::nullopt;
}

}  // namespace

void run_norm_entry(Device device, ReduceExtOp op, Tensor& out, const Tensor& in) {
  Shape dims(static_cast<size_t>(in.dim()));
  std::iota(dims.begin(), dims.end(), int64_t{0});
  Tensor kept = out.view(Shape(static_cast<size_t>(in.dim()), 1));
  call_kernel<kernels::ReduceExt>(device, op, kept, in, dims);
}

std::vector<Tensor> foreach_norm(const char* op, const std::vector<Tensor>& tensors, double p,
                                 std::optional<DType> dtype) {
  check_tensors(op, tensors, p, dtype);
  std::vector<Tensor> inputs;
  inputs.reserve(tensors.size());
  for (const Tensor& t : tensors) inputs.push_back(dtype ? t.to(*dtype) : t);
  std::vector<Tensor> outs;
  outs.reserve(inputs.size());
  const std::optional<ReduceExtOp> fused = fused_order(p);
  if (!fused) {
    for (const Tensor& in : inputs) outs.push_back(norm(in, p));
    return outs;
  }
  // Empty entries have norm 0 (orders 1 and 2; inf was refused) and no
  // work for the kernel.
  std::vector<Tensor> live_in, live_out;
  for (const Tensor& in : inputs) {
    outs.push_back(empty({}, TensorOptions(in.dtype(), in.device())));
    if (in.numel() == 0) {
      outs.back().zero_();
    } else {
      live_in.push_back(in);
      live_out.push_back(outs.back());
    }
  }
  if (live_in.empty()) return outs;
  const Device device = live_in[0].device();
  if (try_call_kernel<kernels::ForeachNorm>(device, *fused, live_in, live_out)) return outs;
  for (size_t i = 0; i < live_in.size(); ++i) run_norm_entry(device, *fused, live_out[i], live_in[i]);
  return outs;
}

}  // namespace tessera
