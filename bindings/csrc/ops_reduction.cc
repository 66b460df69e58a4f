// Reductions, scans, order statistics and softmax (runtime/ops/reduction_ops.h,
// with sum and mean from ops.h) as tessera.<name> and Tensor methods, with
// PyTorch's signatures: `dim` an int or a sequence of ints (None: every dim),
// `keepdim`, keyword-only `dtype` and `out`. Ops with two results (max and
// min over a dim, aminmax, cummax, cummin, kthvalue, median over a dim)
// return a tessera.return_types.<op>. The header's normalizations
// (layer_norm, rms_norm, batch_norm and their backward) belong to
// tessera.nn.functional (ops_nn.cc).
#include <optional>
#include <string>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/results.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_ops.h"
#include "runtime/ops/reduction_ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Shape;
using tessera::Tensor;
using OptDims = std::optional<Shape>;
using OptDType = std::optional<DType>;

// dim=None reduces every dim: the runtime's empty list.
Shape dims_of(const OptDims& dim) { return dim.value_or(Shape{}); }

// -- Reductions over dims: sum, mean, nansum (with a dtype), amax, amin,
// all, any (without).

using DTypeReduction = Tensor (*)(const Tensor&, const Shape&, bool, OptDType);
using DTypeReductionOut = Tensor& (*)(Tensor&, const Tensor&, const Shape&, bool, OptDType);

void def_dtype_reduction(py::module_& m, TensorClass& cls, const char* name, DTypeReduction op,
                         DTypeReductionOut op_out, const char* doc) {
  m.def(name, [op, op_out](const Tensor& t, const OptDims& dim, bool keepdim, OptDType dtype,
                           Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? op_out(*out, t, dims_of(dim), keepdim, dtype)
                 : op(t, dims_of(dim), keepdim, dtype);
    });
  }, "input"_a, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none(),
     "out"_a = py::none(), doc);
  cls.def(name, [op](const Tensor& t, const OptDims& dim, bool keepdim, OptDType dtype) {
    return op(t, dims_of(dim), keepdim, dtype);
  }, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none(),
     ReleaseGil(), doc);
}

using Reduction = Tensor (*)(const Tensor&, const Shape&, bool);
using ReductionOut = Tensor& (*)(Tensor&, const Tensor&, const Shape&, bool);

void def_reduction(py::module_& m, TensorClass& cls, const char* name, Reduction op,
                   ReductionOut op_out, const char* doc) {
  m.def(name, [op, op_out](const Tensor& t, const OptDims& dim, bool keepdim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? op_out(*out, t, dims_of(dim), keepdim) : op(t, dims_of(dim), keepdim);
    });
  }, "input"_a, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(), "out"_a = py::none(),
     doc);
  cls.def(name, [op](const Tensor& t, const OptDims& dim, bool keepdim) {
    return op(t, dims_of(dim), keepdim);
  }, "dim"_a = py::none(), "keepdim"_a = false, ReleaseGil(), doc);
}

// -- var and std: PyTorch's two spellings of the divisor's correction.

// unbiased (True: N - 1, False: N) or correction (N - correction); not both.
double correction_of(const char* op, std::optional<bool> unbiased,
                     std::optional<double> correction) {
  if (unbiased && correction) {
    throw py::type_error(std::string(op) + "(): pass either unbiased or correction, not both");
  }
  if (correction) return *correction;
  return unbiased.value_or(true) ? 1.0 : 0.0;
}

using VarStd = Tensor (*)(const Tensor&, const Shape&, double, bool);
using VarStdOut = Tensor& (*)(Tensor&, const Tensor&, const Shape&, double, bool);

void def_var_std(py::module_& m, TensorClass& cls, const char* name, VarStd op, VarStdOut op_out,
                 const char* doc) {
  m.def(name, [op, op_out, name](const Tensor& t, const OptDims& dim, std::optional<bool> unbiased,
                                 bool keepdim, std::optional<double> correction, Tensor* out) {
    const double c = correction_of(name, unbiased, correction);
    return tensor_or_out(out, [&] {
      return out ? op_out(*out, t, dims_of(dim), c, keepdim) : op(t, dims_of(dim), c, keepdim);
    });
  }, "input"_a, "dim"_a = py::none(), "unbiased"_a = py::none(), "keepdim"_a = false,
     py::kw_only(), "correction"_a = py::none(), "out"_a = py::none(), doc);
  // var(input, unbiased): a bool where dim would be.
  m.def(name, [op](const Tensor& t, bool unbiased) {
    return op(t, {}, unbiased ? 1.0 : 0.0, false);
  }, "input"_a, "unbiased"_a, ReleaseGil());
  cls.def(name, [op, name](const Tensor& t, const OptDims& dim, std::optional<bool> unbiased,
                           bool keepdim, std::optional<double> correction) {
    const double c = correction_of(name, unbiased, correction);
    py::gil_scoped_release release;
    return op(t, dims_of(dim), c, keepdim);
  }, "dim"_a = py::none(), "unbiased"_a = py::none(), "keepdim"_a = false, py::kw_only(),
     "correction"_a = py::none(), doc);
  cls.def(name, [op](const Tensor& t, bool unbiased) {
    return op(t, {}, unbiased ? 1.0 : 0.0, false);
  }, "unbiased"_a, ReleaseGil());
}

// norm's p as a string: "fro" is the 2-norm over the dims.
double norm_order(const std::string& p) {
  if (p == "fro") return 2.0;
  throw py::value_error("norm(): p='" + p + "' is not supported (a number or 'fro')");
}

void register_sums_and_extrema(py::module_& m, TensorClass& cls) {
  def_dtype_reduction(m, cls, "sum", &tessera::sum, &tessera::sum_out,
                      "Sum over dim (every dim when None); bool and integer inputs give int64 "
                      "unless dtype says otherwise.");
  def_dtype_reduction(m, cls, "mean", &tessera::mean, &tessera::mean_out,
                      "Mean over dim (every dim when None); needs a floating input or dtype.");
  def_dtype_reduction(m, cls, "nansum", &tessera::nansum, &tessera::nansum_out,
                      "sum counting NaN as zero.");
  def_reduction(m, cls, "amax", &tessera::amax, &tessera::amax_out,
                "Maximum over dim (every dim when None); NaN propagates.");
  def_reduction(m, cls, "amin", &tessera::amin, &tessera::amin_out,
                "Minimum over dim (every dim when None); NaN propagates.");
  def_reduction(m, cls, "all", &tessera::all, &tessera::all_out,
                "Whether every element over dim is nonzero: bool (uint8 for uint8 input).");
  def_reduction(m, cls, "any", &tessera::any, &tessera::any_out,
                "Whether any element over dim is nonzero: bool (uint8 for uint8 input).");

  // prod: over everything, or over one dim.
  const char* prod_doc = "Product over every element or one dim; bool and integer inputs give "
                         "int64 unless dtype says otherwise.";
  m.def("prod", [](const Tensor& t, OptDType dtype) { return tessera::prod(t, dtype); }, "input"_a,
        py::kw_only(), "dtype"_a = py::none(), ReleaseGil(), prod_doc);
  m.def("prod", [](const Tensor& t, int64_t dim, bool keepdim, OptDType dtype, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::prod_out(*out, t, dim, keepdim, dtype)
                 : tessera::prod(t, dim, keepdim, dtype);
    });
  }, "input"_a, "dim"_a, "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none(),
     "out"_a = py::none());
  cls.def("prod", [](const Tensor& t, OptDType dtype) { return tessera::prod(t, dtype); },
          py::kw_only(), "dtype"_a = py::none(), ReleaseGil(), prod_doc);
  cls.def("prod", [](const Tensor& t, int64_t dim, bool keepdim, OptDType dtype) {
    return tessera::prod(t, dim, keepdim, dtype);
  }, "dim"_a, "keepdim"_a = false, py::kw_only(), "dtype"_a = py::none(), ReleaseGil());

  // max / min: of everything; elementwise with other (maximum / minimum);
  // over one dim as (values, indices). The Tensor overload comes before
  // the dim one and takes out as an object, so that it matches in
  // pybind11's first pass: a one-element integer tensor would otherwise
  // load as the dim (through __index__).
  for (const bool is_max : {true, false}) {
    const char* name = is_max ? "max" : "min";
    py::object type = return_type(m, name, {"values", "indices"});
    auto whole = [is_max](const Tensor& t) { return is_max ? tessera::max(t) : tessera::min(t); };
    auto elementwise = [is_max](const Tensor& a, const Tensor& b) {
      return is_max ? tessera::maximum(a, b) : tessera::minimum(a, b);
    };
    auto elementwise_out = [is_max](Tensor& out, const Tensor& a, const Tensor& b) -> Tensor& {
      return is_max ? tessera::maximum_out(out, a, b) : tessera::minimum_out(out, a, b);
    };
    auto over_dim = [is_max](const Tensor& t, int64_t dim, bool keepdim) {
      return is_max ? tessera::max(t, dim, keepdim) : tessera::min(t, dim, keepdim);
    };
    m.def(name, whole, "input"_a, ReleaseGil(),
          is_max ? "max(input): the largest element (NaN if any); max(input, other): "
                   "elementwise maximum; max(input, dim, keepdim=False): (values, indices) "
                   "with the index of the first maximum."
                 : "min(input): the smallest element (NaN if any); min(input, other): "
                   "elementwise minimum; min(input, dim, keepdim=False): (values, indices) "
                   "with the index of the first minimum.");
    m.def(name, [elementwise, elementwise_out, name](const Tensor& a, const Tensor& b,
                                                     const py::object& out_arg) {
      Tensor* out = out_tensor(out_arg, name);
      return tensor_or_out(out, [&] {
        return out ? elementwise_out(*out, a, b) : elementwise(a, b);
      });
    }, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none());
    m.def(name, [type, over_dim, is_max, name](const Tensor& t, int64_t dim, bool keepdim,
                                               const py::object& out) {
      return pair_result_or_out(type, out, name, "values, indices",
                                [&] { return over_dim(t, dim, keepdim); },
                                [&](Tensor& values, Tensor& indices) {
        if (is_max) {
          tessera::max_out(values, indices, t, dim, keepdim);
        } else {
          tessera::min_out(values, indices, t, dim, keepdim);
        }
      });
    }, "input"_a, "dim"_a, "keepdim"_a = false, py::kw_only(), "out"_a = py::none());
    cls.def(name, whole, ReleaseGil());
    cls.def(name, elementwise, "other"_a, ReleaseGil());
    cls.def(name, [type, over_dim](const Tensor& t, int64_t dim, bool keepdim) {
      return pair_result(type, [&] { return over_dim(t, dim, keepdim); });
    }, "dim"_a, "keepdim"_a = false);
  }

  // aminmax: (min, max) in one pass; dim is keyword-only, as PyTorch's.
  py::object aminmax_type = return_type(m, "aminmax", {"min", "max"});
  m.def("aminmax", [aminmax_type](const Tensor& t, std::optional<int64_t> dim, bool keepdim,
                                  const py::object& out) {
    return pair_result_or_out(aminmax_type, out, "aminmax", "min, max",
                              [&] { return tessera::aminmax(t, dim, keepdim); },
                              [&](Tensor& min, Tensor& max) {
      tessera::aminmax_out(min, max, t, dim, keepdim);
    });
  }, "input"_a, py::kw_only(), "dim"_a = py::none(), "keepdim"_a = false, "out"_a = py::none(),
     "(min, max) over dim, or over every element when dim is None.");
  cls.def("aminmax", [aminmax_type](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
    return pair_result(aminmax_type, [&] { return tessera::aminmax(t, dim, keepdim); });
  }, py::kw_only(), "dim"_a = py::none(), "keepdim"_a = false);

  const char* argmax_doc = "Index of the first maximum over dim (of the flattened input when "
                           "dim is None); NaN counts as the maximum.";
  const char* argmin_doc = "Index of the first minimum over dim (of the flattened input when "
                           "dim is None); NaN counts as the minimum.";
  m.def("argmax", &tessera::argmax, "input"_a, "dim"_a = py::none(), "keepdim"_a = false,
        ReleaseGil(), argmax_doc);
  m.def("argmin", &tessera::argmin, "input"_a, "dim"_a = py::none(), "keepdim"_a = false,
        ReleaseGil(), argmin_doc);
  cls.def("argmax", &tessera::argmax, "dim"_a = py::none(), "keepdim"_a = false, ReleaseGil(),
          argmax_doc);
  cls.def("argmin", &tessera::argmin, "dim"_a = py::none(), "keepdim"_a = false, ReleaseGil(),
          argmin_doc);
}

void register_statistics(py::module_& m, TensorClass& cls) {
  def_var_std(m, cls, "var", &tessera::var, &tessera::var_out,
              "Variance over dim (every dim when None) with divisor max(N - correction, 0); "
              "unbiased=False is correction=0. Floating inputs.");
  def_var_std(m, cls, "std", &tessera::std, &tessera::std_out,
              "Standard deviation over dim (every dim when None) with divisor "
              "max(N - correction, 0); unbiased=False is correction=0. Floating inputs.");

  const char* norm_doc = "Vector p-norm over dim (every element when None) of a floating "
                         "input; p a number (inf and -inf: max and min of |x|, 0: the count "
                         "of nonzeros) or 'fro' (2).";
  m.def("norm", [](const Tensor& t, double p, const OptDims& dim, bool keepdim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::norm_out(*out, t, p, dims_of(dim), keepdim)
                 : tessera::norm(t, p, dims_of(dim), keepdim);
    });
  }, "input"_a, "p"_a = 2.0, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(),
     "out"_a = py::none(), norm_doc);
  m.def("norm", [](const Tensor& t, const std::string& p, const OptDims& dim, bool keepdim,
                   Tensor* out) {
    const double order = norm_order(p);
    return tensor_or_out(out, [&] {
      return out ? tessera::norm_out(*out, t, order, dims_of(dim), keepdim)
                 : tessera::norm(t, order, dims_of(dim), keepdim);
    });
  }, "input"_a, "p"_a, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(),
     "out"_a = py::none());
  cls.def("norm", [](const Tensor& t, double p, const OptDims& dim, bool keepdim) {
    return tessera::norm(t, p, dims_of(dim), keepdim);
  }, "p"_a = 2.0, "dim"_a = py::none(), "keepdim"_a = false, ReleaseGil(), norm_doc);
  cls.def("norm", [](const Tensor& t, const std::string& p, const OptDims& dim, bool keepdim) {
    const double order = norm_order(p);
    py::gil_scoped_release release;
    return tessera::norm(t, order, dims_of(dim), keepdim);
  }, "p"_a, "dim"_a = py::none(), "keepdim"_a = false);

  const char* logsumexp_doc = "log(sum(exp(input))) over dim without overflow; integer and "
                              "bool inputs compute in float32.";
  m.def("logsumexp", [](const Tensor& t, const Shape& dim, bool keepdim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::logsumexp_out(*out, t, dim, keepdim)
                 : tessera::logsumexp(t, dim, keepdim);
    });
  }, "input"_a, "dim"_a, "keepdim"_a = false, py::kw_only(), "out"_a = py::none(), logsumexp_doc);
  cls.def("logsumexp", &tessera::logsumexp, "dim"_a, "keepdim"_a = false, ReleaseGil(),
          logsumexp_doc);

  const char* equal_doc = "True when both have the same sizes and equal elements (after type "
                          "promotion; NaN is unequal).";
  m.def("equal", &tessera::equal, "input"_a, "other"_a, ReleaseGil(), equal_doc);
  cls.def("equal", &tessera::equal, "other"_a, ReleaseGil(), equal_doc);
}

// -- Scans and order statistics.

void register_scans(py::module_& m, TensorClass& cls) {
  using Scan = Tensor (*)(const Tensor&, int64_t, OptDType);
  using ScanOut = Tensor& (*)(Tensor&, const Tensor&, int64_t, OptDType);
  using ScanInPlace = Tensor& (*)(Tensor&, int64_t, OptDType);
  struct ScanEntry {
    const char* name;
    const char* in_place_name;
    Scan op;
    ScanOut op_out;
    ScanInPlace op_in_place;
    const char* doc;
  };
  const ScanEntry scans[] = {
      {"cumsum", "cumsum_", &tessera::cumsum, &tessera::cumsum_out, &tessera::cumsum_,
       "Running sum along dim; bool and integer inputs give int64 unless dtype says otherwise."},
      {"cumprod", "cumprod_", &tessera::cumprod, &tessera::cumprod_out, &tessera::cumprod_,
       "Running product along dim; bool and integer inputs give int64 unless dtype says "
       "otherwise."},
  };
  for (const ScanEntry& s : scans) {
    m.def(s.name, [op = s.op, op_out = s.op_out](const Tensor& t, int64_t dim, OptDType dtype,
                                                 Tensor* out) {
      return tensor_or_out(out, [&] {
        return out ? op_out(*out, t, dim, dtype) : op(t, dim, dtype);
      });
    }, "input"_a, "dim"_a, py::kw_only(), "dtype"_a = py::none(), "out"_a = py::none(), s.doc);
    cls.def(s.name, s.op, "dim"_a, py::kw_only(), "dtype"_a = py::none(), ReleaseGil(), s.doc);
    cls.def(s.in_place_name, s.op_in_place, "dim"_a, py::kw_only(), "dtype"_a = py::none(),
            ReleaseGil(), "In place, in self's dtype; returns self.");
  }

  for (const bool is_max : {true, false}) {
    const char* name = is_max ? "cummax" : "cummin";
    py::object type = return_type(m, name, {"values", "indices"});
    auto run = [is_max](const Tensor& t, int64_t dim) {
      return is_max ? tessera::cummax(t, dim) : tessera::cummin(t, dim);
    };
    const char* doc = is_max ? "(values, indices): the running maximum along dim; ties and NaN "
                               "take the latest index."
                             : "(values, indices): the running minimum along dim; ties and NaN "
                               "take the latest index.";
    m.def(name, [type, run](const Tensor& t, int64_t dim) {
      return pair_result(type, [&] { return run(t, dim); });
    }, "input"_a, "dim"_a, doc);
    cls.def(name, [type, run](const Tensor& t, int64_t dim) {
      return pair_result(type, [&] { return run(t, dim); });
    }, "dim"_a, doc);
  }
}

void register_order_statistics(py::module_& m, TensorClass& cls) {
  py::object kthvalue_type = return_type(m, "kthvalue", {"values", "indices"});
  const char* kthvalue_doc = "(values, indices) of the k-th smallest (k from 1) along dim; NaN "
                             "sorts last.";
  m.def("kthvalue", [kthvalue_type](const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
    return pair_result(kthvalue_type, [&] { return tessera::kthvalue(t, k, dim, keepdim); });
  }, "input"_a, "k"_a, "dim"_a = -1, "keepdim"_a = false, kthvalue_doc);
  cls.def("kthvalue", [kthvalue_type](const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
    return pair_result(kthvalue_type, [&] { return tessera::kthvalue(t, k, dim, keepdim); });
  }, "k"_a, "dim"_a = -1, "keepdim"_a = false, kthvalue_doc);

  py::object median_type = return_type(m, "median", {"values", "indices"});
  const char* median_doc = "median(input): the lower median of every element (NaN if any); "
                           "median(input, dim, keepdim=False): (values, indices) along dim.";
  auto whole = [](const Tensor& t) { return tessera::median(t); };
  auto along = [median_type](const Tensor& t, int64_t dim, bool keepdim) {
    return pair_result(median_type, [&] { return tessera::median(t, dim, keepdim); });
  };
  m.def("median", whole, "input"_a, ReleaseGil(), median_doc);
  m.def("median", along, "input"_a, "dim"_a, "keepdim"_a = false);
  cls.def("median", whole, ReleaseGil(), median_doc);
  cls.def("median", along, "dim"_a, "keepdim"_a = false);
}

void register_softmax(py::module_& m, TensorClass& cls) {
  const char* softmax_doc = "exp(x) / sum(exp(x)) along dim; dtype converts the input first "
                            "(e.g. float16 computed in float32).";
  const char* log_softmax_doc = "log(softmax(x)) along dim, computed stably; dtype converts "
                                "the input first.";
  m.def("softmax", &tessera::softmax, "input"_a, "dim"_a, "dtype"_a = py::none(), ReleaseGil(),
        softmax_doc);
  m.def("log_softmax", &tessera::log_softmax, "input"_a, "dim"_a, "dtype"_a = py::none(),
        ReleaseGil(), log_softmax_doc);
  cls.def("softmax", &tessera::softmax, "dim"_a, "dtype"_a = py::none(), ReleaseGil(),
          softmax_doc);
  cls.def("log_softmax", &tessera::log_softmax, "dim"_a, "dtype"_a = py::none(), ReleaseGil(),
          log_softmax_doc);
  // The gradients with respect to the input, given the forward's output.
  m.def("_softmax_backward_data", &tessera::_softmax_backward_data, "grad_output"_a, "output"_a,
        "dim"_a, "input_dtype"_a = py::none(), ReleaseGil(),
        "Gradient of softmax with respect to its input, from the output's gradient and the "
        "output; input_dtype: the dtype of the forward's input.");
  m.def("_log_softmax_backward_data", &tessera::_log_softmax_backward_data, "grad_output"_a,
        "output"_a, "dim"_a, "input_dtype"_a = py::none(), ReleaseGil(),
        "Gradient of log_softmax with respect to its input, from the output's gradient and "
        "the output; input_dtype: the dtype of the forward's input.");
}

}  // namespace

void register_reduction_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  register_sums_and_extrema(m, cls);
  register_statistics(m, cls);
  register_scans(m, cls);
  register_order_statistics(m, cls);
  register_softmax(m, cls);
}

}  // namespace tessera_py
