// Matrix products on tessera: mm, bmm, addmm, baddbmm, dot, vdot, mv, addmv, with
// their out= and in-place forms, over the runtime's GEMM-backed ops.
// linear, matmul, outer and ger are CompositeImplicit in aten and reach
// these (mm, addmm, bmm) or pointwise mul; they need no kernel here.
// Also linalg_cross (torch.cross reaches it) and cdist's _cdist_forward /
// _cdist_backward (cdist itself takes p = 2 with more than 25 rows through
// _euclidean_dist, a composite of matmul and pointwise ops).
#include <torch/library.h>

#include <initializer_list>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// -- mm / bmm ------------------------------------------------------------------------

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  OpScope scope(self, mat2);
  return fresh([&] { return tessera::mm(to_runtime(self, "mm"), to_runtime(mat2, "mm")); });
}

// The out= products: aten takes no cast, so out must have the operands'
// dtype; it is resized to the product's shape, then the runtime's _out form
// writes it directly (compiled graphs call these with preallocated buffers).
void prepare_product_out(const char* op, at::Tensor& out, const at::Tensor& operand,
                         std::initializer_list<int64_t> sizes, bool shapes_known) {
  TORCH_CHECK(out.scalar_type() == operand.scalar_type(), op, ": Expected out tensor to have "
              "dtype ", operand.scalar_type(), ", but got ", out.scalar_type(), " instead");
  if (shapes_known) resize_output(out, sizes);
}

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  OpScope scope(self, mat2, out);
  const bool known = self.dim() == 2 && mat2.dim() == 2;
  prepare_product_out("mm", out, self, {known ? self.size(0) : 0, known ? mat2.size(1) : 0},
                      known);
  tessera::Tensor o = to_runtime(out, "mm");
  call_runtime([&] { tessera::mm_out(o, to_runtime(self, "mm"), to_runtime(mat2, "mm")); });
  return out;
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  OpScope scope(self, mat2);
  return fresh([&] { return tessera::bmm(to_runtime(self, "bmm"), to_runtime(mat2, "bmm")); });
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  OpScope scope(self, mat2, out);
  const bool known = self.dim() == 3 && mat2.dim() == 3;
  prepare_product_out("bmm", out, self,
                      {known ? self.size(0) : 0, known ? self.size(1) : 0,
                       known ? mat2.size(2) : 0},
                      known);
  tessera::Tensor o = to_runtime(out, "bmm");
  call_runtime([&] { tessera::bmm_out(o, to_runtime(self, "bmm"), to_runtime(mat2, "bmm")); });
  return out;
}

// -- addmm / baddbmm -----------------------------------------------------------------

tessera::Tensor addmm_of(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                         const c10::Scalar& beta, const c10::Scalar& alpha) {
  constexpr const char* op = "addmm";
  return tessera::addmm(to_runtime(self, op), to_runtime(mat1, op), to_runtime(mat2, op),
                        to_runtime_scalar(beta, op), to_runtime_scalar(alpha, op));
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, mat1, mat2);
  return fresh([&] { return addmm_of(self, mat1, mat2, beta, alpha); });
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  OpScope scope(self, mat1, mat2, out);
  constexpr const char* op = "addmm";
  const bool known = mat1.dim() == 2 && mat2.dim() == 2;
  prepare_product_out(op, out, mat1, {known ? mat1.size(0) : 0, known ? mat2.size(1) : 0}, known);
  tessera::Tensor o = to_runtime(out, op);
  call_runtime([&] {
    tessera::addmm_out(o, to_runtime(self, op), to_runtime(mat1, op), to_runtime(mat2, op),
                       to_runtime_scalar(beta, op), to_runtime_scalar(alpha, op));
  });
  return out;
}

at::Tensor& addmm_inplace(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, mat1, mat2);
  constexpr const char* op = "addmm_";
  tessera::Tensor s = to_runtime(self, op);
  call_runtime([&] {
    tessera::addmm_(s, to_runtime(mat1, op), to_runtime(mat2, op), to_runtime_scalar(beta, op),
                    to_runtime_scalar(alpha, op));
  });
  return self;
}

tessera::Tensor baddbmm_of(const at::Tensor& self, const at::Tensor& batch1,
                           const at::Tensor& batch2, const c10::Scalar& beta,
                           const c10::Scalar& alpha) {
  constexpr const char* op = "baddbmm";
  return tessera::baddbmm(to_runtime(self, op), to_runtime(batch1, op), to_runtime(batch2, op),
                          to_runtime_scalar(beta, op), to_runtime_scalar(alpha, op));
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, batch1, batch2);
  return fresh([&] { return baddbmm_of(self, batch1, batch2, beta, alpha); });
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1,
                        const at::Tensor& batch2, const c10::Scalar& beta,
                        const c10::Scalar& alpha, at::Tensor& out) {
  OpScope scope(self, batch1, batch2, out);
  constexpr const char* op = "baddbmm";
  const bool known = batch1.dim() == 3 && batch2.dim() == 3;
  prepare_product_out(op, out, batch1,
                      {known ? batch1.size(0) : 0, known ? batch1.size(1) : 0,
                       known ? batch2.size(2) : 0},
                      known);
  tessera::Tensor o = to_runtime(out, op);
  call_runtime([&] {
    tessera::baddbmm_out(o, to_runtime(self, op), to_runtime(batch1, op), to_runtime(batch2, op),
                         to_runtime_scalar(beta, op), to_runtime_scalar(alpha, op));
  });
  return out;
}

at::Tensor& baddbmm_inplace(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                            const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, batch1, batch2);
  constexpr const char* op = "baddbmm_";
  tessera::Tensor s = to_runtime(self, op);
  call_runtime([&] {
    tessera::baddbmm_(s, to_runtime(batch1, op), to_runtime(batch2, op),
                      to_runtime_scalar(beta, op), to_runtime_scalar(alpha, op));
  });
  return self;
}

// -- dot / mv / addmv ------------------------------------------------------------------

at::Tensor dot(const at::Tensor& self, const at::Tensor& tensor) {
  OpScope scope(self, tensor);
  return fresh([&] { return tessera::dot(to_runtime(self, "dot"), to_runtime(tensor, "dot")); });
}

// vdot conjugates its first argument; only real tensors reach this kernel
// (complex ones go to complex_ops.cc), so it is dot.
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  OpScope scope(self, other);
  return fresh([&] { return tessera::dot(to_runtime(self, "vdot"), to_runtime(other, "vdot")); });
}

at::Tensor mv(const at::Tensor& self, const at::Tensor& vec) {
  OpScope scope(self, vec);
  return fresh([&] { return tessera::mv(to_runtime(self, "mv"), to_runtime(vec, "mv")); });
}

at::Tensor& mv_out(const at::Tensor& self, const at::Tensor& vec, at::Tensor& out) {
  OpScope scope(self, vec);
  return write_out_exact(out, call_runtime([&] {
                     return tessera::mv(to_runtime(self, "mv"), to_runtime(vec, "mv"));
                   }));
}

// beta * self + alpha * (mat @ vec). The runtime has no addmv; it is mv
// and one add, as aten defines it: beta == 0 ignores self (NaN included),
// but self must still broadcast to [M].
tessera::Tensor addmv_of(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                         const c10::Scalar& beta, const c10::Scalar& alpha) {
  constexpr const char* op = "addmv";
  const tessera::Tensor s = to_runtime(self, op);
  tessera::Tensor product = tessera::mv(to_runtime(mat, op), to_runtime(vec, op));
  tessera::broadcast_shapes(s.sizes(), product.sizes(), op);
  TORCH_CHECK(s.dim() <= 1, "addmv: self must broadcast to [", product.size(0), "], got ",
              self.sizes());
  if (!(alpha.isIntegral(true) && alpha.toLong() == 1)) {
    product = tessera::mul(product, to_runtime_scalar(alpha, op));
  }
  if (beta.toComplexDouble() == 0.0) return product;  // shapes were checked above
  return tessera::add(product, s, to_runtime_scalar(beta, op));
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, mat, vec);
  return fresh([&] { return addmv_of(self, mat, vec, beta, alpha); });
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  OpScope scope(self, mat, vec);
  return write_out_exact(out, call_runtime([&] { return addmv_of(self, mat, vec, beta, alpha); }));
}

at::Tensor& addmv_inplace(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  OpScope scope(self, mat, vec);
  const tessera::Tensor result = call_runtime([&] { return addmv_of(self, mat, vec, beta, alpha); });
  TORCH_CHECK(self.sizes() == c10::IntArrayRef(result.sizes()),
              "addmv_: self of shape ", self.sizes(), " cannot hold the result of shape ",
              c10::IntArrayRef(result.sizes()));
  tessera::Tensor dst = to_runtime(self, "addmv_");
  call_runtime([&] { dst.copy_(result); });
  return self;
}

// -- linalg_cross / cdist ------------------------------------------------------------

at::Tensor linalg_cross(const at::Tensor& self, const at::Tensor& other, int64_t dim) {
  OpScope scope(self, other);
  return fresh([&] {
    return tessera::linalg_cross(to_runtime(self, "linalg.cross"), to_runtime(other, "linalg.cross"),
                                 dim);
  });
}

at::Tensor& linalg_cross_out(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                             at::Tensor& out) {
  OpScope scope(self, other);
  return write_out_exact(out, call_runtime([&] {
                     return tessera::linalg_cross(to_runtime(self, "linalg.cross"),
                                                  to_runtime(other, "linalg.cross"), dim);
                   }));
}

// compute_mode only chooses between this and _euclidean_dist, upstream.
at::Tensor cdist_forward(const at::Tensor& x1, const at::Tensor& x2, double p,
                         std::optional<int64_t> /*compute_mode*/) {
  OpScope scope(x1, x2);
  return fresh([&] { return tessera::cdist(to_runtime(x1, "cdist"), to_runtime(x2, "cdist"), p); });
}

at::Tensor cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                          double p, const at::Tensor& cdist) {
  OpScope scope(grad, x1);
  constexpr const char* op = "cdist_backward";
  return fresh([&] {
    return tessera::cdist_backward(to_runtime(grad, op), to_runtime(x1, op), to_runtime(x2, op), p,
                                   to_runtime(cdist, op));
  });
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("mm", TORCH_FN(mm));
  m.impl("mm.out", TORCH_FN(mm_out));
  m.impl("bmm", TORCH_FN(bmm));
  m.impl("bmm.out", TORCH_FN(bmm_out));
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("addmm.out", TORCH_FN(addmm_out));
  m.impl("addmm_", TORCH_FN(addmm_inplace));
  m.impl("baddbmm", TORCH_FN(baddbmm));
  m.impl("baddbmm.out", TORCH_FN(baddbmm_out));
  m.impl("baddbmm_", TORCH_FN(baddbmm_inplace));
  m.impl("dot", TORCH_FN(dot));
  m.impl("vdot", TORCH_FN(vdot));
  m.impl("mv", TORCH_FN(mv));
  m.impl("mv.out", TORCH_FN(mv_out));
  m.impl("addmv", TORCH_FN(addmv));
  m.impl("addmv.out", TORCH_FN(addmv_out));
  m.impl("addmv_", TORCH_FN(addmv_inplace));
  m.impl("linalg_cross", TORCH_FN(linalg_cross));
  m.impl("linalg_cross.out", TORCH_FN(linalg_cross_out));
  m.impl("_cdist_forward", TORCH_FN(cdist_forward));
  m.impl("_cdist_backward", TORCH_FN(cdist_backward));
}

}  // namespace
}  // namespace torch_tessera
