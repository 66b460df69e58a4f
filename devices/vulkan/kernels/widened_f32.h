// Half-precision calls of the kernels whose shaders are f32 only
// (convolution, pooling): the f32 kernel runs on f32 copies of the inputs
// and each result is rounded once, when it is copied back. That is what the
// CPU device computes for f16 and bf16 (their compute type is float) and
// what PyTorch's half-precision convolutions do (f32 sums). The conversions
// are the device's own copy kernels, so the op stays on the device (host
// staging would copy every tensor to the host and back); they cost a pass
// over each tensor, small beside a convolution's GEMMs.
#pragma once

#include <initializer_list>

#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {

// True when every defined tensor in `tensors` has `dtype`.
inline bool all_defined_have(DType dtype, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined() && t->dtype() != dtype) return false;
  }
  return true;
}

// t as f32 (undefined stays undefined).
inline Tensor widened(const Tensor& t) { return t.defined() ? t.to(DType::kF32) : t; }

// An f32 tensor of t's sizes for the f32 kernel to write in t's place
// (undefined stays undefined).
inline Tensor f32_result(const Tensor& t) {
  return t.defined() ? empty(t.sizes(), TensorOptions(DType::kF32, t.device())) : t;
}

// dst = f32 rounded to dst's dtype, where dst is defined.
inline void round_into(Tensor& dst, const Tensor& f32) {
  if (dst.defined()) dst.copy_(f32);
}

}  // namespace tessera::vulkan
