// cat, stack, split, chunk: composites of views and copy_. cat allocates
// the output once and copies each input into a narrow()ed view of it, so a
// device needs no kernel beyond Copy.
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

namespace {

// PyTorch still accepts 1-D empty tensors (legacy "no data" tensors) in
// cat whatever the other shapes, and skips them.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

struct CatPlan {
  Shape sizes;
  DType dtype;
  Device device;
  int64_t dim = 0;
};

CatPlan plan_cat(const char* op, const std::vector<Tensor>& tensors, int64_t dim) {
  TESSERA_CHECK(!tensors.empty(), ValueError, op, ": expected a non-empty list of Tensors");
  CatPlan plan;
  plan.device = tensors[0].device();
  plan.dtype = tensors[0].dtype();
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TESSERA_CHECK(t.defined(), ValueError, op, ": undefined tensor at position ", i);
    TESSERA_CHECK(t.dim() > 0, ValueError, op, ": zero-dimensional tensor (at position ", i,
                  ") cannot be concatenated");
    TESSERA_CHECK(t.device() == plan.device, DeviceError, op,
                  ": expected all tensors to be on the same device, but got ", describe(t),
                  " at position ", i, " and ", describe(tensors[0]), " at position 0");
    plan.dtype = promote_types(plan.dtype, t.dtype());
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  if (!ref) {  // every input is a legacy empty tensor
    plan.dim = wrap_dim(dim, 1, op);
    plan.sizes = {0};
    return plan;
  }
  plan.dim = wrap_dim(dim, ref->dim(), op);
  plan.sizes = ref->sizes();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    TESSERA_CHECK(t.dim() == ref->dim(), ValueError, op,
                  ": Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                  t.dim(), " (tensor number ", i, " is ", describe(t), ")");
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == plan.dim) continue;
      TESSERA_CHECK(t.sizes()[d] == ref->sizes()[d], ValueError, op,
                    ": Sizes of tensors must match except in dimension ", plan.dim,
                    ". Expected size ", ref->sizes()[d], " but got size ", t.sizes()[d],
                    " for tensor number ", i, " in the list (", describe(t), ")");
    }
    total = checked_add(total, t.sizes()[plan.dim], op);
  }
  plan.sizes[plan.dim] = total;
  return plan;
}

void cat_into(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    const int64_t n = t.sizes()[dim];
    if (n == 0) continue;
    Tensor part = out.narrow(dim, offset, n);
    part.copy_(t);
    offset += n;
  }
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  CatPlan plan = plan_cat("cat", tensors, dim);
  Tensor out = empty(plan.sizes, TensorOptions(plan.dtype, plan.device));
  if (out.numel() > 0) cat_into(out, tensors, plan.dim);
  return out;
}

Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  CatPlan plan = plan_cat("cat", tensors, dim);
  check_out("cat", out, plan.sizes, plan.dtype, plan.device);
  for (const Tensor& t : tensors) {
    TESSERA_CHECK(!t.storage() || t.storage() != out.storage(), ValueError,
                  "cat: unsupported operation: the out tensor shares memory with an input (",
                  describe(t), ")");
  }
  if (out.numel() > 0) cat_into(out, tensors, plan.dim);
  return out;
}

namespace {
std::vector<Tensor> unsqueezed_for_stack(const char* op, const std::vector<Tensor>& tensors,
                                         int64_t dim) {
  TESSERA_CHECK(!tensors.empty(), ValueError, op, ": expects a non-empty TensorList");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, op);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TESSERA_CHECK(tensors[i].defined(), ValueError, op, ": undefined tensor at entry ", i);
    TESSERA_CHECK(tensors[i].sizes() == tensors[0].sizes(), ValueError, op,
                  ": stack expects each tensor to be equal size, but got ",
                  shape_to_string(tensors[0].sizes()), " at entry 0 and ",
                  shape_to_string(tensors[i].sizes()), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return parts;
}
}  // namespace

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  std::vector<Tensor> parts = unsqueezed_for_stack("stack", tensors, dim);
  return cat(parts, wrap_dim(dim, tensors[0].dim() + 1, "stack"));
}

Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  std::vector<Tensor> parts = unsqueezed_for_stack("stack", tensors, dim);
  return cat_out(out, parts, wrap_dim(dim, tensors[0].dim() + 1, "stack"));
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  TESSERA_CHECK(self.dim() > 0, ValueError, "split: expected at least a 1-dimensional tensor, got ",
                describe(self));
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  const int64_t n = self.sizes()[d];
  TESSERA_CHECK(split_size >= 0, ValueError,
                "split: split expects split_size be non-negative, but got split_size=", split_size);
  TESSERA_CHECK(split_size > 0 || n == 0, ValueError,
                "split: split_size can only be 0 if dimension size is 0, but got dimension size of ",
                n);
  std::vector<Tensor> parts;
  if (n == 0) {
    parts.push_back(self);
    return parts;
  }
  for (int64_t start = 0; start < n; start += split_size) {
    parts.push_back(self.narrow(d, start, std::min(split_size, n - start)));
  }
  return parts;
}

std::vector<Tensor> split(const Tensor& self, const Shape& split_sizes, int64_t dim) {
  TESSERA_CHECK(self.dim() > 0, ValueError, "split: expected at least a 1-dimensional tensor, got ",
                describe(self));
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  const int64_t n = self.sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    TESSERA_CHECK(s >= 0, ValueError, "split: split_with_sizes expects split_sizes have only "
                  "non-negative entries, but got split_sizes=", shape_to_string(split_sizes));
    total = checked_add(total, s, "split");
  }
  TESSERA_CHECK(total == n, ValueError, "split: split_with_sizes expects split_sizes to sum exactly to ",
                n, " (input tensor's size at dimension ", d, "), but got split_sizes=",
                shape_to_string(split_sizes));
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    parts.push_back(self.narrow(d, start, s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  TESSERA_CHECK(self.dim() > 0, ValueError, "chunk: expects at least a 1-dimensional tensor, got ",
                describe(self));
  TESSERA_CHECK(chunks > 0, ValueError, "chunk: chunk expects `chunks` to be greater than 0, got: ",
                chunks);
  const int64_t d = wrap_dim(dim, self.dim(), "chunk");
  const int64_t n = self.sizes()[d];
  const int64_t split_size = (n + chunks - 1) / chunks;
  // A zero-size dim gives `chunks` empty views, as PyTorch.
  if (split_size == 0 && n == 0) {
    return std::vector<Tensor>(static_cast<size_t>(chunks), self);
  }
  return split(self, split_size, d);
}

}  // namespace tessera
