// PyTorch's device rule for one op, shared by native kernels and the CPU
// fallback: tensors on one device, except that a 0-d CPU tensor (a scalar)
// may join tessera tensors, as with CUDA.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

namespace torch_tessera {

inline bool is_cpu_scalar(const at::Tensor& t) { return t.device().is_cpu() && t.dim() == 0; }

// PyTorch's wording for a device mix, naming both devices and shapes.
inline void check_device_mix(const char* op, const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined() || a.device() == b.device()) return;
  if (is_cpu_scalar(a) || is_cpu_scalar(b)) return;
  TORCH_CHECK(false, op, ": Expected all tensors to be on the same device, but found at least "
              "two devices, ", a.device(), " and ", b.device(), " (", a.sizes(), " and ",
              b.sizes(), ")");
}

}  // namespace torch_tessera
