// Gathers and scatters (runtime/ops/indexing_ops.h) as tessera.<name> and
// Tensor methods with PyTorch's names and keywords: index_select, gather,
// scatter, scatter_add, scatter_reduce, index_reduce, index_put,
// masked_fill, masked_select, masked_scatter, nonzero, argwhere,
// where(condition), take, put, index_add, index_copy, index_fill. In-place
// forms end in `_` and return self.
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "bindings/csrc/results.h"
#include "bindings/csrc/tensor_indexing.h"
#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;
// Never a tensor: a 2-D index tensor passed for the whole list would be
// read as one index per row (TensorListArg's reason).
using OptionalIndices = OptionalTensorListArg;

// index_fill with a 0-d tensor value, as PyTorch's index_fill accepts.
Tensor& index_fill_tensor_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  TESSERA_CHECK(value.dim() == 0, ValueError,
                "index_fill_: only supports a 0-dimensional value tensor, got ",
                tessera::describe(value));
  return tessera::index_fill_(self, dim, index, value.item());
}

// -- nonzero as a tuple.

// One 1-d tensor of indices per dim of t (a 0-d t counts as 1-d).
std::vector<Tensor> nonzero_columns(const Tensor& t) {
  const Tensor positions = tessera::nonzero(t.dim() == 0 ? t.view({1}) : t);
  std::vector<Tensor> out;
  for (int64_t k = 0; k < positions.size(1); ++k) {
    out.push_back(positions.select(1, k).contiguous());
  }
  return out;
}

void register_gathers(py::module_& m, TensorClass& cls) {
  m.def("index_select", [](const Tensor& t, int64_t dim, const Tensor& index, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::index_select_out(*out, t, dim, index)
                 : tessera::index_select(t, dim, index);
    });
  }, "input"_a, "dim"_a, "index"_a, py::kw_only(), "out"_a = py::none(),
     "The slices of input along dim at index (1-d int64 or int32).");
  cls.def("index_select", [](const Tensor& t, int64_t dim, const Tensor& index) {
    return tessera::index_select(t, dim, index);
  }, "dim"_a, "index"_a, ReleaseGil());

  m.def("gather", [](const Tensor& t, int64_t dim, const Tensor& index, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::gather_out(*out, t, dim, index) : tessera::gather(t, dim, index);
    });
  }, "input"_a, "dim"_a, "index"_a, py::kw_only(), "out"_a = py::none(),
     "out[i][j] = input[index[i][j]][j] for dim 0 (and so on): index (int64) has input's "
     "number of dims.");
  cls.def("gather", [](const Tensor& t, int64_t dim, const Tensor& index) {
    return tessera::gather(t, dim, index);
  }, "dim"_a, "index"_a, ReleaseGil());

  const char* take_doc =
      "The flattened input at index (int64, negative from the end), in index's shape.";
  m.def("take", [](const Tensor& t, const Tensor& index, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::take_out(*out, t, index) : tessera::take(t, index);
    });
  }, "input"_a, "index"_a, py::kw_only(), "out"_a = py::none(), take_doc);
  cls.def("take", [](const Tensor& t, const Tensor& index) { return tessera::take(t, index); },
          "index"_a, ReleaseGil(), take_doc);

  const char* put_doc = "input with its flattened elements at index (int64, negative from the "
                        "end) set to source's, in order, or increased by them with accumulate.";
  m.def("put", [](const Tensor& t, const Tensor& index, const Tensor& source, bool accumulate) {
    return tessera::put(t, index, source, accumulate);
  }, "input"_a, "index"_a, "source"_a, "accumulate"_a = false, ReleaseGil(), put_doc);
  cls.def("put", [](const Tensor& t, const Tensor& index, const Tensor& source, bool accumulate) {
    return tessera::put(t, index, source, accumulate);
  }, "index"_a, "source"_a, "accumulate"_a = false, ReleaseGil(), put_doc);
  cls.def("put_", [](Tensor& t, const Tensor& index, const Tensor& source,
                     bool accumulate) -> Tensor& {
    return tessera::put_(t, index, source, accumulate);
  }, "index"_a, "source"_a, "accumulate"_a = false, ReleaseGil());
}

void register_scatters(py::module_& m, TensorClass& cls) {
  const char* scatter_doc = "A copy of input with input[index[i][j]][j] = src[i][j] for dim 0 "
                            "(and so on), or = value.";
  // reduce= ("add" or "multiply") folds instead of replacing.
  auto scatter_any = [](const Tensor& t, int64_t dim, const Tensor& index, const auto& src,
                        const std::optional<std::string>& reduce) {
    return reduce ? tessera::scatter(t, dim, index, src, *reduce)
                  : tessera::scatter(t, dim, index, src);
  };
  auto scatter_any_ = [](Tensor& t, int64_t dim, const Tensor& index, const auto& src,
                         const std::optional<std::string>& reduce) -> Tensor& {
    return reduce ? tessera::scatter_(t, dim, index, src, *reduce)
                  : tessera::scatter_(t, dim, index, src);
  };
  m.def("scatter", [scatter_any](const Tensor& t, int64_t dim, const Tensor& index,
                                 const Tensor& src, const std::optional<std::string>& reduce,
                                 Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = scatter_any(t, dim, index, src, reduce);
      return out ? tessera::write_out("scatter", *out, r) : r;
    });
  }, "input"_a, "dim"_a, "index"_a, "src"_a, py::kw_only(), "reduce"_a = py::none(),
     "out"_a = py::none(), scatter_doc);
  m.def("scatter", [scatter_any](const Tensor& t, int64_t dim, const Tensor& index, Scalar value,
                                 const std::optional<std::string>& reduce, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = scatter_any(t, dim, index, value, reduce);
      return out ? tessera::write_out("scatter", *out, r) : r;
    });
  }, "input"_a, "dim"_a, "index"_a, "value"_a, py::kw_only(), "reduce"_a = py::none(),
     "out"_a = py::none());
  cls.def("scatter", [scatter_any](const Tensor& t, int64_t dim, const Tensor& index,
                                   const Tensor& src, const std::optional<std::string>& reduce) {
    return scatter_any(t, dim, index, src, reduce);
  }, "dim"_a, "index"_a, "src"_a, py::kw_only(), "reduce"_a = py::none(), ReleaseGil(),
     scatter_doc);
  cls.def("scatter", [scatter_any](const Tensor& t, int64_t dim, const Tensor& index,
                                   Scalar value, const std::optional<std::string>& reduce) {
    return scatter_any(t, dim, index, value, reduce);
  }, "dim"_a, "index"_a, "value"_a, py::kw_only(), "reduce"_a = py::none(), ReleaseGil());
  cls.def("scatter_", [scatter_any_](Tensor& t, int64_t dim, const Tensor& index,
                                     const Tensor& src,
                                     const std::optional<std::string>& reduce) -> Tensor& {
    return scatter_any_(t, dim, index, src, reduce);
  }, "dim"_a, "index"_a, "src"_a, py::kw_only(), "reduce"_a = py::none(), ReleaseGil());
  cls.def("scatter_", [scatter_any_](Tensor& t, int64_t dim, const Tensor& index, Scalar value,
                                     const std::optional<std::string>& reduce) -> Tensor& {
    return scatter_any_(t, dim, index, value, reduce);
  }, "dim"_a, "index"_a, "value"_a, py::kw_only(), "reduce"_a = py::none(), ReleaseGil());

  const char* scatter_add_doc = "A copy of input with src[i][j] added at input[index[i][j]][j] "
                                "for dim 0 (and so on); repeated indices accumulate.";
  m.def("scatter_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                          Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::scatter_add_out(*out, t, dim, index, src)
                 : tessera::scatter_add(t, dim, index, src);
    });
  }, "input"_a, "dim"_a, "index"_a, "src"_a, py::kw_only(), "out"_a = py::none(),
     scatter_add_doc);
  cls.def("scatter_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
    return tessera::scatter_add(t, dim, index, src);
  }, "dim"_a, "index"_a, "src"_a, ReleaseGil(), scatter_add_doc);
  cls.def("scatter_add_", [](Tensor& t, int64_t dim, const Tensor& index,
                             const Tensor& src) -> Tensor& {
    return tessera::scatter_add_(t, dim, index, src);
  }, "dim"_a, "index"_a, "src"_a, ReleaseGil());

  const char* scatter_reduce_doc =
      "A copy of input with src[i][j] folded into input[index[i][j]][j] for dim 0 (and so on) "
      "by reduce: 'sum', 'prod', 'mean', 'amax' or 'amin', in row-major order of index. "
      "include_self=False leaves input's own value out of every position index names.";
  m.def("scatter_reduce", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                             const std::string& reduce, bool include_self, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::scatter_reduce_out(*out, t, dim, index, src, reduce, include_self)
                 : tessera::scatter_reduce(t, dim, index, src, reduce, include_self);
    });
  }, "input"_a, "dim"_a, "index"_a, "src"_a, "reduce"_a, py::kw_only(), "include_self"_a = true,
     "out"_a = py::none(), scatter_reduce_doc);
  cls.def("scatter_reduce", [](const Tensor& t, int64_t dim, const Tensor& index,
                               const Tensor& src, const std::string& reduce, bool include_self) {
    return tessera::scatter_reduce(t, dim, index, src, reduce, include_self);
  }, "dim"_a, "index"_a, "src"_a, "reduce"_a, py::kw_only(), "include_self"_a = true,
     ReleaseGil(), scatter_reduce_doc);
  cls.def("scatter_reduce_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
                                const std::string& reduce, bool include_self) -> Tensor& {
    return tessera::scatter_reduce_(t, dim, index, src, reduce, include_self);
  }, "dim"_a, "index"_a, "src"_a, "reduce"_a, py::kw_only(), "include_self"_a = true,
     ReleaseGil());

  const char* index_reduce_doc =
      "input with source's slices along dim folded into its slices index[i] (1-d) by reduce: "
      "'prod', 'mean', 'amax' or 'amin'. include_self=False leaves input's own slices out "
      "where index names them.";
  m.def("index_reduce", [](const Tensor& t, int64_t dim, const Tensor& index,
                           const Tensor& source, const std::string& reduce, bool include_self,
                           Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::index_reduce_out(*out, t, dim, index, source, reduce, include_self)
                 : tessera::index_reduce(t, dim, index, source, reduce, include_self);
    });
  }, "input"_a, "dim"_a, "index"_a, "source"_a, "reduce"_a, py::kw_only(),
     "include_self"_a = true, "out"_a = py::none(), index_reduce_doc);
  cls.def("index_reduce", [](const Tensor& t, int64_t dim, const Tensor& index,
                             const Tensor& source, const std::string& reduce, bool include_self) {
    return tessera::index_reduce(t, dim, index, source, reduce, include_self);
  }, "dim"_a, "index"_a, "source"_a, "reduce"_a, py::kw_only(), "include_self"_a = true,
     ReleaseGil(), index_reduce_doc);
  cls.def("index_reduce_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
                              const std::string& reduce, bool include_self) -> Tensor& {
    return tessera::index_reduce_(t, dim, index, source, reduce, include_self);
  }, "dim"_a, "index"_a, "source"_a, "reduce"_a, py::kw_only(), "include_self"_a = true,
     ReleaseGil());

  // index_add, index_copy, index_fill (runtime/ops/indexing_along_dim.cc).
  const char* index_add_doc = "input with alpha * source's slices added along dim at index "
                              "(1-d); repeated indices accumulate.";
  m.def("index_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
                        Scalar alpha, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::index_add_out(*out, t, dim, index, source, alpha)
                 : tessera::index_add(t, dim, index, source, alpha);
    });
  }, "input"_a, "dim"_a, "index"_a, "source"_a, py::kw_only(), "alpha"_a = 1,
     "out"_a = py::none(), index_add_doc);
  cls.def("index_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
                          Scalar alpha) {
    return tessera::index_add(t, dim, index, source, alpha);
  }, "dim"_a, "index"_a, "source"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil(), index_add_doc);
  cls.def("index_add_", [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
                           Scalar alpha) -> Tensor& {
    return tessera::index_add_(t, dim, index, source, alpha);
  }, "dim"_a, "index"_a, "source"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());

  const char* index_copy_doc = "input with its slices along dim at index (1-d) replaced by "
                               "source's, in order.";
  m.def("index_copy", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
                         Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::index_copy_out(*out, t, dim, index, source)
                 : tessera::index_copy(t, dim, index, source);
    });
  }, "input"_a, "dim"_a, "index"_a, "source"_a, py::kw_only(), "out"_a = py::none(),
     index_copy_doc);
  cls.def("index_copy", [](const Tensor& t, int64_t dim, const Tensor& index,
                           const Tensor& source) {
    return tessera::index_copy(t, dim, index, source);
  }, "dim"_a, "index"_a, "source"_a, ReleaseGil(), index_copy_doc);
  cls.def("index_copy_", [](Tensor& t, int64_t dim, const Tensor& index,
                            const Tensor& source) -> Tensor& {
    return tessera::index_copy_(t, dim, index, source);
  }, "dim"_a, "index"_a, "source"_a, ReleaseGil());

  const char* index_fill_doc = "input with its slices along dim at index (1-d) set to value.";
  auto def_index_fill = [&](auto value_type) {
    using Value = decltype(value_type);
    auto fill_ = [](Tensor& t, int64_t dim, const Tensor& index, const Value& value) -> Tensor& {
      if constexpr (std::is_same_v<Value, Tensor>) {
        return index_fill_tensor_(t, dim, index, value);
      } else {
        return tessera::index_fill_(t, dim, index, value);
      }
    };
    auto fill = [fill_](const Tensor& t, int64_t dim, const Tensor& index, const Value& value) {
      Tensor r = t.clone();
      return fill_(r, dim, index, value);
    };
    m.def("index_fill", fill, "input"_a, "dim"_a, "index"_a, "value"_a, ReleaseGil(),
          index_fill_doc);
    cls.def("index_fill", fill, "dim"_a, "index"_a, "value"_a, ReleaseGil(), index_fill_doc);
    cls.def("index_fill_", fill_, "dim"_a, "index"_a, "value"_a, ReleaseGil());
  };
  def_index_fill(Tensor());
  def_index_fill(Scalar());

  const char* index_put_doc =
      "input[indices] = values (values += with accumulate): indices is a tuple of integer or bool "
      "tensors, None for a whole dim; values has input's dtype.";
  m.def("index_put", [](const Tensor& t, const OptionalIndices& indices, const Tensor& values,
                        bool accumulate) {
    Tensor r = t.clone();
    return index_put_with_slices(r, indices, values, accumulate);
  }, "input"_a, "indices"_a, "values"_a, "accumulate"_a = false, ReleaseGil(), index_put_doc);
  cls.def("index_put", [](const Tensor& t, const OptionalIndices& indices, const Tensor& values,
                          bool accumulate) {
    Tensor r = t.clone();
    return index_put_with_slices(r, indices, values, accumulate);
  }, "indices"_a, "values"_a, "accumulate"_a = false, ReleaseGil(), index_put_doc);
  cls.def("index_put_", [](Tensor& t, const OptionalIndices& indices, const Tensor& values,
                           bool accumulate) -> Tensor& {
    return index_put_with_slices(t, indices, values, accumulate);
  }, "indices"_a, "values"_a, "accumulate"_a = false,
          ReleaseGil());
}

void register_masked(py::module_& m, TensorClass& cls) {
  const char* masked_fill_doc = "input with value where mask (bool, broadcast) is true; value a "
                                "number or a 0-d tensor.";
  auto def_masked_fill = [&](auto value_type) {
    using Value = decltype(value_type);
    auto fill = [](const Tensor& t, const Tensor& mask, const Value& value) {
      return tessera::masked_fill(t, mask, value);
    };
    m.def("masked_fill", fill, "input"_a, "mask"_a, "value"_a, ReleaseGil(), masked_fill_doc);
    cls.def("masked_fill", fill, "mask"_a, "value"_a, ReleaseGil(), masked_fill_doc);
    cls.def("masked_fill_", [](Tensor& t, const Tensor& mask, const Value& value) -> Tensor& {
      return tessera::masked_fill_(t, mask, value);
    }, "mask"_a, "value"_a, ReleaseGil());
  };
  def_masked_fill(Tensor());
  def_masked_fill(Scalar());

  m.def("masked_select", [](const Tensor& t, const Tensor& mask, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::masked_select_out(*out, t, mask) : tessera::masked_select(t, mask);
    });
  }, "input"_a, "mask"_a, py::kw_only(), "out"_a = py::none(),
     "The elements of input (broadcast with mask) where mask is true, as a 1-d tensor.");
  cls.def("masked_select", &tessera::masked_select, "mask"_a, ReleaseGil());

  const char* masked_scatter_doc =
      "input with the positions where mask is true taking source's elements in row-major order.";
  m.def("masked_scatter", &tessera::masked_scatter, "input"_a, "mask"_a, "source"_a, ReleaseGil(),
        masked_scatter_doc);
  cls.def("masked_scatter", &tessera::masked_scatter, "mask"_a, "source"_a, ReleaseGil(),
          masked_scatter_doc);
  cls.def("masked_scatter_", &tessera::masked_scatter_, "mask"_a, "source"_a, ReleaseGil());

  auto nonzero = [](const Tensor& t, Tensor* out, bool as_tuple) -> py::object {
    if (as_tuple) {
      if (out != nullptr) {
        throw py::type_error("nonzero(): out= is not supported with as_tuple=True");
      }
      return tensor_tuple([&] { return nonzero_columns(t); });
    }
    return tensor_or_out(out, [&] {
      return out ? tessera::nonzero_out(*out, t) : tessera::nonzero(t);
    });
  };
  const char* nonzero_doc = "The indices of the nonzero elements, [count, input.dim()] (int64); "
                            "with as_tuple, one 1-d tensor per dim.";
  m.def("nonzero", nonzero, "input"_a, py::kw_only(), "out"_a = py::none(), "as_tuple"_a = false,
        nonzero_doc);
  cls.def("nonzero", [nonzero](const Tensor& t, bool as_tuple) {
    return nonzero(t, nullptr, as_tuple);
  }, py::kw_only(), "as_tuple"_a = false, nonzero_doc);
  m.def("argwhere", &tessera::nonzero, "input"_a, ReleaseGil(), "nonzero(input).");
  cls.def("argwhere", &tessera::nonzero, ReleaseGil());
  // where(condition, input, other) is in ops_pointwise.cc.
  m.def("where", [](const Tensor& condition) {
    return tensor_tuple([&] { return nonzero_columns(condition); });
  }, "condition"_a, "nonzero(condition, as_tuple=True).");
}

}  // namespace

void register_gather_scatter_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  register_gathers(m, cls);
  register_scatters(m, cls);
  register_masked(m, cls);
}

}  // namespace tessera_py
