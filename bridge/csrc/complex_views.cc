#include "bridge/csrc/complex_views.h"

#include <ATen/ops/view_as_complex_native.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "bridge/csrc/tensor_convert.h"

namespace torch_tessera {

c10::ScalarType complex_component_type(c10::ScalarType complex_type) {
  switch (complex_type) {
    case c10::ScalarType::ComplexFloat: return c10::ScalarType::Float;
    case c10::ScalarType::ComplexDouble: return c10::ScalarType::Double;
    case c10::ScalarType::ComplexHalf: return c10::ScalarType::Half;
    default: break;
  }
  TORCH_CHECK(false, "tessera: ", complex_type, " is not a complex dtype");
}

namespace {

at::Tensor alias_without_math_bits(const at::Tensor& t, c10::ScalarType dtype,
                                   c10::IntArrayRef sizes, c10::IntArrayRef strides,
                                   int64_t offset) {
  at::Tensor view = at::detail::make_tensor<c10::TensorImpl>(
      c10::TensorImpl::VIEW, c10::Storage(t.storage()),
      t.key_set().remove(c10::DispatchKey::Conjugate).remove(c10::DispatchKey::Negative),
      caffe2::TypeMeta::fromScalarType(dtype));
  view.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides, offset);
  return view;
}

}  // namespace

at::Tensor physical_view(const at::Tensor& t) {
  return alias_without_math_bits(t, t.scalar_type(), t.sizes(), t.strides(), t.storage_offset());
}

at::Tensor physical_real_view(const at::Tensor& complex, const char* op) {
  TORCH_CHECK(c10::isComplexType(complex.scalar_type()), op, ": expected a complex tensor, got ",
              complex.scalar_type());
  c10::DimVector sizes(complex.sizes().begin(), complex.sizes().end());
  c10::DimVector strides;
  for (const int64_t s : complex.strides()) strides.push_back(2 * s);
  sizes.push_back(2);
  strides.push_back(1);
  return alias_without_math_bits(complex, complex_component_type(complex.scalar_type()), sizes,
                                 strides, 2 * complex.storage_offset());
}

tessera::Tensor to_runtime_real_pairs(const at::Tensor& complex, const char* op) {
  return to_runtime(physical_real_view(complex, op), op);
}

at::Tensor complex_from_real_pairs(const tessera::Tensor& pairs) {
  return at::native::view_as_complex(to_torch(pairs));
}

}  // namespace torch_tessera
