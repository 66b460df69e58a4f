// Op front ends: the two steps of gradient scaling in mixed-precision
// training (PyTorch's GradScaler calls them on every step as
// _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_).
// Composed of runtime ops (a norm list, pointwise ops, where), so every
// device runs them on its own memory, with no kernel of its own and no
// wait for the host.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"

namespace tessera {

// Multiplies every gradient by inv_scale in place, and sets found_inf to 1
// if any gradient holds an inf or a NaN (it never sets it back to 0: one
// flag may collect several lists). found_inf and inv_scale are 1-element
// float32 tensors on the gradients' device; gradients are floating. As
// PyTorch's kernels, the unscaling happens even when found_inf is set.
void amp_unscale_and_check_(const std::vector<Tensor>& grads, Tensor& found_inf,
                            const Tensor& inv_scale);

// The loss scale after a step. scale (1-element float32) and
// growth_tracker (1-element int32, the count of steps since the scale last
// changed) are updated in place. found_inf set: scale *= backoff_factor and
// the tracker returns to 0. Otherwise the tracker counts the step, and when
// it reaches growth_interval the scale grows by growth_factor (unless that
// would overflow float32) and the tracker returns to 0.
void amp_update_scale_(Tensor& scale, Tensor& growth_tracker, const Tensor& found_inf,
                       double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace tessera
