// sum and mean over any dims, with keepdim and an optional result dtype.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

using kernels::ReduceOp;

// Sorted, unique, non-negative dims; empty `dims` means every dim. A 0-d
// tensor accepts dim 0 and -1 (as PyTorch) and reduces over nothing.
Shape normalize_dims(const char* op, const Tensor& t, const Shape& dims) {
  Shape out;
  if (dims.empty()) {
    for (int64_t d = 0; d < t.dim(); ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, t.dim(), op);
    TESSERA_CHECK(!seen[w], ValueError, op, ": dim ", w, " appears multiple times in the list of dims ",
                  shape_to_string(dims));
    seen[w] = true;
    if (t.dim() > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Tensor reduce(ReduceOp op, const char* name, const Tensor& t, const Shape& dims, bool keepdim,
              DType out_dtype) {
  Shape rdims = normalize_dims(name, t, dims);
  Shape keep_sizes = t.sizes();
  for (int64_t d : rdims) keep_sizes[d] = 1;
  Tensor out = empty(keep_sizes, TensorOptions(out_dtype, t.device()));
  // The kernel accumulates by the input's type; an explicit floating dtype
  // converts the input first (sum of int to int64 needs no conversion).
  Tensor in = t;
  if (t.dtype() != out_dtype && !(out_dtype == DType::kI64 && !is_floating(t.dtype()))) {
    in = t.to(out_dtype);
  }
  call_kernel<kernels::Reduce>(t.device(), op, out, in, rdims);
  if (keepdim) return out;
  Shape final_sizes;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!std::binary_search(rdims.begin(), rdims.end(), d)) final_sizes.push_back(t.sizes()[d]);
  }
  return out.view(final_sizes);
}

}  // namespace

Tensor sum(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  TESSERA_CHECK(t.defined(), ValueError, "sum: undefined tensor");
  DType out = dtype.value_or(is_floating(t.dtype()) ? t.dtype() : DType::kI64);
  return reduce(ReduceOp::kSum, "sum", t, dims, keepdim, out);
}

Tensor mean(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  TESSERA_CHECK(t.defined(), ValueError, "mean: undefined tensor");
  DType out = dtype.value_or(t.dtype());
  TESSERA_CHECK(is_floating(out), TypeError,
                "mean: could not infer output dtype. Input dtype must be a floating point dtype "
                "(or pass a floating dtype), got ", describe(t));
  return reduce(ReduceOp::kMean, "mean", t, dims, keepdim, out);
}

}  // namespace tessera
