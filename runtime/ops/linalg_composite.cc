// addmm, baddbmm, dot, mv, outer, linear and the out= forms of the
// products: composites over mm/bmm/matmul (hence the Bmm kernel) and the
// pointwise ops, so a device gets them all from one GEMM kernel.
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

bool scalar_is(const Scalar& s, double v) { return s.to<double>() == v; }


// PyTorch's CPU GEMM ops take one dtype for all operands.
void check_same(const char* op, const Tensor& a, const Tensor& b) {
  common_device(op, a, b);
  TESSERA_CHECK(a.device() == b.device(), DeviceError, op,
                ": expected all tensors on the same device, got ", describe(a), " and ",
                describe(b));
  TESSERA_CHECK(a.dtype() == b.dtype(), TypeError, op,
                ": expected all tensors to have the same dtype, got ", describe(a), " and ",
                describe(b));
}

// That beta * self + alpha * prod is defined (self has the operands'
// dtype: check_same), before anything is computed.
void check_scale_add(const char* op, const Tensor& self, const Shape& prod_sizes,
                     const Scalar& beta, const Scalar& alpha) {
  TESSERA_CHECK(nn_detail::broadcasts_to(self.sizes(), prod_sizes), ValueError, op,
                ": self ", shape_to_string(self.sizes()), " cannot be broadcast to the product ",
                shape_to_string(prod_sizes));
  if (!is_floating(self.dtype())) {
    TESSERA_CHECK(!beta.is_floating() && !alpha.is_floating(), TypeError, op,
                  ": for integral input tensors, beta and alpha must not be floating point (",
                  describe(self), ")");
  }
}

// prod = beta * self + alpha * prod, in place (checked by check_scale_add):
// prod is a fresh product or an out= tensor that shares no memory with self.
Tensor& scale_add_into(const Tensor& self, Tensor& prod, const Scalar& beta,
                       const Scalar& alpha) {
  if (!scalar_is(alpha, 1)) mul_(prod, alpha);
  // beta == 0 ignores self, NaN and Inf included (PyTorch's rule).
  if (!scalar_is(beta, 0)) prod.add_(self, beta);
  return prod;
}

// f16 and bf16 take beta * self + alpha * prod from the product in float,
// rounded once at the end, as PyTorch's CPU and CUDA GEMMs do (the scale
// and sum in the GEMM's epilogue). Rounding the product to 16 bits first
// would add a second rounding to about a quarter of the elements; Muon's
// Newton-Schulz iteration (five bfloat16 addmm a step) drifts a few
// percent from CPU that way.
bool sum_in_float(const Tensor& a, const Scalar& beta, const Scalar& alpha) {
  return is_reduced_float(a.dtype()) &&
         !(scalar_is(beta, 0) && scalar_is(alpha, 1));
}

// beta * self + alpha * (a @ b) (bmm when batched, else mm) through float,
// in a's dtype.
Tensor scaled_sum_in_float(bool batched, const Tensor& self, const Tensor& a, const Tensor& b,
                           const Scalar& beta, const Scalar& alpha) {
  const Tensor a32 = a.to(DType::kF32), b32 = b.to(DType::kF32);
  Tensor prod = batched ? bmm(a32, b32) : mm(a32, b32);
  return scale_add_into(self.to(DType::kF32), prod, beta, alpha).to(a.dtype());
}

}  // namespace

Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("matmul", out, matmul(a, b));
}

static void check_addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                 const Scalar& alpha) {
  check_same("addmm", self, a);
  TESSERA_CHECK(a.dim() == 2 && b.dim() == 2, ValueError, "addmm: expected 2-D matrices, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(1) == b.size(0), ValueError, "addmm: mat1 and mat2 shapes ",
                shape_to_string(a.sizes()), " and ", shape_to_string(b.sizes()),
                " cannot be multiplied (", a.size(1), " != ", b.size(0), ")");
  check_scale_add("addmm", self, {a.size(0), b.size(1)}, beta, alpha);
}

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_addmm(self, a, b, beta, alpha);
  if (sum_in_float(a, beta, alpha)) return scaled_sum_in_float(false, self, a, b, beta, alpha);
  Tensor prod = mm(a, b);
  return scale_add_into(self, prod, beta, alpha);
}
Tensor& addmm_(Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  TESSERA_CHECK(self.dim() == 2 && a.dim() == 2 && b.dim() == 2 && self.size(0) == a.size(0) &&
                    self.size(1) == b.size(1),
                ValueError, "addmm_: self ", shape_to_string(self.sizes()),
                " does not have the product's shape (", describe(a), ", ", describe(b), ")");
  check_addmm(self, a, b, beta, alpha);
  if (sum_in_float(a, beta, alpha)) {
    self.copy_(scaled_sum_in_float(false, self, a, b, beta, alpha));
    return self;
  }
  Tensor prod = mm(a, b);
  if (scalar_is(beta, 1)) {
    // self += alpha * prod: one pass over self (a recurrent layer's gates
    // take a hidden GEMM this way every step).
    self.add_(prod, alpha);
    return self;
  }
  self.copy_(scale_add_into(self, prod, beta, alpha));
  return self;
}
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta,
                  Scalar alpha) {
  check_addmm(self, a, b, beta, alpha);
  if (!sum_in_float(a, beta, alpha) &&
      can_write_directly(out, {a.size(0), b.size(1)}, a.dtype(), a.device(), {&self, &a, &b})) {
    mm_out(out, a, b);  // straight into out: it shares no memory with the operands
    return scale_add_into(self, out, beta, alpha);
  }
  return write_out("addmm", out, addmm(self, a, b, beta, alpha));
}

static void check_baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                   const Scalar& alpha) {
  check_same("baddbmm", self, a);
  TESSERA_CHECK(a.dim() == 3 && b.dim() == 3, ValueError,
                "baddbmm: expected 3-D batch1 and batch2, got ", describe(a), " and ",
                describe(b));
  TESSERA_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), ValueError,
                "baddbmm: batch1 ", shape_to_string(a.sizes()), " and batch2 ",
                shape_to_string(b.sizes()), " cannot be multiplied");
  check_scale_add("baddbmm", self, {a.size(0), a.size(1), b.size(2)}, beta, alpha);
}

Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  check_baddbmm(self, a, b, beta, alpha);
  if (sum_in_float(a, beta, alpha)) return scaled_sum_in_float(true, self, a, b, beta, alpha);
  Tensor prod = bmm(a, b);
  return scale_add_into(self, prod, beta, alpha);
}
Tensor& baddbmm_(Tensor& self, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  Tensor r = baddbmm(self, a, b, beta, alpha);
  TESSERA_CHECK(r.sizes() == self.sizes(), ValueError, "baddbmm_: self ",
                shape_to_string(self.sizes()), " does not have the product's shape ",
                shape_to_string(r.sizes()));
  self.copy_(r);
  return self;
}
Tensor& baddbmm_out(Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b,
                    Scalar beta, Scalar alpha) {
  check_baddbmm(self, a, b, beta, alpha);
  if (!sum_in_float(a, beta, alpha) &&
      can_write_directly(out, {a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device(),
                         {&self, &a, &b})) {
    bmm_out(out, a, b);  // straight into out: it shares no memory with the operands
    return scale_add_into(self, out, beta, alpha);
  }
  return write_out("baddbmm", out, baddbmm(self, a, b, beta, alpha));
}

Tensor dot(const Tensor& a, const Tensor& b) {
  check_same("dot", a, b);
  TESSERA_CHECK(a.dim() == 1 && b.dim() == 1, ValueError, "dot: 1D tensors expected, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(0) == b.size(0), ValueError, "dot: inconsistent tensor sizes ",
                shape_to_string(a.sizes()), " and ", shape_to_string(b.sizes()));
  return mm(a.unsqueeze(0), b.unsqueeze(1)).view({});
}
Tensor& dot_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("dot", out, dot(a, b));
}

Tensor mv(const Tensor& a, const Tensor& v) {
  check_same("mv", a, v);
  TESSERA_CHECK(a.dim() == 2 && v.dim() == 1, ValueError,
                "mv: expected a 2-D matrix and a 1-D vector, got ", describe(a), " and ",
                describe(v));
  TESSERA_CHECK(a.size(1) == v.size(0), ValueError, "mv: size mismatch, ",
                shape_to_string(a.sizes()), " and ", shape_to_string(v.sizes()));
  return mm(a, v.unsqueeze(1)).squeeze(1);
}
Tensor& mv_out(Tensor& out, const Tensor& a, const Tensor& v) {
  return write_out("mv", out, mv(a, v));
}

Tensor outer(const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.dim() == 1 && b.dim() == 1, ValueError, "outer: 1D tensors expected, got ",
                describe(a), " and ", describe(b));
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}
Tensor& outer_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("outer", out, outer(a, b));
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  check_same("linear", input, weight);
  TESSERA_CHECK(weight.dim() == 1 || weight.dim() == 2, ValueError,
                "linear: weight must be 1-D or 2-D, got ", describe(weight));
  TESSERA_CHECK(input.dim() >= 1, ValueError, "linear: input must be at least 1-D, got ",
                describe(input));
  const int64_t in_features = weight.size(-1);
  TESSERA_CHECK(input.size(-1) == in_features, ValueError, "linear: input ",
                shape_to_string(input.sizes()), " and weight ", shape_to_string(weight.sizes()),
                " cannot be multiplied (", input.size(-1), " != ", in_features, ")");
  // weight.t() is a view: Bmm reads it as a column-major operand, no copy.
  Tensor prod = matmul(input, weight.dim() == 2 ? weight.t() : weight);
  if (!bias.defined()) return prod;
  check_same("linear", input, bias);
  TESSERA_CHECK(nn_detail::broadcasts_to(bias.sizes(), prod.sizes()),
                ValueError, "linear: bias ", shape_to_string(bias.sizes()),
                " cannot be broadcast to ", shape_to_string(prod.sizes()));
  return add(prod, bias);
}

}  // namespace tessera
