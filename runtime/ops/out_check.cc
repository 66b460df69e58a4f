#include "runtime/ops/out_check.h"

#include "runtime/core/error.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

void check_out(const char* op, const Tensor& out, const Shape& sizes, DType result_dtype,
               Device device) {
  TESSERA_CHECK(out.defined(), ValueError, op, ": out is an undefined tensor");
  TESSERA_CHECK(out.device() == device, DeviceError, op, ": out is on ",
                out.device().to_string(), " but the inputs are on ", device.to_string());
  TESSERA_CHECK(out.sizes() == sizes, ValueError, op, ": out has shape ",
                shape_to_string(out.sizes()), " but the result has shape ",
                shape_to_string(sizes));
  TESSERA_CHECK(can_cast(result_dtype, out.dtype()), TypeError, op, ": result type ",
                dtype_name(result_dtype), " can't be cast to the desired output type ",
                dtype_name(out.dtype()));
  check_no_internal_overlap(op, out);
}

Tensor& write_out(const char* op, Tensor& out, const Tensor& result) {
  check_out(op, out, result.sizes(), result.dtype(), result.device());
  if (!out.is_same(result)) out.copy_(result);
  return out;
}

}  // namespace tessera
