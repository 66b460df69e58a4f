// index_put, masked_fill, masked_select, nonzero.
//
// index_put turns its indices into one int64 tensor [k, B...] (bool masks
// become the columns of their nonzero(), the index tensors are broadcast
// together to B and stacked), validates each row's range, and hands the
// IndexPut kernel that tensor and the values broadcast to [B..., rest...].
// masked_select is nonzero of the flattened mask followed by index_select.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using indexing::check_same_device;

bool is_mask_dtype(DType t) { return t == DType::kBool || t == DType::kU8; }

// The indices as int64 tensors, one per indexed dim (masks expanded).
std::vector<Tensor> expand_masks(const char* op, const Tensor& self,
                                 const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& index = indices[i];
    TESSERA_CHECK(index.defined(), ValueError, op, ": undefined index tensor at position ", i);
    check_same_device(op, index, self.device(), "indices");
    if (is_mask_dtype(index.dtype())) {
      const int64_t first = static_cast<int64_t>(out.size());
      TESSERA_CHECK(first + index.dim() <= self.dim(), IndexError, op,
                    ": too many indices for tensor of dimension ", self.dim());
      for (int64_t d = 0; d < index.dim(); ++d) {
        TESSERA_CHECK(index.sizes()[d] == self.sizes()[first + d], IndexError, op,
                      ": The shape of the mask ", shape_to_string(index.sizes()), " at index ", d,
                      " does not match the shape of the indexed tensor ",
                      shape_to_string(self.sizes()), " at index ", first + d);
      }
      Tensor nz = nonzero(index);  // [n, index.dim()]
      for (int64_t d = 0; d < index.dim(); ++d) out.push_back(nz.select(1, d));
    } else {
      TESSERA_CHECK(index.dtype() == DType::kI64 || index.dtype() == DType::kI32, IndexError, op,
                    ": tensors used as indices must be long, int, byte or bool tensors, got ",
                    describe(index));
      out.push_back(prepare_operand(index, self.device(), DType::kI64));
    }
  }
  TESSERA_CHECK(static_cast<int64_t>(out.size()) <= self.dim(), IndexError, op,
                ": too many indices for tensor of dimension ", self.dim(), " (got ", out.size(),
                ")");
  return out;
}

}  // namespace

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate) {
  const char* op = "index_put";
  TESSERA_CHECK(self.defined() && values.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(!indices.empty(), ValueError, op, ": expected at least one index tensor");
  TESSERA_CHECK(values.dtype() == self.dtype(), TypeError, op,
                ": Index put requires the source and destination dtypes match, got ",
                describe(self), " for the destination and ", describe(values), " for the source");
  Device device = common_device(op, self, values);
  TESSERA_CHECK(device == self.device(), DeviceError, op, ": expected values on ",
                self.device().to_string(), ", got ", describe(values));
  std::vector<Tensor> idx = expand_masks(op, self, indices);
  const int64_t k = static_cast<int64_t>(idx.size());
  Shape b;
  for (const Tensor& t : idx) {
    try {
      b = broadcast_shapes(b, t.sizes(), op);
    } catch (const ValueError&) {
      std::string shapes;
      for (const Tensor& u : idx) shapes += (shapes.empty() ? "" : ", ") + shape_to_string(u.sizes());
      throw IndexError(detail::concat(
          op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
          shapes));
    }
  }
  for (int64_t d = 0; d < k; ++d) {
    indexing::check_index_bounds(op, idx[d], self.sizes()[d], d, /*allow_negative=*/true);
  }
  Shape result = b;
  result.insert(result.end(), self.sizes().begin() + k, self.sizes().end());
  Shape vb = broadcast_shapes(values.sizes(), result, op);
  TESSERA_CHECK(vb == result, ValueError, op, ": shape mismatch: value tensor of shape ",
                shape_to_string(values.sizes()), " cannot be broadcast to indexing result of shape ",
                shape_to_string(result));
  int64_t nb = 1;
  for (int64_t s : b) nb *= s;
  if (nb == 0 || self.numel() == 0) return self;
  check_no_internal_overlap(op, self);
  std::vector<Tensor> expanded;
  for (const Tensor& t : idx) expanded.push_back(t.expand(b));
  Tensor stacked = stack(expanded, 0);  // [k, B...]
  // values may alias self (x[i] = x[j]); read them from a copy then.
  Tensor vals = values.device() == device ? values : values.to(device);
  if (vals.storage() == self.storage()) vals = vals.clone();
  call_kernel<kernels::IndexPut>(device, self, stacked, vals.expand(result), accumulate);
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  Tensor out = self.clone();
  return index_put_(out, indices, values, accumulate);
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, Scalar value) {
  const char* op = "masked_fill_";
  TESSERA_CHECK(self.defined() && mask.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(mask.dtype() == DType::kBool, TypeError, op,
                ": masked_fill_ only supports boolean masks, but got mask with dtype ",
                dtype_name(mask.dtype()));
  check_same_device(op, mask, self.device(), "mask");
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), op);
  TESSERA_CHECK(b == self.sizes(), ValueError, op, ": mask of shape ",
                shape_to_string(mask.sizes()), " does not broadcast to self's shape ",
                shape_to_string(self.sizes()));
  if (self.numel() == 0) return self;
  check_no_internal_overlap(op, self);
  call_kernel<kernels::MaskedFill>(self.device(), self, mask.expand(b), value);
  return self;
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  TESSERA_CHECK(value.defined(), ValueError, "masked_fill_: undefined value tensor");
  TESSERA_CHECK(value.dim() == 0, ValueError,
                "masked_fill_: masked_fill_ only supports a 0-dimensional value tensor, but got "
                "tensor with ", value.dim(), " dimension(s).");
  TESSERA_CHECK(value.device() == self.device() || value.device() == host_device(), DeviceError,
                "masked_fill_: expected the value on ", self.device().to_string(),
                " or the host, got ", describe(value));
  return masked_fill_(self, mask, value.item());
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value) {
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  Tensor out = self.expand(b).clone();
  return masked_fill_(out, mask, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  Tensor out = self.expand(b).clone();
  return masked_fill_(out, mask, value);
}

Tensor nonzero(const Tensor& self) {
  TESSERA_CHECK(self.defined(), ValueError, "nonzero: undefined tensor");
  const int64_t n = self.numel() == 0 ? 0 : sum(self.to(DType::kBool)).item<int64_t>();
  Tensor out = empty({n, self.dim()}, TensorOptions(DType::kI64, self.device()));
  if (n > 0) call_kernel<kernels::Nonzero>(self.device(), out, self);
  return out;
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  const char* op = "masked_select";
  TESSERA_CHECK(self.defined() && mask.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(mask.dtype() == DType::kBool, TypeError, op,
                ": masked_select: expected BoolTensor for mask, got ", describe(mask));
  check_same_device(op, mask, self.device(), "mask");
  Shape b = broadcast_shapes(self.sizes(), mask.sizes(), op);
  int64_t numel = 1;
  for (int64_t s : b) numel *= s;
  Tensor flat_mask = mask.expand(b).contiguous().reshape({numel});
  Tensor positions = nonzero(flat_mask).select(1, 0);
  Tensor flat_self = self.expand(b).contiguous().reshape({numel});
  return index_select(flat_self, 0, positions);
}

Tensor& masked_select_out(Tensor& out, const Tensor& self, const Tensor& mask) {
  return write_out("masked_select", out, masked_select(self, mask));
}
Tensor& nonzero_out(Tensor& out, const Tensor& self) {
  return write_out("nonzero", out, nonzero(self));
}

}  // namespace tessera
