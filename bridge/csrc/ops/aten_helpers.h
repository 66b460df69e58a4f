// The few ATen functions the kernels need beyond Tensor, behind a light
// header. Their own headers (ATen/native/Resize.h, ATen/ExpandUtils.h,
// ATen/ScalarOps.h) pull in most of ATen's operator declarations: about
// 4 s of parsing in each of the ~20 kernel files, paid once here instead.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/DimVector.h>

namespace torch_tessera {

// at::native::resize_output: resizes `out` to `shape` for an out= kernel,
// warning (as PyTorch does) when a non-empty out had another shape.
void resize_output(const at::Tensor& out, c10::IntArrayRef shape);

// The broadcast of two shapes (at::infer_size_dimvector); RuntimeError
// naming both when they do not broadcast.
c10::DimVector broadcast_shape(c10::IntArrayRef a, c10::IntArrayRef b);

// A 0-d CPU tensor holding `s`, marked as a wrapped number so that type
// promotion treats it as a Python scalar (at::native::wrapped_scalar_tensor).
at::Tensor wrapped_scalar_tensor(const c10::Scalar& s);

}  // namespace torch_tessera
