// Advanced indexing: x[indices] (index.Tensor) and x[indices] = v,
// x.index_put_(indices, v, accumulate) (_index_put_impl_, which aten's
// index_put_ and the backward of x[indices] call).
//
// Built from runtime ops. Masks become the columns of their nonzero();
// index tensors are bounds-checked (IndexError naming the index, dim and
// size, as on CPU), wrapped to non-negative and broadcast. x[idx] then
// merges the indexed dims into one and gathers along it with index_select
// (one kernel, and no copy of x when the indexed dims are adjacent and
// mergeable); x[idx] = v permutes the indexed dims of a view of x to the
// front, which is the form the runtime's index_put_ takes.
#include <torch/library.h>

#include <algorithm>
#include <numeric>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using tessera::Shape;

using IndexList = c10::List<std::optional<at::Tensor>>;

Shape concat(std::initializer_list<Shape> parts) {
  Shape out;
  for (const Shape& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Shape sub_shape(const Shape& s, size_t begin, size_t end) {
  return Shape(s.begin() + static_cast<std::ptrdiff_t>(begin),
               s.begin() + static_cast<std::ptrdiff_t>(end));
}

int64_t product(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

// The indices of x[...] resolved against x: `indices[i]` (int64, on x's
// device, in range and non-negative) indexes dim `dims[i]` of `self`,
// which is x, or a view of it with a size-1 dim for each 0-d mask.
struct IndexPlan {
  tessera::Tensor self;
  std::vector<int64_t> dims;
  std::vector<tessera::Tensor> indices;
  Shape broadcast;  // the indices' common shape
  bool adjacent = true;
};

// An index tensor given on the host moves to x's device (as with CUDA).
tessera::Tensor index_on_device(const at::Tensor& index, const at::Tensor& self, const char* op) {
  if (index.device().is_privateuseone()) return to_runtime(index, op);
  return to_runtime(index.to(self.device()), op);
}

// IndexError unless index is in [-size, size); then wraps it to [0, size).
void check_in_range(const char* op, tessera::Tensor& index, int64_t dim, int64_t size) {
  if (index.numel() == 0) return;
  // One read back to the host for both bounds.
  const std::vector<int64_t> bounds =
      tessera::stack({tessera::amin(index), tessera::amax(index)}).to_vector<int64_t>();
  const int64_t lo = bounds[0];
  const int64_t hi = bounds[1];
  if (lo < -size || hi >= size) {
    C10_THROW_ERROR(IndexError, std::string(op) + ": index " +
                                    std::to_string(lo < -size ? lo : hi) +
                                    " is out of bounds for dimension " + std::to_string(dim) +
                                    " with size " + std::to_string(size));
  }
  if (lo < 0) index = tessera::remainder(index, size);  // -1 -> size - 1
}

void add_mask(const char* op, IndexPlan& plan, const tessera::Tensor& mask, int64_t& pos) {
  if (mask.dim() == 0) {
    // x[True] adds a dim of size 1 and selects it; x[False] selects none.
    plan.self = plan.self.unsqueeze(pos);
    const bool keep = mask.item<bool>();
    plan.dims.push_back(pos++);
    plan.indices.push_back(tessera::zeros({keep ? 1 : 0}, tessera::TensorOptions(
                                                             tessera::DType::kI64,
                                                             plan.self.device())));
    return;
  }
  const Shape& sizes = plan.self.sizes();
  if (pos + mask.dim() > plan.self.dim()) {
    C10_THROW_ERROR(IndexError, std::string(op) + ": too many indices for tensor of dimension " +
                                    std::to_string(plan.self.dim()));
  }
  for (int64_t d = 0; d < mask.dim(); ++d) {
    if (mask.sizes()[d] != sizes[pos + d]) {
      C10_THROW_ERROR(IndexError,
                      std::string(op) + ": The shape of the mask " +
                          tessera::shape_to_string(mask.sizes()) + " at index " +
                          std::to_string(d) + " does not match the shape of the indexed tensor " +
                          tessera::shape_to_string(sizes) + " at index " +
                          std::to_string(pos + d));
    }
  }
  const tessera::Tensor coords = tessera::nonzero(mask);  // [n, mask.dim()]
  for (int64_t d = 0; d < mask.dim(); ++d) {
    plan.dims.push_back(pos++);
    plan.indices.push_back(coords.select(1, d));
  }
}

IndexPlan plan_indexing(const char* op, const at::Tensor& self, const IndexList& indices) {
  IndexPlan plan;
  plan.self = to_runtime(self, op);
  int64_t pos = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> entry = indices.get(i);
    if (!entry.has_value() || !entry->defined()) {
      ++pos;  // a full slice
      continue;
    }
    const tessera::Tensor index = index_on_device(*entry, self, op);
    const tessera::DType type = index.dtype();
    if (type == tessera::DType::kBool || type == tessera::DType::kU8) {
      add_mask(op, plan, index.to(tessera::DType::kBool), pos);
    } else if (type == tessera::DType::kI64 || type == tessera::DType::kI32) {
      if (pos >= plan.self.dim()) {  // reported below
        ++pos;
        continue;
      }
      // A later 0-d mask unsqueezes self after pos: this dim's size stays.
      tessera::Tensor wrapped = index.to(tessera::DType::kI64);
      check_in_range(op, wrapped, pos, plan.self.sizes()[pos]);
      plan.dims.push_back(pos++);
      plan.indices.push_back(std::move(wrapped));
    } else {
      C10_THROW_ERROR(IndexError, std::string(op) + ": tensors used as indices must be long, "
                                      "int, byte or bool tensors, got " + tessera::describe(index));
    }
  }
  if (pos > plan.self.dim() || plan.dims.size() > static_cast<size_t>(plan.self.dim())) {
    C10_THROW_ERROR(IndexError, std::string(op) + ": too many indices for tensor of dimension " +
                                    std::to_string(self.dim()) + " (got " +
                                    std::to_string(indices.size()) + ")");
  }
  for (size_t i = 0; i < plan.dims.size(); ++i) {
    if (i > 0 && plan.dims[i] != plan.dims[i - 1] + 1) plan.adjacent = false;
    try {
      plan.broadcast = tessera::broadcast_shapes(plan.broadcast, plan.indices[i].sizes(), op);
    } catch (const tessera::Error&) {
      std::string shapes;
      for (const tessera::Tensor& t : plan.indices) {
        shapes += (shapes.empty() ? "" : ", ") + tessera::shape_to_string(t.sizes());
      }
      C10_THROW_ERROR(IndexError, std::string(op) + ": shape mismatch: indexing tensors could "
                                      "not be broadcast together with shapes " + shapes);
    }
  }
  return plan;
}

// The dims of plan.self in the order the result lays them out: indexed
// dims first unless they are adjacent (then they stay where they are).
std::vector<int64_t> indexed_first(const IndexPlan& plan) {
  std::vector<int64_t> perm = plan.dims;
  for (int64_t d = 0; d < plan.self.dim(); ++d) {
    if (std::find(plan.dims.begin(), plan.dims.end(), d) == plan.dims.end()) perm.push_back(d);
  }
  return perm;
}

at::Tensor index(const at::Tensor& self, const IndexList& indices) {
  const char* op = "index";
  const OpScope scope(self);
  return to_torch(call_runtime([&] {
    IndexPlan plan = plan_indexing(op, self, indices);
    if (plan.dims.empty()) return plan.self.clone();
    // src: the indexed dims side by side, starting at `first`.
    const tessera::Tensor src =
        plan.adjacent ? plan.self : plan.self.permute(indexed_first(plan));
    const size_t first = plan.adjacent ? static_cast<size_t>(plan.dims.front()) : 0;
    const size_t k = plan.dims.size();
    const Shape& s = src.sizes();
    // Row-major linear index into the merged dims.
    tessera::Tensor flat = plan.indices[k - 1].expand(plan.broadcast);
    int64_t scale = s[first + k - 1];
    for (size_t i = k - 1; i-- > 0;) {
      flat = tessera::add(flat, plan.indices[i], scale);
      scale *= s[first + i];
    }
    const Shape before = sub_shape(s, 0, first);
    const Shape after = sub_shape(s, first + k, s.size());
    const int64_t merged_size = product(sub_shape(s, first, first + k));
    const tessera::Tensor merged = src.reshape(concat({before, {merged_size}, after}));
    const tessera::Tensor picked = tessera::index_select(
        merged, static_cast<int64_t>(first),
        flat.contiguous().reshape({product(plan.broadcast)}));
    return picked.reshape(concat({before, plan.broadcast, after}));
  }));
}

at::Tensor& index_put_impl_(at::Tensor& self, const IndexList& indices, const at::Tensor& values,
                            bool accumulate, bool /*unsafe*/) {
  const char* op = "index_put_";
  const OpScope scope(self);
  const tessera::Tensor vals = to_runtime(values, op);
  call_runtime([&] {
    IndexPlan plan = plan_indexing(op, self, indices);
    if (plan.dims.empty()) {  // x[...] = v: every element
      accumulate ? plan.self.add_(vals) : plan.self.copy_(vals);
      return;
    }
    // The result of x[indices] in aten's layout, which values broadcast to.
    const Shape& s = plan.self.sizes();
    const size_t k = plan.dims.size();
    const size_t nb = plan.broadcast.size();
    Shape result;
    if (plan.adjacent) {
      const size_t first = static_cast<size_t>(plan.dims.front());
      result = concat({sub_shape(s, 0, first), plan.broadcast, sub_shape(s, first + k, s.size())});
    } else {
      Shape rest;
      for (int64_t d : indexed_first(plan)) rest.push_back(s[d]);
      result = concat({plan.broadcast, sub_shape(rest, k, rest.size())});
    }
    bool fits = false;
    try {
      fits = tessera::broadcast_shapes(vals.sizes(), result, op) == result;
    } catch (const tessera::ValueError&) {
    }
    if (!fits) {
      throw tessera::ValueError(
          std::string(op) + ": shape mismatch: value tensor of shape " +
          tessera::shape_to_string(vals.sizes()) +
          " cannot be broadcast to indexing result of shape " + tessera::shape_to_string(result));
    }
    tessera::Tensor v = vals.device() == plan.self.device() ? vals : vals.to(plan.self.device());
    v = v.expand(result);
    if (plan.adjacent && plan.dims.front() > 0) {  // broadcast dims first, as in target
      const size_t first = static_cast<size_t>(plan.dims.front());
      Shape perm;
      for (size_t i = 0; i < nb; ++i) perm.push_back(static_cast<int64_t>(first + i));
      for (size_t i = 0; i < result.size(); ++i) {
        if (i < first || i >= first + nb) perm.push_back(static_cast<int64_t>(i));
      }
      v = v.permute(perm);
    }
    tessera::Tensor target = plan.self.permute(indexed_first(plan));  // a view of self
    tessera::index_put_(target, plan.indices, v, accumulate);
  });
  return self;
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("index.Tensor", TORCH_FN(index));
  m.impl("_index_put_impl_", TORCH_FN(index_put_impl_));
}

}  // namespace
}  // namespace torch_tessera
