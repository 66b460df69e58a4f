#include "runtime/ops/out_check.h"

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

void check_out(const char* op, const Tensor& out, const Shape& sizes, DType result_dtype,
               Device device) {
  TESSERA_CHECK(out.defined(), ValueError, op, ": out is an undefined tensor");
  TESSERA_CHECK(out.device() == device, DeviceError, op, ": out is on ",
                out.device().to_string(), " but the inputs are on ", device.to_string());
  if (out.numel() == 0 && out.sizes() != sizes) {
    // An empty out takes the result's shape, as PyTorch's resize_output
    // does; that is how data-dependent results (nonzero, masked_select)
    // fill an out. Views of the old memory keep it.
    TensorImpl* impl = out.unsafe_impl();
    const Shape strides = contiguous_strides(sizes);
    const size_t nbytes = checked_storage_bytes(sizes, strides, 0, itemsize(out.dtype()), op);
    impl->storage = allocate_storage(device, nbytes);
    impl->storage_offset = 0;
    impl->sizes = sizes;
    impl->strides = strides;
    impl->refresh();
  }
  TESSERA_CHECK(out.sizes() == sizes, ValueError, op, ": out has shape ",
                shape_to_string(out.sizes()), " but the result has shape ",
                shape_to_string(sizes));
  TESSERA_CHECK(can_cast(result_dtype, out.dtype()), TypeError, op, ": result type ",
                dtype_name(result_dtype), " can't be cast to the desired output type ",
                dtype_name(out.dtype()));
  check_no_internal_overlap(op, out);
}

bool can_write_directly(const Tensor& out, const Shape& sizes, DType dtype, Device device,
                        std::initializer_list<const Tensor*> inputs) {
  if (!out.defined() || out.dtype() != dtype || out.device() != device || out.sizes() != sizes ||
      !is_non_overlapping_and_dense(out)) {
    return false;
  }
  for (const Tensor* in : inputs) {
    if (in->defined() && in->storage() == out.storage()) return false;
  }
  return true;
}

Tensor& write_out(const char* op, Tensor& out, const Tensor& result) {
  check_out(op, out, result.sizes(), result.dtype(), result.device());
  if (!out.is_same(result)) out.copy_(result);
  return out;
}

}  // namespace tessera
