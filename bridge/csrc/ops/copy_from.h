// _copy_from: tessera's copy between tessera and the host or two tessera
// devices, any dtypes, complex included, applying the conjugate and
// negative bits of both sides (aten leaves those to a PrivateUse1 device).
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_tessera {

// Copies self into dst (same sizes) and returns dst. Kernels that must not
// go back through the dispatcher call it directly: clone resolves the math
// bits through it, because aten's Conjugate fallback resolves them by
// calling clone.
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking);

}  // namespace torch_tessera
