// torch.amp.GradScaler("tessera")'s two ops, _amp_foreach_non_finite_check_
// and_unscale_ and _amp_update_scale_, over the runtime's gradient-scaling
// ops (runtime/ops/amp_ops.h). Mixed-precision training calls both on every
// step; through the CPU fallback each call copied every gradient to the
// host and back.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "bridge/csrc/ops/complex_routing.h"  // TESSERA_ATEN_KERNELS
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

void amp_non_finite_check_and_unscale(at::TensorList self, at::Tensor& found_inf,
                                      const at::Tensor& inv_scale) {
  constexpr const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  OpScope scope(found_inf);
  call_runtime([&] {
    tessera::Tensor flag = to_runtime(found_inf, op);
    tessera::amp_unscale_and_check_(to_runtime(self, op), flag, to_runtime(inv_scale, op));
  });
}

at::Tensor& amp_update_scale(at::Tensor& self, at::Tensor& growth_tracker,
                             const at::Tensor& found_inf, double scale_growth_factor,
                             double scale_backoff_factor, int64_t growth_interval) {
  constexpr const char* op = "_amp_update_scale_";
  OpScope scope(self);
  call_runtime([&] {
    tessera::Tensor scale = to_runtime(self, op);
    tessera::Tensor tracker = to_runtime(growth_tracker, op);
    tessera::amp_update_scale_(scale, tracker, to_runtime(found_inf, op), scale_growth_factor,
                               scale_backoff_factor, growth_interval);
  });
  return self;
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_",
         TORCH_FN(amp_non_finite_check_and_unscale));
  m.impl("_amp_update_scale_", TORCH_FN(amp_update_scale));
}

}  // namespace
}  // namespace torch_tessera
