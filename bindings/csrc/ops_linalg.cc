// Linear algebra: the products (mm, bmm, matmul, addmm, baddbmm, addbmm,
// addmv, addr, dot, mv, outer, inner, tensordot), cross and cdist as
// tessera.<name> functions and Tensor methods, and tessera.linalg (cross,
// matmul, vecdot, vector_norm, matrix_norm, norm, multi_dot,
// matrix_power). The runtime's products run on its GEMM kernel; the rest
// are composed here from them (addbmm is one addmm over the batch laid
// side by side, addmv and addr are addmm with a vector as a matrix), so
// every device has all of them.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/linalg_composites.h"
#include "bindings/csrc/results.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;

void check_rank(const char* op, const char* name, const Tensor& t, int64_t rank) {
  TESSERA_CHECK(t.dim() == rank, ValueError, op, ": expected ", name, " to be ", rank, "-D, got ",
                tessera::describe(t));
}

// sum_b batch1[b] @ batch2[b] is one [M, B*K] @ [B*K, N] product.
std::pair<Tensor, Tensor> addbmm_operands(const Tensor& batch1, const Tensor& batch2) {
  check_rank("addbmm", "batch1", batch1, 3);
  check_rank("addbmm", "batch2", batch2, 3);
  TESSERA_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1), ValueError,
                "addbmm: batch1 ", tessera::shape_to_string(batch1.sizes()), " and batch2 ",
                tessera::shape_to_string(batch2.sizes()), " cannot be multiplied");
  const int64_t b = batch1.size(0), m = batch1.size(1), k = batch1.size(2), n = batch2.size(2);
  return {batch1.permute({1, 0, 2}).reshape({m, b * k}), batch2.reshape({b * k, n})};
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta,
              Scalar alpha) {
  auto [a, b] = addbmm_operands(batch1, batch2);
  return tessera::addmm(self, a, b, beta, alpha);
}

void check_addmv(const Tensor& mat, const Tensor& vec) {
  check_rank("addmv", "mat", mat, 2);
  check_rank("addmv", "vec", vec, 1);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) {
  check_addmv(mat, vec);
  TESSERA_CHECK(self.dim() <= 1, ValueError, "addmv: expected input of at most 1 dim (it "
                "broadcasts to [", mat.size(0), "]), got ", tessera::describe(self));
  const Tensor column = self.dim() == 1 ? self.unsqueeze(1) : self;
  return tessera::addmm(column, mat, vec.unsqueeze(1), beta, alpha).squeeze(1);
}

Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha) {
  check_addmv(mat, vec);
  TESSERA_CHECK(self.dim() == 1, ValueError, "addmv_: expected a 1-D self of size [",
                mat.size(0), "], got ", tessera::describe(self));
  Tensor column = self.unsqueeze(1);  // a view: addmm_ writes self
  tessera::addmm_(column, mat, vec.unsqueeze(1), beta, alpha);
  return self;
}

std::pair<Tensor, Tensor> addr_operands(const Tensor& vec1, const Tensor& vec2) {
  check_rank("addr", "vec1", vec1, 1);
  check_rank("addr", "vec2", vec2, 1);
  return {vec1.unsqueeze(1), vec2.unsqueeze(0)};
}

// Contracts dims_a of a with dims_b of b (pairwise), as one mm over the
// operands permuted to [free..., contracted...] and [contracted..., free...].
Tensor tensordot(const Tensor& a, const Tensor& b, Shape dims_a, Shape dims_b) {
  const char* op = "tensordot";
  TESSERA_CHECK(dims_a.size() == dims_b.size(), ValueError, op,
                ": both dimension lists should have the same length, got ",
                tessera::shape_to_string(dims_a), " and ", tessera::shape_to_string(dims_b));
  std::vector<bool> contracted_a(static_cast<size_t>(a.dim())), contracted_b(static_cast<size_t>(b.dim()));
  int64_t k = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    dims_a[i] = tessera::wrap_dim(dims_a[i], a.dim(), op);
    dims_b[i] = tessera::wrap_dim(dims_b[i], b.dim(), op);
    TESSERA_CHECK(!contracted_a[dims_a[i]] && !contracted_b[dims_b[i]], ValueError, op,
                  ": a dim appears twice in ", tessera::shape_to_string(dims_a), " or ",
                  tessera::shape_to_string(dims_b));
    TESSERA_CHECK(a.size(dims_a[i]) == b.size(dims_b[i]), ValueError, op,
                  ": contracted dimensions need to match, but first has size ",
                  a.size(dims_a[i]), " in dim ", dims_a[i], " and second has size ",
                  b.size(dims_b[i]), " in dim ", dims_b[i]);
    contracted_a[dims_a[i]] = contracted_b[dims_b[i]] = true;
    k *= a.size(dims_a[i]);
  }
  Shape perm_a, perm_b(dims_b), out_sizes;
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (contracted_a[d]) continue;
    perm_a.push_back(d);
    out_sizes.push_back(a.size(d));
    rows *= a.size(d);
  }
  perm_a.insert(perm_a.end(), dims_a.begin(), dims_a.end());
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (contracted_b[d]) continue;
    perm_b.push_back(d);
    out_sizes.push_back(b.size(d));
    cols *= b.size(d);
  }
  Tensor prod = tessera::mm(a.permute(perm_a).reshape({rows, k}), b.permute(perm_b).reshape({k, cols}));
  return prod.reshape(out_sizes);
}

Tensor tensordot_n(const Tensor& a, const Tensor& b, int64_t n) {
  TESSERA_CHECK(n >= 0 && n <= a.dim() && n <= b.dim(), ValueError,
                "tensordot: dims must be a non-negative number of dims both tensors have, got ",
                n, " for ", tessera::describe(a), " and ", tessera::describe(b));
  Shape dims_a, dims_b;
  for (int64_t i = 0; i < n; ++i) {
    dims_a.push_back(a.dim() - n + i);
    dims_b.push_back(i);
  }
  return tensordot(a, b, dims_a, dims_b);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) return tessera::mul(a, b);
  TESSERA_CHECK(a.size(-1) == b.size(-1), ValueError, "inner: last dimension must match, got ",
                tessera::describe(a), " and ", tessera::describe(b));
  return tensordot(a, b, {-1}, {-1});
}

// torch.cross without dim: the first dim of size 3 of the broadcast shape.
int64_t default_cross_dim(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  if (dim) return *dim;
  const Shape sizes = tessera::broadcast_shapes(a.sizes(), b.sizes(), "cross");
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 3) return static_cast<int64_t>(d);
  }
  throw tessera::ValueError("cross: no dimension of size 3 in input " +
                            tessera::shape_to_string(sizes));
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  TESSERA_CHECK(x.dtype() == y.dtype(), TypeError,
                "linalg.vecdot: expected x and y to have the same dtype, got ",
                tessera::describe(x), " and ", tessera::describe(y));
  return tessera::sum(tessera::mul(x, y), {dim});
}

// The sizes of t without dims a and b.
Shape without_dims(const Tensor& t, int64_t a, int64_t b) {
  Shape out;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d != a && d != b) out.push_back(t.size(d));
  }
  return out;
}

using MatrixOrd = std::variant<double, std::string>;

Tensor matrix_norm(const Tensor& input, const MatrixOrd& ord, const Shape& dim, bool keepdim,
                   std::optional<DType> dtype) {
  const char* op = "linalg.matrix_norm";
  TESSERA_CHECK(input.dim() >= 2, ValueError, op,
                ": expected a tensor with 2 or more dimensions, got ", tessera::describe(input));
  TESSERA_CHECK(dim.size() == 2, ValueError, op, ": dim must be a 2-tuple, got ",
                tessera::shape_to_string(dim));
  const int64_t d0 = tessera::wrap_dim(dim[0], input.dim(), op);
  const int64_t d1 = tessera::wrap_dim(dim[1], input.dim(), op);
  TESSERA_CHECK(d0 != d1, ValueError, op, ": dims must be different, got ",
                tessera::shape_to_string(dim));
  if (const std::string* name = std::get_if<std::string>(&ord)) {
    if (*name == "fro") return vector_norm(input, 2.0, {d0, d1}, keepdim, dtype);
    TESSERA_CHECK(*name != "nuc", NotImplementedError, op,
                  ": the nuclear norm needs singular values, which the runtime does not compute");
    throw tessera::ValueError(std::string(op) + ": order " + *name +
                              " not supported (fro, nuc or a number)");
  }
  const double p = std::get<double>(ord);
  TESSERA_CHECK(std::abs(p) != 2, NotImplementedError, op, ": ord=", p,
                " needs singular values, which the runtime does not compute");
  TESSERA_CHECK(std::abs(p) == 1 || std::isinf(p), ValueError, op, ": order ", p,
                " not supported (1, -1, inf, -inf, 'fro')");
  const Tensor x = dtype ? input.to(*dtype) : input;
  TESSERA_CHECK(tessera::is_floating(x.dtype()), TypeError, op,
                ": expected a floating input, got ", tessera::describe(x));
  // ord +-1: the max / min column sum; ord +-inf: the max / min row sum.
  const bool columns = std::abs(p) == 1;
  Tensor sums = tessera::sum(tessera::abs(x), {columns ? d0 : d1}, /*keepdim=*/true);
  Tensor r = p > 0 ? tessera::amax(sums, {columns ? d1 : d0}, true)
                   : tessera::amin(sums, {columns ? d1 : d0}, true);
  return keepdim ? r : r.reshape(without_dims(input, d0, d1));
}

Tensor linalg_norm(const Tensor& input, const std::optional<MatrixOrd>& ord,
                   const std::optional<Shape>& dim, bool keepdim, std::optional<DType> dtype) {
  const char* op = "linalg.norm";
  const bool matrix = dim ? dim->size() == 2 : ord && input.dim() == 2;
  if (!matrix) {
    TESSERA_CHECK(!dim || dim->size() == 1, ValueError, op,
                  ": dim must be an int or a 2-tuple, got ", tessera::shape_to_string(*dim));
    TESSERA_CHECK(dim || !ord || input.dim() == 1, ValueError, op,
                  ": input must be 1-D or 2-D when ord is given without dim, got ",
                  tessera::describe(input));
    if (ord && std::holds_alternative<std::string>(*ord)) {
      throw tessera::ValueError(std::string(op) + ": order '" + std::get<std::string>(*ord) +
                                "' is for matrices; a vector norm takes a number");
    }
    const double p = ord ? std::get<double>(*ord) : 2.0;
    return vector_norm(input, p, dim.value_or(Shape{}), keepdim, dtype);
  }
  return matrix_norm(input, ord.value_or(MatrixOrd("fro")), dim.value_or(Shape{-2, -1}), keepdim,
                     dtype);
}

// A chain of 2-D products; the first operand may be a row vector and the
// last a column vector (1-D), dropped from the result as in PyTorch.
Tensor multi_dot(const std::vector<Tensor>& tensors) {
  const char* op = "linalg.multi_dot";
  TESSERA_CHECK(tensors.size() >= 2, ValueError, op, ": expected at least 2 tensors but got ",
                tensors.size());
  const bool row = tensors.front().dim() == 1, column = tensors.back().dim() == 1;
  Tensor acc = row ? tensors.front().unsqueeze(0) : tensors.front();
  for (size_t i = 1; i < tensors.size(); ++i) {
    const bool last = i + 1 == tensors.size();
    Tensor next = last && column ? tensors[i].unsqueeze(1) : tensors[i];
    TESSERA_CHECK(acc.dim() == 2 && next.dim() == 2, ValueError, op, ": tensor ",
                  acc.dim() != 2 ? 0 : i,
                  " must be 2-D (the first and last may be 1-D), got ",
                  tessera::describe(acc.dim() != 2 ? tensors.front() : tensors[i]));
    acc = tessera::mm(acc, next);
  }
  if (column) acc = acc.squeeze(1);
  if (row) acc = acc.squeeze(0);
  return acc;
}

Tensor matrix_power(const Tensor& a, int64_t n) {
  const char* op = "linalg.matrix_power";
  TESSERA_CHECK(a.dim() >= 2 && a.size(-1) == a.size(-2), ValueError, op,
                ": expected a batch of square matrices, got ", tessera::describe(a));
  TESSERA_CHECK(n >= 0, NotImplementedError, op, ": n=", n,
                " needs a matrix inverse, which the runtime does not compute");
  if (n == 0) {
    const Tensor eye = tessera::eye(a.size(-1), tessera::TensorOptions(a.dtype(), a.device()));
    return eye.expand(a.sizes()).contiguous();
  }
  // Square-and-multiply: about log2(n) products.
  Tensor result, base = a;
  for (int64_t e = n;; e >>= 1) {
    if (e & 1) result = result.defined() ? tessera::matmul(result, base) : base.clone();
    if (e == 1) break;
    base = tessera::matmul(base, base);
  }
  return result;
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const std::string& compute_mode) {
  // The modes choose between a GEMM and a direct form on CUDA in PyTorch;
  // the runtime has one form, equal to both up to rounding.
  TESSERA_CHECK(compute_mode == "use_mm_for_euclid_dist_if_necessary" ||
                    compute_mode == "use_mm_for_euclid_dist" ||
                    compute_mode == "donot_use_mm_for_euclid_dist",
                ValueError, "cdist: ", compute_mode, " is not a valid value for compute_mode");
  return tessera::cdist(x1, x2, p);
}

// dims=2 or dims=([1, 0], [0, 1]).
using TensordotDims = std::variant<int64_t, std::pair<Shape, Shape>>;

Tensor tensordot_any(const Tensor& a, const Tensor& b, const TensordotDims& dims) {
  if (const int64_t* n = std::get_if<int64_t>(&dims)) return tensordot_n(a, b, *n);
  const auto& [da, db] = std::get<std::pair<Shape, Shape>>(dims);
  return tensordot(a, b, da, db);
}

void register_products(py::module_& m, TensorClass& cls) {
  auto def_binary = [&](const char* name, const char* second, auto op, auto op_out,
                        const char* doc) {
    m.def(name, [op, op_out](const Tensor& a, const Tensor& b, Tensor* out) {
      return tensor_or_out(out, [&] { return out ? op_out(*out, a, b) : op(a, b); });
    }, "input"_a, py::arg(second), py::kw_only(), "out"_a = py::none(), doc);
    cls.def(name, [op](const Tensor& a, const Tensor& b) { return op(a, b); }, py::arg(second),
            ReleaseGil(), doc);
  };
  def_binary("mm", "mat2", [](const Tensor& a, const Tensor& b) { return tessera::mm(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::mm_out(o, a, b);
             }, "[M, K] @ [K, N].");
  def_binary("bmm", "mat2", [](const Tensor& a, const Tensor& b) { return tessera::bmm(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::bmm_out(o, a, b);
             }, "[B, M, K] @ [B, K, N].");
  def_binary("matmul", "other",
             [](const Tensor& a, const Tensor& b) { return tessera::matmul(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::matmul_out(o, a, b);
             }, "The matrix product of 1-D to N-D operands, batch dims broadcast.");
  def_binary("dot", "tensor", [](const Tensor& a, const Tensor& b) { return tessera::dot(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::dot_out(o, a, b);
             }, "The dot product of two 1-D tensors (0-d result).");
  def_binary("vdot", "other", [](const Tensor& a, const Tensor& b) { return tessera::dot(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::dot_out(o, a, b);
             }, "dot (tensors are real, so nothing is conjugated).");
  def_binary("mv", "vec", [](const Tensor& a, const Tensor& b) { return tessera::mv(a, b); },
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::mv_out(o, a, b);
             }, "[M, K] @ [K].");
  for (const char* name : {"outer", "ger"}) {
    def_binary(name, "vec2", [](const Tensor& a, const Tensor& b) { return tessera::outer(a, b); },
               [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
                 return tessera::outer_out(o, a, b);
               }, "[M] x [N] -> [M, N] (types promote).");
  }
  def_binary("inner", "other", &inner,
             [](Tensor& o, const Tensor& a, const Tensor& b) -> Tensor& {
               return tessera::write_out("inner", o, inner(a, b));
             }, "Sums of products over the last dims (a product by a 0-d tensor).");

  // beta * input + alpha * (product), the product's kind after the name.
  auto def_scaled = [&](const char* name, const char* first, const char* second, auto op,
                        auto op_out, auto op_inplace, const char* doc) {
    m.def(name, [op, op_out](const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta,
                             Scalar alpha, Tensor* out) {
      return tensor_or_out(out, [&] {
        return out ? op_out(*out, self, a, b, beta, alpha) : op(self, a, b, beta, alpha);
      });
    }, "input"_a, py::arg(first), py::arg(second), py::kw_only(), "beta"_a = 1, "alpha"_a = 1,
       "out"_a = py::none(), doc);
    cls.def(name, [op](const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta,
                       Scalar alpha) { return op(self, a, b, beta, alpha); },
            py::arg(first), py::arg(second), py::kw_only(), "beta"_a = 1, "alpha"_a = 1,
            ReleaseGil(), doc);
    cls.def((std::string(name) + "_").c_str(), op_inplace, py::arg(first), py::arg(second),
            py::kw_only(), "beta"_a = 1, "alpha"_a = 1, ReleaseGil(), "In place; returns self.");
  };
  def_scaled("addmm", "mat1", "mat2",
             [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
               return tessera::addmm(s, a, b, beta, alpha);
             },
             [](Tensor& o, const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta,
                Scalar alpha) -> Tensor& { return tessera::addmm_out(o, s, a, b, beta, alpha); },
             [](Tensor& s, const Tensor& a, const Tensor& b, Scalar beta,
                Scalar alpha) -> Tensor& { return tessera::addmm_(s, a, b, beta, alpha); },
             "beta * input + alpha * (mat1 @ mat2); input broadcasts to [M, N]; beta=0 ignores "
             "input (NaN included).");
  def_scaled("baddbmm", "batch1", "batch2",
             [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
               return tessera::baddbmm(s, a, b, beta, alpha);
             },
             [](Tensor& o, const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta,
                Scalar alpha) -> Tensor& {
               return tessera::baddbmm_out(o, s, a, b, beta, alpha);
             },
             [](Tensor& s, const Tensor& a, const Tensor& b, Scalar beta,
                Scalar alpha) -> Tensor& { return tessera::baddbmm_(s, a, b, beta, alpha); },
             "beta * input + alpha * bmm(batch1, batch2); input broadcasts to [B, M, N].");
  def_scaled("addbmm", "batch1", "batch2", &addbmm,
             [](Tensor& o, const Tensor& s, const Tensor& b1, const Tensor& b2, Scalar beta,
                Scalar alpha) -> Tensor& {
               auto [a, b] = addbmm_operands(b1, b2);
               return tessera::addmm_out(o, s, a, b, beta, alpha);
             },
             [](Tensor& s, const Tensor& b1, const Tensor& b2, Scalar beta,
                Scalar alpha) -> Tensor& {
               auto [a, b] = addbmm_operands(b1, b2);
               return tessera::addmm_(s, a, b, beta, alpha);
             },
             "beta * input + alpha * sum over b of batch1[b] @ batch2[b]; input broadcasts "
             "to [M, N].");
  def_scaled("addmv", "mat", "vec", &addmv,
             [](Tensor& o, const Tensor& s, const Tensor& a, const Tensor& v, Scalar beta,
                Scalar alpha) -> Tensor& {
               return tessera::write_out("addmv", o, addmv(s, a, v, beta, alpha));
             },
             &addmv_, "beta * input + alpha * (mat @ vec); input broadcasts to [M].");
  def_scaled("addr", "vec1", "vec2",
             [](const Tensor& s, const Tensor& v1, const Tensor& v2, Scalar beta, Scalar alpha) {
               auto [a, b] = addr_operands(v1, v2);
               return tessera::addmm(s, a, b, beta, alpha);
             },
             [](Tensor& o, const Tensor& s, const Tensor& v1, const Tensor& v2, Scalar beta,
                Scalar alpha) -> Tensor& {
               auto [a, b] = addr_operands(v1, v2);
               return tessera::addmm_out(o, s, a, b, beta, alpha);
             },
             [](Tensor& s, const Tensor& v1, const Tensor& v2, Scalar beta,
                Scalar alpha) -> Tensor& {
               auto [a, b] = addr_operands(v1, v2);
               return tessera::addmm_(s, a, b, beta, alpha);
             },
             "beta * input + alpha * outer(vec1, vec2); input broadcasts to [M, N].");

  m.def("tensordot", [](const Tensor& a, const Tensor& b, const TensordotDims& dims, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = tensordot_any(a, b, dims);
      return out ? tessera::write_out("tensordot", *out, r) : r;
    });
  }, "a"_a, "b"_a, "dims"_a = 2, py::kw_only(), "out"_a = py::none(),
     "Contracts the last dims of a with the first of b (dims=n), or the listed pairs "
     "(dims=([a dims], [b dims])).");
  m.def("cross", [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim, Tensor* out) {
    return tensor_or_out(out, [&] {
      const int64_t d = default_cross_dim(a, b, dim);
      return out ? tessera::linalg_cross_out(*out, a, b, d) : tessera::linalg_cross(a, b, d);
    });
  }, "input"_a, "other"_a, "dim"_a = py::none(), py::kw_only(), "out"_a = py::none(),
     "The cross product along dim (of size 3); without dim, the first dim of size 3.");
  cls.def("cross", [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
    return tessera::linalg_cross(a, b, default_cross_dim(a, b, dim));
  }, "other"_a, "dim"_a = py::none(), ReleaseGil());
  m.def("cdist", &cdist, "x1"_a, "x2"_a, "p"_a = 2.0,
        "compute_mode"_a = "use_mm_for_euclid_dist_if_necessary", ReleaseGil(),
        "The p-norm distances between the rows of x1 [..., R1, M] and x2 [..., R2, M] -> "
        "[..., R1, R2]; float32 or float64.");
  m.def("matrix_power", &matrix_power, "input"_a, "n"_a, ReleaseGil(),
        "input (a batch of square matrices) to the power n >= 0.");
  cls.def("matrix_power", &matrix_power, "n"_a, ReleaseGil());
}

void register_linalg_submodule(py::module_& m) {
  py::module_ linalg = m.def_submodule("linalg", "Linear algebra, named as torch.linalg.");
  linalg.def("cross", [](const Tensor& a, const Tensor& b, int64_t dim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::linalg_cross_out(*out, a, b, dim) : tessera::linalg_cross(a, b, dim);
    });
  }, "input"_a, "other"_a, py::kw_only(), "dim"_a = -1, "out"_a = py::none(),
     "The cross product along dim, where both have size 3; other dims broadcast.");
  linalg.def("matmul", [](const Tensor& a, const Tensor& b, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::matmul_out(*out, a, b) : tessera::matmul(a, b);
    });
  }, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none());
  linalg.def("vecdot", [](const Tensor& x, const Tensor& y, int64_t dim, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = vecdot(x, y, dim);
      return out ? tessera::write_out("linalg.vecdot", *out, r) : r;
    });
  }, "x"_a, "y"_a, py::kw_only(), "dim"_a = -1, "out"_a = py::none(),
     "sum(x * y, dim), x and y broadcast.");
  linalg.def("vector_norm", [](const Tensor& x, double ord, std::optional<Shape> dim, bool keepdim,
                               std::optional<DType> dtype, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = vector_norm(x, ord, dim.value_or(Shape{}), keepdim, dtype);
      return out ? tessera::write_out("linalg.vector_norm", *out, r) : r;
    });
  }, "x"_a, "ord"_a = 2.0, "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(),
     "dtype"_a = py::none(), "out"_a = py::none(),
     "(sum |x|^ord)^(1/ord) over dim (None: every element); inf / -inf: max / min |x|; "
     "0: the count of non-zeros.");
  linalg.def("matrix_norm", [](const Tensor& a, const MatrixOrd& ord, const Shape& dim,
                               bool keepdim, std::optional<DType> dtype, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = matrix_norm(a, ord, dim, keepdim, dtype);
      return out ? tessera::write_out("linalg.matrix_norm", *out, r) : r;
    });
  }, "input"_a, "ord"_a = "fro", "dim"_a = Shape{-2, -1}, "keepdim"_a = false, py::kw_only(),
     "dtype"_a = py::none(), "out"_a = py::none(),
     "ord 'fro', 1, -1, inf or -inf ('nuc', 2 and -2 need singular values: "
     "NotImplementedError).");
  linalg.def("norm", [](const Tensor& a, std::optional<MatrixOrd> ord, std::optional<Shape> dim,
                        bool keepdim, Tensor* out, std::optional<DType> dtype) {
    return tensor_or_out(out, [&] {
      Tensor r = linalg_norm(a, ord, dim, keepdim, dtype);
      return out ? tessera::write_out("linalg.norm", *out, r) : r;
    });
  }, "input"_a, "ord"_a = py::none(), "dim"_a = py::none(), "keepdim"_a = false, py::kw_only(),
     "out"_a = py::none(), "dtype"_a = py::none(),
     "vector_norm for one dim (or all, without ord), matrix_norm for two.");
  linalg.def("multi_dot", [](const TensorListArg& tensors, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = multi_dot(tensors);
      return out ? tessera::write_out("linalg.multi_dot", *out, r) : r;
    });
  }, "tensors"_a, py::kw_only(), "out"_a = py::none(),
     "The chain of products; the first and last may be 1-D.");
  linalg.def("matrix_power", [](const Tensor& a, int64_t n, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = matrix_power(a, n);
      return out ? tessera::write_out("linalg.matrix_power", *out, r) : r;
    });
  }, "input"_a, "n"_a, py::kw_only(), "out"_a = py::none());
}

}  // namespace

Tensor vector_norm(const Tensor& input, double ord, const Shape& dims, bool keepdim,
                   std::optional<DType> dtype) {
  const Tensor x = dtype ? input.to(*dtype) : input;
  TESSERA_CHECK(tessera::is_floating(x.dtype()), TypeError,
                "linalg.vector_norm: expected a floating input (or dtype), got ",
                tessera::describe(x));
  if (std::isinf(ord)) {
    return ord > 0 ? tessera::amax(tessera::abs(x), dims, keepdim)
                   : tessera::amin(tessera::abs(x), dims, keepdim);
  }
  if (ord == 0) return tessera::sum(tessera::ne(x, Scalar(0)), dims, keepdim, x.dtype());
  if (ord == 1 || ord == 2) return tessera::norm(x, ord, dims, keepdim);
  const Tensor powers = tessera::pow(tessera::abs(x), Scalar(ord));
  return tessera::pow(tessera::sum(powers, dims, keepdim), Scalar(1.0 / ord));
}

void register_linalg_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  register_products(m, cls);
  register_linalg_submodule(m);
}

}  // namespace tessera_py
