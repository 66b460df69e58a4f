// Gradient scaling for mixed-precision training (runtime/ops/amp_ops.h)
// with the names and arguments of PyTorch's kernels, which
// torch.amp.GradScaler calls on every step. Both update their tensors in
// place: the gradient list and found_inf, or the scale and growth_tracker.
#include "bindings/csrc/fused_optimizer.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

void register_grad_scaler_ops(py::module_& m) {
  m.def("_amp_foreach_non_finite_check_and_unscale_",
        [](const TensorListArg& self, tessera::Tensor found_inf, const tessera::Tensor& inv_scale) {
          tessera::amp_unscale_and_check_(self, found_inf, inv_scale);
        },
        "self"_a, "found_inf"_a, "inv_scale"_a, ReleaseGil(),
        "Multiplies every gradient of self by inv_scale in place and sets found_inf to 1 if "
        "any holds an inf or a NaN (never back to 0). found_inf and inv_scale: 1-element "
        "float32 tensors on the gradients' device.");
  m.def("_amp_update_scale_",
        [](tessera::Tensor self, tessera::Tensor growth_tracker, const tessera::Tensor& found_inf,
           double scale_growth_factor, double scale_backoff_factor, int64_t growth_interval) {
          tessera::amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor,
                                     scale_backoff_factor, growth_interval);
          return self;
        },
        "self"_a, "growth_tracker"_a, "found_inf"_a, "scale_growth_factor"_a,
        "scale_backoff_factor"_a, "growth_interval"_a, ReleaseGil(),
        "The loss scale self (1-element float32) after a step, in place, with growth_tracker "
        "(1-element int32): found_inf set multiplies it by scale_backoff_factor and resets the "
        "tracker; otherwise the tracker counts the step, and at growth_interval the scale "
        "grows by scale_growth_factor (unless that overflows) and the tracker resets.");
}

}  // namespace tessera_py
