#include "bridge/csrc/ops/aten_helpers.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>

namespace torch_tessera {

void resize_output(const at::Tensor& out, c10::IntArrayRef shape) {
  at::native::resize_output(out, shape);
}

c10::DimVector broadcast_shape(c10::IntArrayRef a, c10::IntArrayRef b) {
  return at::infer_size_dimvector(a, b);
}

at::Tensor wrapped_scalar_tensor(const c10::Scalar& s) {
  return at::native::wrapped_scalar_tensor(s);
}

}  // namespace torch_tessera
