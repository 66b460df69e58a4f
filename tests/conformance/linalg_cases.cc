// mm, bmm, matmul, addmm, baddbmm, dot, mv, outer, linear: op cases
// against a naive double reference of torch.matmul's semantics, and their
// error cases.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// dtypes PyTorch's CPU GEMMs take: all but bool.
std::vector<DType> gemm_dtypes() { return numeric_dtypes(); }

// torch.matmul(a, b) in double, rounded to dtype.
Expected matmul_reference(const Tensor& a, const Tensor& b, DType dtype) {
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Shape batch = broadcast_shapes(Shape(a2.sizes().begin(), a2.sizes().end() - 2),
                                 Shape(b2.sizes().begin(), b2.sizes().end() - 2), "reference");
  const int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  Shape af = batch, bf = batch;
  af.insert(af.end(), {m, k});
  bf.insert(bf.end(), {k, n});
  const std::vector<double> av = values_of(a2.expand(af)), bv = values_of(b2.expand(bf));
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  Expected e;
  e.dtype = dtype;
  e.sizes = batch;
  if (a.dim() > 1) e.sizes.push_back(m);
  if (b.dim() > 1) e.sizes.push_back(n);
  e.values.assign(static_cast<size_t>(nb * m * n), 0.0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += av[(bi * m + i) * k + p] * bv[(bi * k + p) * n + j];
        e.values[(bi * m + i) * n + j] = round_to_dtype(acc, dtype);
      }
    }
  }
  return e;
}

// Tolerance for a sum of K products of values in [-1, 1].
Tolerance gemm_tolerance(DType dtype, int64_t k) {
  Tolerance t = default_tolerance(dtype);
  if (!is_floating(dtype)) return t;
  return {t.rtol, t.atol + t.rtol * static_cast<double>(std::max<int64_t>(k, 1))};
}

Sample sample(std::string d, std::vector<Tensor> in) {
  Sample s;
  s.description = std::move(d);
  s.inputs = std::move(in);
  return s;
}

// The shape classes of a product of two operands, built by `make`.
std::vector<Sample> product_samples(DType t, bool batched) {
  uint64_t seed = 11;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
  std::vector<Sample> out;
  if (!batched) {
    out.push_back(sample("contiguous [5, 7] @ [7, 3]", {in({5, 7}), in({7, 3})}));
    out.push_back(sample("transposed operands", {in({7, 5}).t(), in({3, 7}).t()}));
    out.push_back(sample("strided slices", {in({5, 14}).slice(1, 0, std::nullopt, 2),
                                            in({8, 3}).slice(0, 1, std::nullopt, 1).narrow(0, 0, 7)}));
    out.push_back(sample("zero-size M", {in({0, 4}), in({4, 3})}));
    out.push_back(sample("zero-size K", {in({3, 0}), in({0, 2})}));
    out.push_back(sample("expanded operand", {in({1, 6}).expand({4, 6}), in({6, 5})}));
    if (t == DType::kF32 || t == DType::kF64) {
      out.push_back(sample("larger than L2 [600, 600] @ [600, 600]", {in({600, 600}), in({600, 600})}));
      out.push_back(sample("larger, transposed b [300, 640] @ [640, 280]^T", {in({300, 640}), in({280, 640}).t()}));
    }
  } else {
    out.push_back(sample("contiguous [3, 4, 5] @ [3, 5, 2]", {in({3, 4, 5}), in({3, 5, 2})}));
    out.push_back(sample("transposed batches", {in({3, 5, 4}).transpose(1, 2), in({2, 5, 3}).permute({2, 1, 0})}));
    out.push_back(sample("zero-size batch", {in({0, 4, 5}), in({0, 5, 2})}));
    out.push_back(sample("zero-size K", {in({2, 3, 0}), in({2, 0, 4})}));
    out.push_back(sample("expanded batch", {in({1, 4, 5}).expand({3, 4, 5}), in({3, 5, 2})}));
    if (t == DType::kF32) {
      out.push_back(sample("larger than L2 [4, 300, 300] @ [4, 300, 300]", {in({4, 300, 300}), in({4, 300, 300})}));
    }
  }
  return out;
}

OpCase product_case(bool batched, std::function<Tensor(const Tensor&, const Tensor&)> op) {
  OpCase c;
  c.dtypes = gemm_dtypes();
  c.samples = [batched](DType t) { return product_samples(t, batched); };
  c.run = [op](const std::vector<Tensor>& in, const Sample&) { return std::vector<Tensor>{op(in[0], in[1])}; };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{matmul_reference(s.inputs[0], s.inputs[1], s.inputs[0].dtype())};
  };
  c.tolerance = [](DType t, const Sample& s) { return gemm_tolerance(t, s.inputs[0].size(-1)); };
  return c;
}

// beta * self + alpha * ref, rounded.
Expected scale_add_reference(const Tensor& self, Expected prod, double beta, double alpha) {
  const std::vector<double> sv = values_of(self.expand(prod.sizes));
  for (size_t i = 0; i < prod.values.size(); ++i) {
    const double s = beta == 0 ? 0 : beta * sv[i];
    prod.values[i] = round_to_dtype(s + alpha * prod.values[i], prod.dtype);
  }
  return prod;
}

}  // namespace

TESSERA_CONFORMANCE_OP("mm") { return product_case(false, [](const Tensor& a, const Tensor& b) { return mm(a, b); }); }

TESSERA_CONFORMANCE_OP("mm_out") {
  return product_case(false, [](const Tensor& a, const Tensor& b) {
    Tensor out = empty({a.size(0), b.size(1)}, TensorOptions(a.dtype(), a.device()));
    mm_out(out, a, b);
    return out;
  });
}

TESSERA_CONFORMANCE_OP("bmm") { return product_case(true, [](const Tensor& a, const Tensor& b) { return bmm(a, b); }); }

TESSERA_CONFORMANCE_OP("matmul") {
  OpCase c = product_case(false, [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  c.samples = [](DType t) {
    uint64_t seed = 21;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    std::vector<Sample> out = product_samples(t, false);
    out.push_back(sample("1-D @ 1-D", {in({6}), in({6})}));
    out.push_back(sample("1-D @ 3-D", {in({4}), in({2, 4, 3})}));
    out.push_back(sample("3-D @ 1-D", {in({2, 3, 4}), in({4})}));
    out.push_back(sample("batch broadcast [2, 1, 3, 4] @ [5, 4, 2]", {in({2, 1, 3, 4}), in({5, 4, 2})}));
    out.push_back(sample("batch broadcast 2-D @ 4-D", {in({3, 4}), in({2, 2, 4, 5})}));
    out.push_back(sample("zero-size batch [0, 3, 4] @ [4, 2]", {in({0, 3, 4}), in({4, 2})}));
    return out;
  };
  return c;
}

TESSERA_CONFORMANCE_OP("addmm") {
  OpCase c;
  c.dtypes = gemm_dtypes();
  c.samples = [](DType t) {
    uint64_t seed = 31;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    std::vector<Sample> out;
    out.push_back(sample("self [4, 3]", {in({4, 3}), in({4, 5}), in({5, 3})}));
    out.push_back(sample("self broadcast [3]", {in({3}), in({4, 5}).t().t(), in({3, 5}).t()}));
    out.push_back(sample("zero-size K", {in({4, 3}), in({4, 0}), in({0, 3})}));
    for (Sample& s : out) s.scalars = {2, 3};
    Sample b0 = sample("beta 0 ignores self", {in({2, 2}), in({2, 3}), in({3, 2})});
    b0.scalars = {0, 1};
    out.push_back(b0);
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{addmm(in[0], in[1], in[2], s.scalars[0], s.scalars[1])};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{scale_add_reference(
        s.inputs[0], matmul_reference(s.inputs[1], s.inputs[2], s.inputs[0].dtype()),
        s.scalars[0].to<double>(), s.scalars[1].to<double>())};
  };
  c.tolerance = [](DType t, const Sample& s) { return gemm_tolerance(t, 4 * s.inputs[1].size(-1) + 4); };
  return c;
}

TESSERA_CONFORMANCE_OP("addmm_ in place and addmm_out") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{sample("[3, 2]", {make_input({3, 2}, t, 1, -1, 1), make_input({3, 4}, t, 2, -1, 1),
                                                 make_input({4, 2}, t, 3, -1, 1)})};
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    Tensor self = in[0].clone();
    addmm_(self, in[1], in[2], 0.5, 2);
    Tensor out = empty({3, 2}, TensorOptions(in[0].dtype(), in[0].device()));
    addmm_out(out, in[0], in[1], in[2]);
    return std::vector<Tensor>{self, out};
  };
  c.reference = [](const Sample& s) {
    Expected p = matmul_reference(s.inputs[1], s.inputs[2], s.inputs[0].dtype());
    return std::vector<Expected>{scale_add_reference(s.inputs[0], p, 0.5, 2),
                                 scale_add_reference(s.inputs[0], p, 1, 1)};
  };
  c.tolerance = [](DType t, const Sample&) { return gemm_tolerance(t, 12); };
  return c;
}

TESSERA_CONFORMANCE_OP("baddbmm") {
  OpCase c;
  c.dtypes = gemm_dtypes();
  c.samples = [](DType t) {
    uint64_t seed = 41;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    std::vector<Sample> out;
    out.push_back(sample("self [2, 3, 4]", {in({2, 3, 4}), in({2, 3, 5}), in({2, 5, 4})}));
    out.push_back(sample("self broadcast [3, 1]", {in({3, 1}), in({2, 5, 3}).transpose(1, 2), in({2, 5, 4})}));
    out.push_back(sample("zero-size batch", {in({0, 3, 4}), in({0, 3, 5}), in({0, 5, 4})}));
    for (Sample& s : out) s.scalars = {-1, 2};
    return out;
  };
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{baddbmm(in[0], in[1], in[2], s.scalars[0], s.scalars[1])};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{scale_add_reference(
        s.inputs[0], matmul_reference(s.inputs[1], s.inputs[2], s.inputs[0].dtype()),
        s.scalars[0].to<double>(), s.scalars[1].to<double>())};
  };
  c.tolerance = [](DType t, const Sample& s) { return gemm_tolerance(t, 2 * s.inputs[1].size(-1) + 2); };
  return c;
}

TESSERA_CONFORMANCE_OP("dot, mv, outer") {
  OpCase c;
  c.dtypes = gemm_dtypes();
  c.samples = [](DType t) {
    uint64_t seed = 51;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    return std::vector<Sample>{
        sample("contiguous", {in({5}), in({5}), in({3, 5}), in({4})}),
        sample("strided", {in({10}).slice(0, 0, std::nullopt, 2), in({5}), in({5, 3}).t(), in({8}).slice(0, 1, std::nullopt, 2)}),
        sample("zero-size", {in({0}), in({0}), in({2, 0}), in({0})}),
    };
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{dot(in[0], in[1]), mv(in[2], in[1]), outer(in[0], in[3])};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    Expected o = map_reference({s.inputs[0].unsqueeze(1), s.inputs[3].unsqueeze(0)}, t,
                               [](const std::vector<double>& v) { return v[0] * v[1]; });
    return std::vector<Expected>{matmul_reference(s.inputs[0], s.inputs[1], t),
                                 matmul_reference(s.inputs[2], s.inputs[1], t), o};
  };
  c.tolerance = [](DType t, const Sample& s) { return gemm_tolerance(t, s.inputs[0].size(0)); };
  return c;
}

TESSERA_CONFORMANCE_OP("linear") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    uint64_t seed = 61;
    auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
    return std::vector<Sample>{
        sample("[2, 3, 5] x [4, 5] + [4]", {in({2, 3, 5}), in({4, 5}), in({4})}),
        sample("1-D input", {in({5}), in({4, 5}), in({4})}),
        sample("transposed weight", {in({3, 5}), in({5, 4}).t(), in({4})}),
        sample("zero-size batch", {in({0, 5}), in({4, 5}), in({4})}),
    };
  };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{linear(in[0], in[1], in[2]), linear(in[0], in[1])};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    Expected nobias = matmul_reference(s.inputs[0], s.inputs[1].t(), t);
    Expected with = scale_add_reference(s.inputs[2], nobias, 1, 1);
    return std::vector<Expected>{with, nobias};
  };
  c.tolerance = [](DType t, const Sample&) { return gemm_tolerance(t, 7); };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("mm") {
  return std::vector<ErrorCase>{
      {"shapes cannot be multiplied", [](Device d) { mm(ones({2, 3}, d), ones({4, 2}, d)); }, ErrorKind::kValue,
       {"mm", "[2, 3]", "[4, 2]"}},
      {"not 2-D", [](Device d) { mm(ones({2, 3, 1}, d), ones({3, 2}, d)); }, ErrorKind::kValue, {"mm", "2-D"}},
      {"dtype mismatch", [](Device d) { mm(ones({2, 2}, d), ones({2, 2}, TensorOptions(DType::kF64, d))); },
       ErrorKind::kType, {"mm", "float32", "float64"}},
      {"bool", [](Device d) { mm(ones({2, 2}, TensorOptions(DType::kBool, d)), ones({2, 2}, TensorOptions(DType::kBool, d))); },
       ErrorKind::kType, {"mm", "bool"}},
      {"out of the wrong shape", [](Device d) { Tensor o = empty({3, 3}, d); mm_out(o, ones({2, 2}, d), ones({2, 2}, d)); },
       ErrorKind::kValue, {"mm"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("bmm") {
  return std::vector<ErrorCase>{
      {"batch mismatch", [](Device d) { bmm(ones({2, 3, 4}, d), ones({3, 4, 2}, d)); }, ErrorKind::kValue,
       {"bmm", "[2, 3, 4]", "[3, 4, 2]"}},
      {"not 3-D", [](Device d) { bmm(ones({3, 4}, d), ones({4, 2}, d)); }, ErrorKind::kValue, {"bmm", "3-D"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("matmul") {
  return std::vector<ErrorCase>{
      {"0-d operand", [](Device d) { matmul(ones({}, d), ones({2}, d)); }, ErrorKind::kValue, {"matmul", "1D"}},
      {"inner sizes differ", [](Device d) { matmul(ones({2, 3}, d), ones({4}, d)); }, ErrorKind::kValue,
       {"matmul", "[2, 3]", "[4]"}},
      {"batch dims do not broadcast", [](Device d) { matmul(ones({2, 2, 3}, d), ones({3, 3, 2}, d)); },
       ErrorKind::kValue, {"matmul"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("addmm, baddbmm, dot, mv, outer, linear") {
  return std::vector<ErrorCase>{
      {"addmm self does not broadcast", [](Device d) { addmm(ones({3, 3}, d), ones({2, 2}, d), ones({2, 2}, d)); },
       ErrorKind::kValue, {"addmm", "[3, 3]", "[2, 2]"}},
      {"addmm inner sizes", [](Device d) { addmm(ones({2, 2}, d), ones({2, 3}, d), ones({2, 2}, d)); },
       ErrorKind::kValue, {"addmm", "[2, 3]", "[2, 2]"}},
      {"addmm float beta with integers",
       [](Device d) {
         TensorOptions o(DType::kI64, d);
         addmm(ones({2, 2}, o), ones({2, 2}, o), ones({2, 2}, o), 0.5);
       },
       ErrorKind::kType, {"addmm", "beta", "int64"}},
      {"baddbmm batch mismatch", [](Device d) { baddbmm(ones({2, 2, 2}, d), ones({2, 2, 3}, d), ones({3, 3, 2}, d)); },
       ErrorKind::kValue, {"baddbmm", "[2, 2, 3]", "[3, 3, 2]"}},
      {"dot sizes", [](Device d) { dot(ones({3}, d), ones({4}, d)); }, ErrorKind::kValue, {"dot", "[3]", "[4]"}},
      {"dot 2-D", [](Device d) { dot(ones({3, 1}, d), ones({3}, d)); }, ErrorKind::kValue, {"dot", "1D"}},
      {"dot dtypes", [](Device d) { dot(ones({3}, d), ones({3}, TensorOptions(DType::kF64, d))); }, ErrorKind::kType,
       {"dot", "float32", "float64"}},
      {"mv sizes", [](Device d) { mv(ones({2, 3}, d), ones({4}, d)); }, ErrorKind::kValue, {"mv", "[2, 3]", "[4]"}},
      {"outer 2-D", [](Device d) { outer(ones({2, 2}, d), ones({2}, d)); }, ErrorKind::kValue, {"outer", "1D"}},
      {"linear in_features", [](Device d) { linear(ones({2, 3}, d), ones({4, 5}, d)); }, ErrorKind::kValue,
       {"linear", "[2, 3]", "[4, 5]"}},
      {"linear bias shape", [](Device d) { linear(ones({2, 3}, d), ones({4, 3}, d), ones({3}, d)); },
       ErrorKind::kValue, {"linear", "bias", "[3]"}},
  };
}

}  // namespace tessera::conformance
