// Shape and indexing ops (runtime/ops/indexing_ops.h) as tessera.<name> and
// Tensor methods with PyTorch's names and keywords: joining and splitting
// (cat, stack, split, chunk, unbind, tensor_split), rearranging (flip,
// roll, repeat, tile, constant_pad_nd), tril/triu, and sorting (sort,
// argsort, msort, topk, unique, unique_consecutive). Splits return tuples
// of views, as PyTorch's. Gathers and scatters are in
// ops_gather_scatter.cc, Tensor.__getitem__/__setitem__ in
// tensor_indexing.cc; the header's creation and random ops are in
// creation.cc, dropout and one_hot in tessera.nn.functional.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/results.h"
#include "bindings/csrc/shape_args.h"
#include "bindings/csrc/tensor_indexing.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;
using TensorList = std::vector<Tensor>;

// -- Splitting (views of the input).

TensorList unbind(const Tensor& t, int64_t dim) {
  TESSERA_CHECK(t.dim() > 0, IndexError, "unbind: a 0-d tensor has no dim to unbind");
  const int64_t d = tessera::wrap_dim(dim, t.dim(), "unbind");
  TensorList out;
  for (int64_t i = 0; i < t.size(d); ++i) out.push_back(t.select(d, i));
  return out;
}

// dim of t wrapped; t must have a dim to split.
int64_t tensor_split_dim(const Tensor& t, int64_t dim) {
  TESSERA_CHECK(t.dim() > 0, ValueError, "tensor_split: expected a tensor of at least 1 dim, got ",
                tessera::describe(t));
  return tessera::wrap_dim(dim, t.dim(), "tensor_split");
}

// torch.tensor_split by a number of sections: the first size % sections
// parts are one longer than the others.
TensorList tensor_split_sections(const Tensor& t, int64_t sections, int64_t dim) {
  TESSERA_CHECK(sections > 0, ValueError,
                "tensor_split: number of sections must be larger than 0, got ", sections);
  const int64_t d = tensor_split_dim(t, dim);
  const int64_t n = t.size(d);
  TensorList out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = n / sections + (i < n % sections ? 1 : 0);
    out.push_back(t.slice(d, start, start + length));
    start += length;
  }
  return out;
}

// torch.tensor_split at indices: [:i0], [i0:i1], ..., [ik:], each clamped
// as a Python slice.
TensorList tensor_split_indices(const Tensor& t, const Shape& indices, int64_t dim) {
  const int64_t d = tensor_split_dim(t, dim);
  TensorList out;
  std::optional<int64_t> start = 0;
  for (int64_t index : indices) {
    out.push_back(t.slice(d, start, index));
    start = index;
  }
  out.push_back(t.slice(d, start, std::nullopt));
  return out;
}

// A tensor of split points: a 0-d one is a number of sections, a 1-d one
// the indices.
TensorList tensor_split_tensor(const Tensor& t, const Tensor& points, int64_t dim) {
  TESSERA_CHECK(points.dtype() == DType::kI64, TypeError,
                "tensor_split: tensor_indices_or_sections must be an int64 tensor, got ",
                tessera::describe(points));
  TESSERA_CHECK(points.dim() <= 1, ValueError,
                "tensor_split: tensor_indices_or_sections must be a 0-d or 1-d tensor, got ",
                tessera::describe(points));
  if (points.dim() == 0) return tensor_split_sections(t, points.item<int64_t>(), dim);
  const std::vector<int64_t> values = points.to_vector<int64_t>();
  return tensor_split_indices(t, Shape(values.begin(), values.end()), dim);
}

// -- Rearranging.

Tensor flip_dim(const Tensor& t, int64_t dim, int64_t min_dims, const char* op) {
  TESSERA_CHECK(t.dim() >= min_dims, ValueError, op, ": input must be >= ", min_dims, "-d, got ",
                tessera::describe(t));
  return tessera::flip(t, {dim});
}

// torch.tile: repeat with dims padded with leading 1s to the input's rank.
Tensor tile(const Tensor& t, const Shape& dims) {
  Shape repeats = dims;
  while (static_cast<int64_t>(repeats.size()) < t.dim()) repeats.insert(repeats.begin(), 1);
  return tessera::repeat(t, repeats);
}

// -- Uniqueness.

struct UniqueResult {
  Tensor values, inverse, counts;
};

// The runs of equal neighbours of `ordered` (1-d): each run's value, each
// input element's run (ordered[i] is input element order[i], or element i
// without an order), and each run's length.
UniqueResult unique_runs(const Tensor& ordered, const Tensor& order, const Shape& input_sizes) {
  const TensorOptions index_options(DType::kI64, ordered.device());
  const int64_t n = ordered.numel();
  if (n == 0) {
    return {ordered, tessera::empty(input_sizes, index_options),
            tessera::empty({0}, index_options)};
  }
  Tensor starts = tessera::empty({n}, TensorOptions(DType::kBool, ordered.device()));
  starts.narrow(0, 0, 1).fill_(true);
  if (n > 1) {
    starts.narrow(0, 1, n - 1)
        .copy_(tessera::ne(ordered.narrow(0, 1, n - 1), ordered.narrow(0, 0, n - 1)));
  }
  UniqueResult r;
  r.values = tessera::masked_select(ordered, starts);
  const Tensor run = tessera::sub(tessera::cumsum(starts, 0, DType::kI64), Scalar(1));
  if (order.defined()) {
    Tensor inverse = tessera::empty({n}, index_options);
    r.inverse = tessera::scatter_(inverse, 0, order, run).view(input_sizes);
  } else {
    r.inverse = run.view(input_sizes);
  }
  Tensor counts = tessera::zeros({r.values.numel()}, index_options);
  r.counts = tessera::scatter_add_(counts, 0, run, tessera::ones({n}, index_options));
  return r;
}

// torch.unique's result: the values alone, or a tuple with the inverse
// and/or the counts.
py::object unique_result(const UniqueResult& r, bool return_inverse, bool return_counts) {
  if (!return_inverse && !return_counts) return py::cast(r.values);
  py::list out;
  out.append(py::cast(r.values));
  if (return_inverse) out.append(py::cast(r.inverse));
  if (return_counts) out.append(py::cast(r.counts));
  return py::tuple(out);
}

std::tuple<Tensor, Tensor> as_tuple(std::pair<Tensor, Tensor> p) {
  return {std::move(p.first), std::move(p.second)};
}

void register_join_split(py::module_& m, TensorClass& cls) {
  auto cat = [](const TensorListArg& tensors, int64_t dim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::cat_out(*out, tensors, dim) : tessera::cat(tensors, dim);
    });
  };
  const char* cat_doc = "The tensors (of one device; dtypes promote) joined along an existing dim.";
  for (const char* name : {"cat", "concat"}) {
    m.def(name, cat, "tensors"_a, "dim"_a = 0, py::kw_only(), "out"_a = py::none(), cat_doc);
  }
  m.def("concatenate", cat, "tensors"_a, "axis"_a = 0, py::kw_only(), "out"_a = py::none(),
        cat_doc);
  m.def("stack", [](const TensorListArg& tensors, int64_t dim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::stack_out(*out, tensors, dim) : tessera::stack(tensors, dim);
    });
  }, "tensors"_a, "dim"_a = 0, py::kw_only(), "out"_a = py::none(),
     "The tensors (of one shape) joined along a new dim.");

  const char* split_doc = "Views of pieces of split_size along dim (the last may be shorter), or "
                          "of the given sizes.";
  m.def("split", [](const Tensor& t, int64_t split_size, int64_t dim) {
    return tensor_tuple([&] { return tessera::split(t, split_size, dim); });
  }, "tensor"_a, "split_size_or_sections"_a, "dim"_a = 0, split_doc);
  m.def("split", [](const Tensor& t, const Shape& sections, int64_t dim) {
    return tensor_tuple([&] { return tessera::split(t, sections, dim); });
  }, "tensor"_a, "split_size_or_sections"_a, "dim"_a = 0);
  cls.def("split", [](const Tensor& t, int64_t split_size, int64_t dim) {
    return tensor_tuple([&] { return tessera::split(t, split_size, dim); });
  }, "split_size"_a, "dim"_a = 0, split_doc);
  cls.def("split", [](const Tensor& t, const Shape& sections, int64_t dim) {
    return tensor_tuple([&] { return tessera::split(t, sections, dim); });
  }, "split_size"_a, "dim"_a = 0);

  auto chunk = [](const Tensor& t, int64_t chunks, int64_t dim) {
    return tensor_tuple([&] { return tessera::chunk(t, chunks, dim); });
  };
  const char* chunk_doc = "At most `chunks` views of equal size along dim (the last may be "
                          "smaller).";
  m.def("chunk", chunk, "input"_a, "chunks"_a, "dim"_a = 0, chunk_doc);
  cls.def("chunk", chunk, "chunks"_a, "dim"_a = 0, chunk_doc);

  auto unbind_fn = [](const Tensor& t, int64_t dim) {
    return tensor_tuple([&] { return unbind(t, dim); });
  };
  m.def("unbind", unbind_fn, "input"_a, "dim"_a = 0, "The views t.select(dim, i) for each i.");
  cls.def("unbind", unbind_fn, "dim"_a = 0);

  // The Tensor overload first: a tensor is not a list of ints.
  auto split_by_tensor = [](const Tensor& t, const Tensor& points, int64_t dim) {
    return tensor_tuple([&] { return tensor_split_tensor(t, points, dim); });
  };
  auto split_sections = [](const Tensor& t, int64_t sections, int64_t dim) {
    return tensor_tuple([&] { return tensor_split_sections(t, sections, dim); });
  };
  auto split_indices = [](const Tensor& t, const Shape& indices, int64_t dim) {
    return tensor_tuple([&] { return tensor_split_indices(t, indices, dim); });
  };
  const char* tensor_split_doc =
      "Views: `sections` parts of near-equal size (the first size % sections one longer), or the "
      "parts between the given indices.";
  m.def("tensor_split", split_by_tensor, "input"_a, "indices_or_sections"_a, "dim"_a = 0,
        tensor_split_doc);
  m.def("tensor_split", split_sections, "input"_a, "indices_or_sections"_a, "dim"_a = 0);
  m.def("tensor_split", split_indices, "input"_a, "indices_or_sections"_a, "dim"_a = 0);
  cls.def("tensor_split", split_by_tensor, "indices_or_sections"_a, "dim"_a = 0, tensor_split_doc);
  cls.def("tensor_split", split_sections, "indices_or_sections"_a, "dim"_a = 0);
  cls.def("tensor_split", split_indices, "indices_or_sections"_a, "dim"_a = 0);
}

void register_rearrange(py::module_& m, TensorClass& cls) {
  m.def("flip", [](const Tensor& t, const Shape& dims) { return tessera::flip(t, dims); },
        "input"_a, "dims"_a, ReleaseGil(), "A copy with the order of the elements along dims "
        "reversed.");
  cls.def("flip", [](const Tensor& t, const py::args& dims) {
    const Shape d = shape_from_args(dims, "flip");
    py::gil_scoped_release release;
    return tessera::flip(t, d);
  });
  auto fliplr = [](const Tensor& t) { return flip_dim(t, 1, 2, "fliplr"); };
  auto flipud = [](const Tensor& t) { return flip_dim(t, 0, 1, "flipud"); };
  m.def("fliplr", fliplr, "input"_a, ReleaseGil(), "flip(input, [1]) of an input of >= 2 dims.");
  m.def("flipud", flipud, "input"_a, ReleaseGil(), "flip(input, [0]) of an input of >= 1 dim.");
  cls.def("fliplr", fliplr, ReleaseGil());
  cls.def("flipud", flipud, ReleaseGil());

  auto roll = [](const Tensor& t, const Shape& shifts, const std::optional<Shape>& dims) {
    return tessera::roll(t, shifts, dims.value_or(Shape{}));
  };
  const char* roll_doc = "Elements shifted along dims (wrapping around); without dims, along the "
                         "flattened tensor.";
  m.def("roll", roll, "input"_a, "shifts"_a, "dims"_a = py::none(), ReleaseGil(), roll_doc);
  cls.def("roll", roll, "shifts"_a, "dims"_a = py::none(), ReleaseGil(), roll_doc);

  cls.def("repeat", [](const Tensor& t, const py::args& repeats) {
    const Shape r = shape_from_args(repeats, "repeat");
    py::gil_scoped_release release;
    return tessera::repeat(t, r);
  }, "The tensor tiled repeats[i] times along dim i (extra repeats add leading dims).");
  m.def("tile", &tile, "input"_a, "dims"_a, ReleaseGil(),
        "repeat() with dims padded with leading 1s to the input's number of dims.");
  cls.def("tile", [](const Tensor& t, const py::args& dims) {
    const Shape d = shape_from_args(dims, "tile");
    py::gil_scoped_release release;
    return tile(t, d);
  });
  m.def("constant_pad_nd", &tessera::constant_pad, "input"_a, "pad"_a, "value"_a = 0,
        ReleaseGil(), "Pads with value: pad holds (before, after) pairs from the last dim "
        "backwards; negative amounts crop.");

  using Triangle = Tensor (*)(const Tensor&, int64_t);
  using TriangleOut = Tensor& (*)(Tensor&, const Tensor&, int64_t);
  using TriangleInPlace = Tensor& (*)(Tensor&, int64_t);
  auto def_triangle = [&](const char* name, Triangle op, TriangleOut op_out,
                          TriangleInPlace op_, const char* doc) {
    m.def(name, [op, op_out](const Tensor& t, int64_t diagonal, Tensor* out) {
      return tensor_or_out(out, [&] { return out ? op_out(*out, t, diagonal) : op(t, diagonal); });
    }, "input"_a, "diagonal"_a = 0, py::kw_only(), "out"_a = py::none(), doc);
    cls.def(name, op, "diagonal"_a = 0, ReleaseGil(), doc);
    cls.def((std::string(name) + "_").c_str(), op_, "diagonal"_a = 0, ReleaseGil());
  };
  def_triangle("tril", &tessera::tril, &tessera::tril_out, &tessera::tril_,
               "The last two dims' lower triangle (on and below `diagonal`), zeros elsewhere.");
  def_triangle("triu", &tessera::triu, &tessera::triu_out, &tessera::triu_,
               "The last two dims' upper triangle (on and above `diagonal`), zeros elsewhere.");
}

void register_sorting(py::module_& m, TensorClass& cls) {
  const py::object sort_type = return_type(m, "sort", {"values", "indices"});
  const py::object topk_type = return_type(m, "topk", {"values", "indices"});

  m.def("sort", [sort_type](const Tensor& t, int64_t dim, bool descending, bool stable,
                            const py::object& out) {
    return pair_result_or_out(sort_type, out, "sort", "values, indices", [&] {
      return as_tuple(tessera::sort(t, dim, descending, stable));
    }, [&](Tensor& values, Tensor& indices) {
      tessera::sort_out(values, indices, t, dim, descending, stable);
    });
  }, "input"_a, "dim"_a = -1, "descending"_a = false, "stable"_a = false, py::kw_only(),
     "out"_a = py::none(),
     "(values, indices) sorted along dim; stable keeps the order of equal elements.");
  cls.def("sort", [sort_type](const Tensor& t, int64_t dim, bool descending, bool stable) {
    return pair_result(sort_type,
                       [&] { return as_tuple(tessera::sort(t, dim, descending, stable)); });
  }, "dim"_a = -1, "descending"_a = false, "stable"_a = false);

  auto argsort = [](const Tensor& t, int64_t dim, bool descending, bool stable) {
    return tessera::argsort(t, dim, descending, stable);
  };
  m.def("argsort", argsort, "input"_a, "dim"_a = -1, "descending"_a = false, "stable"_a = false,
        ReleaseGil(), "The indices that sort input along dim.");
  cls.def("argsort", argsort, "dim"_a = -1, "descending"_a = false, "stable"_a = false,
          ReleaseGil());
  auto msort = [](const Tensor& t) { return tessera::sort(t, 0).first; };
  m.def("msort", msort, "input"_a, ReleaseGil(), "The values sorted along dim 0.");
  cls.def("msort", msort, ReleaseGil());

  auto topk_run = [](const Tensor& t, int64_t k, std::optional<int64_t> dim, bool largest,
                     bool sorted) {
    return as_tuple(tessera::topk(t, k, dim.value_or(-1), largest, sorted));
  };
  m.def("topk", [topk_type, topk_run](const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                      bool largest, bool sorted, const py::object& out) {
    return pair_result_or_out(topk_type, out, "topk", "values, indices", [&] {
      return topk_run(t, k, dim, largest, sorted);
    }, [&](Tensor& values, Tensor& indices) {
      tessera::topk_out(values, indices, t, k, dim.value_or(-1), largest, sorted);
    });
  }, "input"_a, "k"_a, "dim"_a = py::none(), "largest"_a = true, "sorted"_a = true,
     py::kw_only(), "out"_a = py::none(),
     "(values, indices) of the k largest (or smallest) elements along dim (default: the last), "
     "always in sorted order.");
  cls.def("topk", [topk_type, topk_run](const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                        bool largest, bool sorted) {
    return pair_result(topk_type, [&] { return topk_run(t, k, dim, largest, sorted); });
  }, "k"_a, "dim"_a = py::none(), "largest"_a = true, "sorted"_a = true);

  auto unique = [](const Tensor& t, bool sorted, bool return_inverse, bool return_counts) {
    (void)sorted;  // always sorted, which PyTorch allows for sorted=False
    UniqueResult r;
    {
      py::gil_scoped_release release;
      const auto [values, order] = tessera::sort(t.reshape({-1}), 0);
      r = unique_runs(values, order, t.sizes());
    }
    return unique_result(r, return_inverse, return_counts);
  };
  const char* unique_doc =
      "The distinct elements of the flattened input, sorted; with return_inverse also each "
      "element's index in them (input's shape), with return_counts how often each occurs.";
  m.def("unique", unique, "input"_a, "sorted"_a = true, "return_inverse"_a = false,
        "return_counts"_a = false, unique_doc);
  cls.def("unique", unique, "sorted"_a = true, "return_inverse"_a = false,
          "return_counts"_a = false, unique_doc);
  auto unique_consecutive = [](const Tensor& t, bool return_inverse, bool return_counts) {
    UniqueResult r;
    {
      py::gil_scoped_release release;
      r = unique_runs(t.reshape({-1}), Tensor(), t.sizes());
    }
    return unique_result(r, return_inverse, return_counts);
  };
  const char* consecutive_doc =
      "The flattened input with each run of equal neighbours reduced to one element; "
      "return_inverse and return_counts as unique().";
  m.def("unique_consecutive", unique_consecutive, "input"_a, "return_inverse"_a = false,
        "return_counts"_a = false, consecutive_doc);
  cls.def("unique_consecutive", unique_consecutive, "return_inverse"_a = false,
          "return_counts"_a = false, consecutive_doc);
}

}  // namespace

void register_indexing_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  register_join_split(m, cls);
  register_rearrange(m, cls);
  register_sorting(m, cls);
  register_gather_scatter_ops(m);
  register_tensor_indexing(m);
}

}  // namespace tessera_py
