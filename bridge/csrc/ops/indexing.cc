// Indexing ops: index_select, gather, scatter, scatter_add, index_add, masked_fill_,
// masked_select, nonzero, sort, topk, and advanced indexing (x[idx],
// x[idx] = v, x[idx] += v through index.Tensor and _index_put_impl_).
//
// Advanced indexing is built from runtime ops. Masks become the columns of
// their nonzero(); index tensors are bounds-checked (IndexError naming the
// index, dim and size, as on CPU), wrapped to non-negative and broadcast.
// x[idx] then merges the indexed dims into one and gathers along it with
// index_select (one kernel, no copy of x when the indexed dims are adjacent
// and mergeable); x[idx] = v permutes the indexed dims of a view of x to
// the front, which is the form the runtime's index_put_ takes.
#include <torch/library.h>

#include <numeric>

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

// -- index_select, gather.

at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "index_select");
  const tessera::Tensor idx = to_runtime(index, "index_select");
  return to_torch(call_runtime([&] { return tessera::index_select(src, dim, idx); }));
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             at::Tensor& out) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "index_select");
  const tessera::Tensor idx = to_runtime(index, "index_select");
  return write_out(out, call_runtime([&] { return tessera::index_select(src, dim, idx); }));
}

at::Tensor gather(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                  bool /*sparse_grad*/) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "gather");
  const tessera::Tensor idx = to_runtime(index, "gather");
  return to_torch(call_runtime([&] { return tessera::gather(src, dim, idx); }));
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool /*sparse_grad*/, at::Tensor& out) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "gather");
  const tessera::Tensor idx = to_runtime(index, "gather");
  return write_out(out, call_runtime([&] { return tessera::gather(src, dim, idx); }));
}

// -- scatter, scatter_add: in-place on self; the functional and out=
// forms scatter into a copy (out= into out itself once it holds self).

enum class Scatter { kSrc, kAdd };

void scatter_into(at::Tensor& target, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                  Scatter kind) {
  const char* op = kind == Scatter::kAdd ? "scatter_add" : "scatter";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Tensor s = to_runtime(src, op);
  call_runtime([&] {
    kind == Scatter::kAdd ? tessera::scatter_add_(dst, dim, idx, s)
                          : tessera::scatter_(dst, dim, idx, s);
  });
}

void scatter_value_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                        const c10::Scalar& value) {
  tessera::Tensor dst = to_runtime(target, "scatter");
  const tessera::Tensor idx = to_runtime(index, "scatter");
  const tessera::Scalar v = to_runtime_scalar(value, "scatter");
  call_runtime([&] { tessera::scatter_(dst, dim, idx, v); });
}

// out = self, ready to be scattered or added into (out may be self itself).
at::Tensor& prepare_scatter_out(const at::Tensor& self, at::Tensor& out) {
  if (out.is_same(self)) return out;
  at::native::resize_output(out, self.sizes());
  tessera::Tensor dst = to_runtime(out, "scatter");
  const tessera::Tensor src = to_runtime(self, "scatter");
  call_runtime([&] { dst.copy_(src); });
  return out;
}

template <Scatter kKind>
at::Tensor& scatter_src_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src) {
  const OpScope scope(self);
  scatter_into(self, dim, index, src, kKind);
  return self;
}

template <Scatter kKind>
at::Tensor scatter_src(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  scatter_into(out, dim, index, src, kKind);
  return out;
}

template <Scatter kKind>
at::Tensor& scatter_src_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, at::Tensor& out) {
  const OpScope scope(self);
  scatter_into(prepare_scatter_out(self, out), dim, index, src, kKind);
  return out;
}

at::Tensor& scatter_value_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const c10::Scalar& value) {
  const OpScope scope(self);
  scatter_value_into(self, dim, index, value);
  return self;
}

at::Tensor scatter_value(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const c10::Scalar& value) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  scatter_value_into(out, dim, index, value);
  return out;
}

at::Tensor& scatter_value_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const c10::Scalar& value, at::Tensor& out) {
  const OpScope scope(self);
  scatter_value_into(prepare_scatter_out(self, out), dim, index, value);
  return out;
}

// -- index_add: self.index_add_(dim, index, source) is an accumulating
// index_put_ on views of self and source with dim moved to the front. It is
// the backward of index_select.

void index_add_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                    const at::Tensor& source, const c10::Scalar& alpha) {
  const char* op = "index_add_";
  const tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Tensor src = to_runtime(source, op);
  call_runtime([&] {
    TESSERA_CHECK(idx.dim() <= 1, IndexError, op, ": Index is supposed to be a vector, got ",
                  tessera::describe(idx));
    TESSERA_CHECK(idx.dtype() == tessera::DType::kI64 || idx.dtype() == tessera::DType::kI32,
                  TypeError, op, ": Expected dtype int32/int64 for index, got ",
                  tessera::describe(idx));
    TESSERA_CHECK(src.dtype() == dst.dtype(), TypeError, op, ": self ", tessera::describe(dst),
                  " and source ", tessera::describe(src), " must have the same scalar type");
    // A 0-d self or source acts as a 1-element vector.
    tessera::Tensor self1 = dst.dim() == 0 ? dst.reshape({1}) : dst;
    const tessera::Tensor src1 = src.dim() == 0 ? src.reshape({1}) : src;
    const int64_t d = tessera::wrap_dim(dim, self1.dim(), op);
    Shape expected = self1.sizes();
    expected[d] = idx.numel();
    TESSERA_CHECK(src1.sizes() == expected, ValueError, op, ": source ",
                  tessera::describe(src), " should have shape ", tessera::shape_to_string(expected),
                  " (self ", tessera::describe(dst), ", ", idx.numel(), " indices along dim ", d,
                  ")");
    if (idx.numel() == 0) return;
    const auto [lo, hi] = [&] {
      const std::vector<int64_t> b =
          tessera::stack({tessera::amin(idx), tessera::amax(idx)}).to_vector<int64_t>();
      return std::pair(b[0], b[1]);
    }();
    const int64_t size = self1.sizes()[d];
    TESSERA_CHECK(lo >= 0 && hi < size, IndexError, op, ": index ", lo < 0 ? lo : hi,
                  " is out of range for dimension ", d, " with size ", size);
    Shape perm{d};
    for (int64_t i = 0; i < self1.dim(); ++i) {
      if (i != d) perm.push_back(i);
    }
    // Integer tensors scale by the integer part of alpha, as aten does.
    const tessera::Scalar scale = tessera::is_integral(dst.dtype())
                                      ? tessera::Scalar(alpha.toLong())
                                      : to_runtime_scalar(alpha, op);
    tessera::Tensor values = src1;
    if (!(alpha.isIntegral(false) && alpha.toLong() == 1)) {
      values = tessera::mul(src1, scale).to(dst.dtype());
    }
    tessera::Tensor target_view = self1.permute(perm);
    tessera::index_put_(target_view, {idx.reshape({-1})}, values.permute(perm),
                        /*accumulate=*/true);
  });
}

at::Tensor& index_add_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, const c10::Scalar& alpha) {
  const OpScope scope(self);
  index_add_into(self, dim, index, source, alpha);
  return self;
}

at::Tensor index_add(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source, const c10::Scalar& alpha) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  index_add_into(out, dim, index, source, alpha);
  return out;
}

at::Tensor& index_add_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, const c10::Scalar& alpha, at::Tensor& out) {
  const OpScope scope(self);
  index_add_into(prepare_scatter_out(self, out), dim, index, source, alpha);
  return out;
}

// -- Advanced indexing.

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
      if (pos >= plan.self.dim()) break;  // reported below
      plan.dims.push_back(pos++);
      plan.indices.push_back(index.to(tessera::DType::kI64));
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
    check_in_range(op, plan.indices[i], plan.dims[i], plan.self.sizes()[plan.dims[i]]);
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

// -- Masks.

at::Tensor& masked_fill_scalar_(at::Tensor& self, const at::Tensor& mask,
                                const c10::Scalar& value) {
  const OpScope scope(self);
  tessera::Tensor dst = to_runtime(self, "masked_fill_");
  const tessera::Tensor m = to_runtime(mask, "masked_fill_");
  const tessera::Scalar v = to_runtime_scalar(value, "masked_fill_");
  call_runtime([&] { tessera::masked_fill_(dst, m, v); });
  return self;
}

at::Tensor& masked_fill_tensor_(at::Tensor& self, const at::Tensor& mask,
                                const at::Tensor& value) {
  const OpScope scope(self);
  tessera::Tensor dst = to_runtime(self, "masked_fill_");
  const tessera::Tensor m = to_runtime(mask, "masked_fill_");
  const tessera::Tensor v = to_runtime(value, "masked_fill_");
  call_runtime([&] { tessera::masked_fill_(dst, m, v); });
  return self;
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "masked_select");
  const tessera::Tensor m = to_runtime(mask, "masked_select");
  return to_torch(call_runtime([&] { return tessera::masked_select(src, m); }));
}

at::Tensor nonzero(const at::Tensor& self) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "nonzero");
  return to_torch(call_runtime([&] { return tessera::nonzero(src); }));
}

// -- Sorting. Always stable (a valid answer to stable=False too): ties keep
// their input order, as on CPU, so indices agree with torch's CPU results.

std::tuple<at::Tensor, at::Tensor> sort(const at::Tensor& self, std::optional<bool> /*stable*/,
                                        int64_t dim, bool descending) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "sort");
  auto [values, indices] =
      call_runtime([&] { return tessera::sort(src, dim, descending, /*stable=*/true); });
  return {to_torch(values), to_torch(indices)};
}

std::tuple<at::Tensor&, at::Tensor&> sort_out(const at::Tensor& self,
                                              std::optional<bool> /*stable*/,
                                              int64_t dim, bool descending, at::Tensor& values,
                                              at::Tensor& indices) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "sort");
  auto [v, i] = call_runtime([&] { return tessera::sort(src, dim, descending, true); });
  write_out(values, v);
  write_out(indices, i);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, int64_t k, int64_t dim,
                                        bool largest, bool sorted) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "topk");
  auto [values, indices] =
      call_runtime([&] { return tessera::topk(src, k, dim, largest, sorted); });
  return {to_torch(values), to_torch(indices)};
}

std::tuple<at::Tensor&, at::Tensor&> topk_out(const at::Tensor& self, int64_t k, int64_t dim,
                                              bool largest, bool sorted, at::Tensor& values,
                                              at::Tensor& indices) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "topk");
  auto [v, i] = call_runtime([&] { return tessera::topk(src, k, dim, largest, sorted); });
  write_out(values, v);
  write_out(indices, i);
  return {values, indices};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", TORCH_FN(index_select));
  m.impl("index_select.out", TORCH_FN(index_select_out));
  m.impl("gather", TORCH_FN(gather));
  m.impl("gather.out", TORCH_FN(gather_out));
  m.impl("scatter.src", TORCH_FN(scatter_src<Scatter::kSrc>));
  m.impl("scatter_.src", TORCH_FN(scatter_src_<Scatter::kSrc>));
  m.impl("scatter.src_out", TORCH_FN(scatter_src_out<Scatter::kSrc>));
  m.impl("scatter.value", TORCH_FN(scatter_value));
  m.impl("scatter_.value", TORCH_FN(scatter_value_));
  m.impl("scatter.value_out", TORCH_FN(scatter_value_out));
  m.impl("scatter_add", TORCH_FN(scatter_src<Scatter::kAdd>));
  m.impl("scatter_add_", TORCH_FN(scatter_src_<Scatter::kAdd>));
  m.impl("scatter_add.out", TORCH_FN(scatter_src_out<Scatter::kAdd>));
  m.impl("index_add_", TORCH_FN(index_add_));
  m.impl("index_add", TORCH_FN(index_add));
  m.impl("index_add.out", TORCH_FN(index_add_out));
  m.impl("index.Tensor", TORCH_FN(index));
  m.impl("_index_put_impl_", TORCH_FN(index_put_impl_));
  m.impl("masked_fill_.Scalar", TORCH_FN(masked_fill_scalar_));
  m.impl("masked_fill_.Tensor", TORCH_FN(masked_fill_tensor_));
  m.impl("masked_select", TORCH_FN(masked_select));
  m.impl("nonzero", TORCH_FN(nonzero));
  m.impl("sort.stable", TORCH_FN(sort));
  m.impl("sort.values_stable", TORCH_FN(sort_out));
  m.impl("topk", TORCH_FN(topk));
  m.impl("topk.values", TORCH_FN(topk_out));
}

}  // namespace
}  // namespace torch_tessera
