// Indexing ops along one dim or by mask: index_select, gather, scatter,
// scatter_add, scatter_reduce, index_reduce, index_add, index_copy,
// index_fill_, take, put_, masked_fill_, masked_scatter, masked_select,
// nonzero; and sort, argsort (aten's composite over sort) and topk.
// Advanced indexing (x[idx]) is in advanced_indexing.cc.
//
// scatter_reduce, index_reduce and scatter's reduce= forms are the
// runtime's scatter reductions (runtime/ops/indexing_scatter_reduce.cc).
#include <torch/library.h>

#include <string_view>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using tessera::Shape;

// The runtime's gather and scatter take int64 indices; aten also accepts
// int32 ones.
tessera::Tensor int64_index(const at::Tensor& index, const char* op) {
  const tessera::Tensor idx = to_runtime(index, op);
  if (!idx.defined() || idx.dtype() == tessera::DType::kI64) return idx;
  // An empty index selects nothing, whatever its integer dtype (aten
  // accepts, e.g., an empty uint8 one).
  const bool empty_integral = idx.numel() == 0 && !tessera::is_floating(idx.dtype()) &&
                              idx.dtype() != tessera::DType::kBool;
  if (idx.dtype() != tessera::DType::kI32 && !empty_integral) return idx;
  return call_runtime([&] { return idx.to(tessera::DType::kI64); });
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
  if (index.numel() == 0 && index.dim() != self.dim()) {
    // aten gathers nothing into an empty result of the index's shape
    // without comparing ranks; the runtime insists on equal ranks.
    c10::maybe_wrap_dim(dim, self.dim());
    return self.new_empty(index.sizes());
  }
  const tessera::Tensor src = to_runtime(self, "gather");
  const tessera::Tensor idx = int64_index(index, "gather");
  return to_torch(call_runtime([&] { return tessera::gather(src, dim, idx); }));
}

at::Tensor& gather_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                       bool /*sparse_grad*/, at::Tensor& out) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "gather");
  const tessera::Tensor idx = int64_index(index, "gather");
  return write_out(out, call_runtime([&] { return tessera::gather(src, dim, idx); }));
}

// -- scatter, scatter_add: in-place on self; the functional and out=
// forms scatter into a copy (out= into out itself once it holds self).

enum class Scatter { kSrc, kAdd };

void scatter_into(at::Tensor& target, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                  Scatter kind) {
  const char* op = kind == Scatter::kAdd ? "scatter_add" : "scatter";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = int64_index(index, op);
  const tessera::Tensor s = to_runtime(src, op);
  call_runtime([&] {
    kind == Scatter::kAdd ? tessera::scatter_add_(dst, dim, idx, s)
                          : tessera::scatter_(dst, dim, idx, s);
  });
}

void scatter_value_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                        const c10::Scalar& value) {
  tessera::Tensor dst = to_runtime(target, "scatter");
  const tessera::Tensor idx = int64_index(index, "scatter");
  const tessera::Scalar v = to_runtime_scalar(value, "scatter");
  call_runtime([&] { tessera::scatter_(dst, dim, idx, v); });
}

// out = self, ready to be scattered or added into (out may be self itself).
at::Tensor& prepare_scatter_out(const at::Tensor& self, at::Tensor& out) {
  if (out.is_same(self)) return out;
  resize_output(out, self.sizes());
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

// -- scatter_reduce, scatter with reduce=, index_reduce: the same shapes
// of in-place, functional and out= forms as scatter.

std::string_view as_std(c10::string_view s) { return std::string_view(s.data(), s.size()); }

void scatter_reduce_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                         const at::Tensor& src, c10::string_view reduce, bool include_self) {
  const char* op = "scatter_reduce";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = int64_index(index, op);
  const tessera::Tensor s = to_runtime(src, op);
  call_runtime([&] { tessera::scatter_reduce_(dst, dim, idx, s, as_std(reduce), include_self); });
}

at::Tensor& scatter_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                            const at::Tensor& src, c10::string_view reduce, bool include_self) {
  const OpScope scope(self);
  scatter_reduce_into(self, dim, index, src, reduce, include_self);
  return self;
}

at::Tensor scatter_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& src, c10::string_view reduce, bool include_self) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  scatter_reduce_into(out, dim, index, src, reduce, include_self);
  return out;
}

at::Tensor& scatter_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& src, c10::string_view reduce, bool include_self,
                               at::Tensor& out) {
  const OpScope scope(self);
  scatter_reduce_into(prepare_scatter_out(self, out), dim, index, src, reduce, include_self);
  return out;
}

// scatter(..., reduce="add" | "multiply"), of a src tensor or a value.
void scatter_fold_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                       const at::Tensor& src, c10::string_view reduce) {
  tessera::Tensor dst = to_runtime(target, "scatter");
  const tessera::Tensor idx = int64_index(index, "scatter");
  const tessera::Tensor s = to_runtime(src, "scatter");
  call_runtime([&] { tessera::scatter_(dst, dim, idx, s, as_std(reduce)); });
}

void scatter_fold_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                       const c10::Scalar& value, c10::string_view reduce) {
  tessera::Tensor dst = to_runtime(target, "scatter");
  const tessera::Tensor idx = int64_index(index, "scatter");
  const tessera::Scalar v = to_runtime_scalar(value, "scatter");
  call_runtime([&] { tessera::scatter_(dst, dim, idx, v, as_std(reduce)); });
}

template <typename Src>
at::Tensor& scatter_fold_(at::Tensor& self, int64_t dim, const at::Tensor& index, const Src& src,
                          c10::string_view reduce) {
  const OpScope scope(self);
  scatter_fold_into(self, dim, index, src, reduce);
  return self;
}

template <typename Src>
at::Tensor scatter_fold(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const Src& src, c10::string_view reduce) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  scatter_fold_into(out, dim, index, src, reduce);
  return out;
}

template <typename Src>
at::Tensor& scatter_fold_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const Src& src, c10::string_view reduce, at::Tensor& out) {
  const OpScope scope(self);
  scatter_fold_into(prepare_scatter_out(self, out), dim, index, src, reduce);
  return out;
}

void index_reduce_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                       const at::Tensor& source, c10::string_view reduce, bool include_self) {
  const char* op = "index_reduce";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Tensor s = to_runtime(source, op);
  call_runtime([&] { tessera::index_reduce_(dst, dim, idx, s, as_std(reduce), include_self); });
}

at::Tensor& index_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& source, c10::string_view reduce, bool include_self) {
  const OpScope scope(self);
  index_reduce_into(self, dim, index, source, reduce, include_self);
  return self;
}

at::Tensor index_reduce(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source, c10::string_view reduce, bool include_self) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  index_reduce_into(out, dim, index, source, reduce, include_self);
  return out;
}

at::Tensor& index_reduce_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                             const at::Tensor& source, c10::string_view reduce,
                             bool include_self, at::Tensor& out) {
  const OpScope scope(self);
  index_reduce_into(prepare_scatter_out(self, out), dim, index, source, reduce, include_self);
  return out;
}

// -- index_add, index_copy, index_fill: the runtime's writes of slices
// along one dim (runtime/ops/indexing_along_dim.cc); index_add is also the
// backward of index_select.

void index_add_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                    const at::Tensor& source, const c10::Scalar& alpha) {
  const char* op = "index_add_";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Tensor src = to_runtime(source, op);
  const tessera::Scalar a = to_runtime_scalar(alpha, op);
  call_runtime([&] { tessera::index_add_(dst, dim, idx, src, a); });
}

void index_copy_into(at::Tensor& target, int64_t dim, const at::Tensor& index,
                     const at::Tensor& source) {
  const char* op = "index_copy_";
  tessera::Tensor dst = to_runtime(target, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Tensor src = to_runtime(source, op);
  call_runtime([&] { tessera::index_copy_(dst, dim, idx, src); });
}

at::Tensor& index_fill_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const c10::Scalar& value) {
  const char* op = "index_fill_";
  const OpScope scope(self);
  tessera::Tensor dst = to_runtime(self, op);
  const tessera::Tensor idx = to_runtime(index, op);
  const tessera::Scalar v = to_runtime_scalar(value, op);
  call_runtime([&] { tessera::index_fill_(dst, dim, idx, v); });
  return self;
}

at::Tensor& index_fill_tensor_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                               const at::Tensor& value) {
  TORCH_CHECK_VALUE(value.dim() == 0, "index_fill_: only supports a 0-dimensional value tensor, "
                    "but got tensor with ", value.dim(), " dimension(s)");
  return index_fill_(self, dim, index, value.item());
}

// -- take, put_: the runtime's reads and writes of self's flattening
// (runtime/ops/indexing_take_put.cc).

at::Tensor take(const at::Tensor& self, const at::Tensor& index) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "take");
  const tessera::Tensor idx = to_runtime(index, "take");
  return to_torch(call_runtime([&] { return tessera::take(src, idx); }));
}

at::Tensor& take_out(const at::Tensor& self, const at::Tensor& index, at::Tensor& out) {
  const OpScope scope(self);
  const tessera::Tensor src = to_runtime(self, "take");
  const tessera::Tensor idx = to_runtime(index, "take");
  return write_out(out, call_runtime([&] { return tessera::take(src, idx); }));
}

at::Tensor& put_(at::Tensor& self, const at::Tensor& index, const at::Tensor& source,
                 bool accumulate) {
  const OpScope scope(self);
  tessera::Tensor dst = to_runtime(self, "put_");
  const tessera::Tensor idx = to_runtime(index, "put_");
  const tessera::Tensor src = to_runtime(source, "put_");
  call_runtime([&] { tessera::put_(dst, idx, src, accumulate); });
  return self;
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

at::Tensor& index_copy_(at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& source) {
  const OpScope scope(self);
  index_copy_into(self, dim, index, source);
  return self;
}

at::Tensor index_copy(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                      const at::Tensor& source) {
  const OpScope scope(self);
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  index_copy_into(out, dim, index, source);
  return out;
}

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out) {
  const OpScope scope(self);
  index_copy_into(prepare_scatter_out(self, out), dim, index, source);
  return out;
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

// masked_scatter: aten's functional form clones and calls masked_scatter_;
// both are registered (the functional one skips the clone).
at::Tensor masked_scatter(const at::Tensor& self, const at::Tensor& mask,
                          const at::Tensor& source) {
  const OpScope scope(self);
  constexpr const char* op = "masked_scatter";
  return to_torch(call_runtime([&] {
    return tessera::masked_scatter(to_runtime(self, op), to_runtime(mask, op),
                                   to_runtime(source, op));
  }));
}

at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  const OpScope scope(self);
  constexpr const char* op = "masked_scatter_";
  tessera::Tensor dst = to_runtime(self, op);
  call_runtime([&] { tessera::masked_scatter_(dst, to_runtime(mask, op), to_runtime(source, op)); });
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

TESSERA_ATEN_KERNELS(m) {
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
  m.impl("scatter_reduce.two", TORCH_FN(scatter_reduce));
  m.impl("scatter_reduce_.two", TORCH_FN(scatter_reduce_));
  m.impl("scatter_reduce.two_out", TORCH_FN(scatter_reduce_out));
  m.impl("scatter.reduce", TORCH_FN(scatter_fold<at::Tensor>));
  m.impl("scatter_.reduce", TORCH_FN(scatter_fold_<at::Tensor>));
  m.impl("scatter.reduce_out", TORCH_FN(scatter_fold_out<at::Tensor>));
  m.impl("scatter.value_reduce", TORCH_FN(scatter_fold<c10::Scalar>));
  m.impl("scatter_.value_reduce", TORCH_FN(scatter_fold_<c10::Scalar>));
  m.impl("scatter.value_reduce_out", TORCH_FN(scatter_fold_out<c10::Scalar>));
  m.impl("index_reduce", TORCH_FN(index_reduce));
  m.impl("index_reduce_", TORCH_FN(index_reduce_));
  m.impl("index_reduce.out", TORCH_FN(index_reduce_out));
  m.impl("take", TORCH_FN(take));
  m.impl("take.out", TORCH_FN(take_out));
  m.impl("put_", TORCH_FN(put_));
  m.impl("index_add_", TORCH_FN(index_add_));
  m.impl("index_add", TORCH_FN(index_add));
  m.impl("index_add.out", TORCH_FN(index_add_out));
  m.impl("index_copy_", TORCH_FN(index_copy_));
  m.impl("index_copy", TORCH_FN(index_copy));
  m.impl("index_copy.out", TORCH_FN(index_copy_out));
  m.impl("index_fill_.int_Scalar", TORCH_FN(index_fill_));
  m.impl("index_fill_.int_Tensor", TORCH_FN(index_fill_tensor_));
  m.impl("masked_fill_.Scalar", TORCH_FN(masked_fill_scalar_));
  m.impl("masked_fill_.Tensor", TORCH_FN(masked_fill_tensor_));
  m.impl("masked_select", TORCH_FN(masked_select));
  m.impl("masked_scatter", TORCH_FN(masked_scatter));
  m.impl("masked_scatter_", TORCH_FN(masked_scatter_));
  m.impl("nonzero", TORCH_FN(nonzero));
  m.impl("sort.stable", TORCH_FN(sort));
  m.impl("sort.values_stable", TORCH_FN(sort_out));
  m.impl("topk", TORCH_FN(topk));
  m.impl("topk.values", TORCH_FN(topk_out));
}

}  // namespace
}  // namespace torch_tessera
