// Complex tessera tensors as the runtime sees them. The runtime has no
// complex dtype; a complex64 tensor of sizes S is, to it, a float32 tensor
// of sizes S + [2] (real and imaginary parts side by side, as
// torch.view_as_real shows it). complex128 pairs float64s, complex32
// float16s. The kernels that handle complex tensors natively (copies,
// fills, clone, view_as_real/view_as_complex and the complex ops in
// ops/complex_ops.cc) work on these real views; complex_routing.h sends
// complex arguments of every other kernel to the CPU fallback.
#pragma once

#include <ATen/core/Tensor.h>

#include "runtime/core/tensor.h"

namespace torch_tessera {

// float32 for complex64, float64 for complex128, float16 for complex32.
c10::ScalarType complex_component_type(c10::ScalarType complex_type);

// An alias of t's memory as stored: its conjugate and negative bits dropped.
at::Tensor physical_view(const at::Tensor& t);

// A real view of a complex tensor (CPU or tessera) as stored, conjugate and
// negative bits dropped: what torch.view_as_real shows of a tensor without the bit.
at::Tensor physical_real_view(const at::Tensor& complex, const char* op);

// The runtime view of a complex tessera tensor's real and imaginary parts
// (sizes + [2]): its memory as stored, whatever its conjugate bit says
// (copies conjugate afterwards; aten's Conjugate fallback resolves the bit
// before other kernels run).
tessera::Tensor to_runtime_real_pairs(const at::Tensor& complex, const char* op);

// A new complex tessera tensor over runtime real pairs (last dim 2,
// stride 1), as view_as_complex would give.
at::Tensor complex_from_real_pairs(const tessera::Tensor& pairs);

}  // namespace torch_tessera
