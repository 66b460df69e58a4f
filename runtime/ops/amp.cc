// Gradient scaling for mixed-precision training (amp_ops.h), composed of
// runtime ops.
#include "runtime/ops/amp_ops.h"

#include <limits>
#include <map>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// A 1-element tensor of `dtype` on `device` (the scaler's state).
void check_scalar_tensor(const char* op, const char* name, const Tensor& t, DType dtype,
                         Device device) {
  TESSERA_CHECK(t.defined(), ValueError, op, ": ", name, " is undefined");
  TESSERA_CHECK(t.numel() == 1, ValueError, op, ": ", name,
                " must be a 1-element tensor, got shape ", shape_to_string(t.sizes()));
  TESSERA_CHECK(t.dtype() == dtype, TypeError, op, ": ", name, " must be ", dtype_name(dtype),
                ", got ", dtype_name(t.dtype()));
  TESSERA_CHECK(t.device() == device, ValueError, op, ": ", name, " is on ",
                t.device().to_string(), " but the step's tensors are on ", device.to_string());
}

// Whether any of `grads` (floating, of one dtype, non-empty) holds an inf
// or a NaN, as a 0-d bool: exactly when its largest magnitude (the inf
// norm, which a NaN makes NaN) is not finite.
Tensor any_non_finite(const char* op, const std::vector<Tensor>& grads) {
  const std::vector<Tensor> norms =
      foreach_norm(op, grads, std::numeric_limits<double>::infinity());
  return logical_not(all(isfinite(stack(norms))));
}

}  // namespace

void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf,
                            const Tensor& inv_scale) {
  constexpr const char* op = "amp_unscale_and_check_";
  TESSERA_CHECK(found_inf.defined(), ValueError, op, ": found_inf is undefined");
  const Device device = found_inf.device();
  check_scalar_tensor(op, "found_inf", found_inf, DType::kF32, device);
  check_scalar_tensor(op, "inv_scale", inv_scale, DType::kF32, device);
  std::map<DType, std::vector<Tensor>> by_dtype;  // the non-empty gradients
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    TESSERA_CHECK(g.defined(), ValueError, op, ": gradient ", i, " is undefined");
    TESSERA_CHECK(is_floating(g.dtype()), TypeError, op, ": gradient ", i,
                  " must be floating, got ", dtype_name(g.dtype()));
    TESSERA_CHECK(g.device() == device, ValueError, op, ": gradient ", i, " is on ",
                  g.device().to_string(), " but found_inf is on ", device.to_string());
    if (g.numel() > 0) by_dtype[g.dtype()].push_back(g);
  }
  if (by_dtype.empty()) return;

  Tensor non_finite;
  for (const auto& [dtype, group] : by_dtype) {
    const Tensor bad = any_non_finite(op, group);
    non_finite = non_finite.defined() ? logical_or(non_finite, bad) : bad;
  }
  found_inf.copy_(where(non_finite.reshape(found_inf.sizes()), Scalar(1.0), found_inf));

  // Unscaling: one multi-tensor op per dtype, in the gradient's dtype for
  // float32 and float64 (inv_scale widens exactly); 16-bit gradients
  // multiply in float32 and round once, as PyTorch's kernel computes them.
  for (const auto& [dtype, group] : by_dtype) {
    if (dtype != DType::kF32 && dtype != DType::kF64) {
      for (const Tensor& g : group) {
        Tensor dst = g;
        dst.copy_(mul(g.to(DType::kF32), inv_scale));
      }
      continue;
    }
    const Tensor factor = dtype == DType::kF32 ? inv_scale : inv_scale.to(dtype);
    std::vector<PointwiseEntry> entries;
    entries.reserve(group.size());
    for (const Tensor& g : group) {
      entries.push_back(PointwiseEntry{g, g, factor.reshape({}), {}, {}, {}});
    }
    if (foreach_entries_independent(entries)) {
      foreach_pointwise(op, kernels::BinaryOp::kMul, entries);
    } else {  // one gradient listed twice, or views of one another: in order
      for (const Tensor& g : group) {
        Tensor dst = g;
        dst.copy_(mul(g, factor));
      }
    }
  }
}

void amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                       double growth_factor, double backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "amp_update_scale_";
  TESSERA_CHECK(scale.defined(), ValueError, op, ": scale is undefined");
  const Device device = scale.device();
  check_scalar_tensor(op, "scale", scale, DType::kF32, device);
  check_scalar_tensor(op, "growth_tracker", growth_tracker, DType::kI32, device);
  check_scalar_tensor(op, "found_inf", found_inf, DType::kF32, device);
  // No branch on the device's values: each outcome is computed and where
  // picks, so the host never waits for the step. All three are 1-element
  // tensors of any shape ([] or [1]); the arithmetic runs on 0-d views.
  const Tensor current = scale.reshape({});
  const Tensor found = ne(found_inf.reshape({}), Scalar(0.0));
  const Tensor counted = add(growth_tracker.reshape({}), Scalar(int64_t{1}));
  const Tensor grow = logical_and(logical_not(found), eq(counted, Scalar(growth_interval)));
  // Products in double rounded once to float32, as PyTorch's kernels
  // compute them; a grown scale is kept only if finite.
  const Tensor wide = current.to(DType::kF64);
  const Tensor grown = mul(wide, Scalar(growth_factor)).to(DType::kF32);
  const Tensor backed_off = mul(wide, Scalar(backoff_factor)).to(DType::kF32);
  const Tensor grown_kept = where(logical_and(grow, isfinite(grown)), grown, current);
  const Tensor next_scale = where(found, backed_off, grown_kept);
  const Tensor next_tracker =
      where(logical_or(found, grow), Scalar(int64_t{0}), counted).to(DType::kI32);
  scale.copy_(next_scale.reshape(scale.sizes()));
  growth_tracker.copy_(next_tracker.reshape(growth_tracker.sizes()));
}

}  // namespace tessera
