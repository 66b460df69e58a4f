// torch's multi-tensor ops (_foreach_add_, _foreach_addcmul_, ... : what
// the optimizers' foreach implementations and clip_grad_norm_ call) on
// tessera, as the runtime's multi-tensor op (runtime/ops/foreach_ops.h):
// one call per list instead of aten's loop of one dispatched op per
// tensor.
//
// Like PyTorch's CUDA kernels, a call takes this fast route only when the
// lists are plain: every tensor on one tessera device, of one floating
// dtype, each entry's tensors of one shape, scalars real, a Tensor operand
// 0-d. Anything else (integer lists, mixed dtypes or devices, broadcasting)
// goes to aten's per-tensor loop, which type-promotes as the single ops do.
// Scalar operands become 0-d device tensors (a scalar list: one transfer
// for all of them); a scalar that is the op's own argument (alpha,
// addcmul's value, a clamp bound) stays a scalar of its entry.
#include <ATen/ATen.h>
// Every at::native function, for the per-tensor loops (foreach_tensor_*_slow)
// that take the lists the fast route refuses: one include, so that a
// unary op added to the runtime's op table needs no line here.
#include <ATen/NativeFunctions.h>
#include <torch/library.h>

#include <variant>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using tessera::PointwiseOpCode;
using tessera::kernels::BinaryOp;
using tessera::kernels::PointwiseBinaryOp;
using tessera::kernels::TernaryOp;
using tessera::kernels::UnaryOp;

// One call's lists, checked for the fast route as they are added, then
// run as the runtime's multi-tensor op.
class ForeachCall {
 public:
  ForeachCall(const char* op, at::TensorList self) : op_(op), self_(self) {
    fast_ = !self.empty() && self[0].defined() && self[0].device().is_privateuseone() &&
            at::isFloatingType(self[0].scalar_type());
    for (const at::Tensor& t : self) fast_ = fast_ && plain(t, nullptr);
  }

  // The next input: one tensor per entry, of its entry's shape.
  ForeachCall& list(at::TensorList ts) {
    fast_ = fast_ && ts.size() == self_.size();
    for (size_t i = 0; fast_ && i < ts.size(); ++i) fast_ = plain(ts[i], &self_[i]);
    inputs_.emplace_back(ts);
    return *this;
  }
  // The next input: one value for every entry.
  ForeachCall& scalar(const at::Scalar& s) {
    fast_ = fast_ && exact_in_list_dtype(s);
    inputs_.emplace_back(s);
    return *this;
  }
  // The next input: one value per entry.
  ForeachCall& scalars(at::ArrayRef<at::Scalar> values) {
    fast_ = fast_ && values.size() == self_.size();
    for (const at::Scalar& s : values) fast_ = fast_ && exact_in_list_dtype(s);
    inputs_.emplace_back(values);
    return *this;
  }
  // The next input: a 0-d tensor for every entry (a host one is read as a
  // value; a device one must be of the list's device and dtype).
  ForeachCall& tensor(const at::Tensor& t) {
    fast_ = fast_ && t.defined() && t.dim() == 0;
    if (fast_ && t.device().is_cpu()) return scalar(t.item());
    fast_ = fast_ && t.device() == self_[0].device() && t.scalar_type() == self_[0].scalar_type();
    inputs_.emplace_back(t);
    return *this;
  }
  // The op's own scalar argument(s) (s0 of every entry): one, one per
  // entry, or the values of a 1-D tensor.
  ForeachCall& arg(const at::Scalar& s) {
    fast_ = fast_ && !s.isComplex();
    s0_ = std::vector<at::Scalar>(self_.size(), s);
    return *this;
  }
  ForeachCall& args(at::ArrayRef<at::Scalar> values) {
    fast_ = fast_ && values.size() == self_.size();
    for (const at::Scalar& s : values) fast_ = fast_ && !s.isComplex();
    s0_ = values.vec();
    return *this;
  }
  ForeachCall& args(const at::Tensor& values) {
    fast_ = fast_ && values.defined() && values.dim() == 1 &&
            values.numel() == static_cast<int64_t>(self_.size()) &&
            !at::isComplexType(values.scalar_type());
    if (!fast_) return *this;
    const at::Tensor host = values.to(at::kCPU, at::kDouble);
    s0_.clear();
    for (int64_t i = 0; i < host.numel(); ++i) s0_.emplace_back(host.data_ptr<double>()[i]);
    return *this;
  }
  bool fast() const { return fast_; }

  // Runs the entries with `code` into new tensors, which it returns.
  std::vector<at::Tensor> run(PointwiseOpCode code) {
    std::vector<at::Tensor> outs;
    outs.reserve(self_.size());
    for (const at::Tensor& t : self_) outs.push_back(at::empty_like(t));
    execute(code, outs, /*in_place=*/false);
    return outs;
  }
  // Runs the entries with `code` into self. False, having done nothing,
  // when an entry's output overlaps another entry's tensors (aten's loop
  // then runs them in order).
  bool run_in_place(PointwiseOpCode code) {
    return execute(code, self_.vec(), /*in_place=*/true);
  }

 private:
  bool execute(PointwiseOpCode code, const std::vector<at::Tensor>& outs, bool in_place) {
    OpScope scope(self_);
    return call_runtime([&] {
      std::vector<std::vector<tessera::Tensor>> operands;
      for (const Input& in : inputs_) operands.push_back(per_entry(in));
      std::vector<tessera::PointwiseEntry> entries(self_.size());
      for (size_t i = 0; i < self_.size(); ++i) {
        tessera::PointwiseEntry& e = entries[i];
        e.out = to_runtime(outs[i], op_);
        e.a = to_runtime(self_[i], op_);
        if (operands.size() > 0) e.b = operands[0][i];
        if (operands.size() > 1) e.c = operands[1][i];
        if (!s0_.empty()) e.s0 = to_runtime_scalar(s0_[i], op_);
      }
      if (in_place && !tessera::foreach_entries_independent(entries)) return false;
      tessera::foreach_pointwise(op_, code, entries);
      return true;
    });
  }

  using Input = std::variant<at::TensorList, at::Scalar, at::ArrayRef<at::Scalar>, at::Tensor>;

  // Whether a scalar operand keeps its value as a tensor of the list's
  // dtype. PyTorch computes 16-bit lists in float32 with the scalar as
  // given; a weight of 0.1 rounded to bfloat16 first would shift results,
  // so such calls take aten's loop, whose single ops keep the scalar.
  bool exact_in_list_dtype(const at::Scalar& s) const {
    if (s.isComplex()) return false;
    const at::ScalarType type = self_.empty() ? at::kFloat : self_[0].scalar_type();
    const double v = s.toDouble();
    if (type == at::kBFloat16) return static_cast<float>(c10::BFloat16(v)) == v;
    if (type == at::kHalf) return static_cast<float>(c10::Half(v)) == v;
    return true;
  }

  // On the list's device, of its dtype, and of `like`'s shape if given.
  bool plain(const at::Tensor& t, const at::Tensor* like) const {
    return t.defined() && t.device() == self_[0].device() &&
           t.scalar_type() == self_[0].scalar_type() && (!like || t.sizes() == like->sizes());
  }

  tessera::TensorOptions list_options() const {
    return tessera::TensorOptions(to_runtime_dtype(self_[0].scalar_type(), op_),
                                  to_runtime(self_[0], op_).device());
  }

  // One runtime tensor per entry for an input.
  std::vector<tessera::Tensor> per_entry(const Input& in) const {
    const size_t n = self_.size();
    if (const auto* ts = std::get_if<at::TensorList>(&in)) return to_runtime(*ts, op_);
    if (const auto* t = std::get_if<at::Tensor>(&in)) {
      return std::vector<tessera::Tensor>(n, to_runtime(*t, op_));
    }
    if (const auto* s = std::get_if<at::Scalar>(&in)) {
      return std::vector<tessera::Tensor>(
          n, tessera::full({}, to_runtime_scalar(*s, op_), list_options()));
    }
    // A scalar list: the values in one host tensor, moved in one copy.
    const auto& values = std::get<at::ArrayRef<at::Scalar>>(in);
    std::vector<double> host(values.size());
    for (size_t i = 0; i < n; ++i) host[i] = values[i].toDouble();
    const at::Tensor device_values =
        at::tensor(host, at::kDouble).to(self_[0].device(), self_[0].scalar_type());
    const tessera::Tensor all = to_runtime(device_values, op_);
    std::vector<tessera::Tensor> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(all.select(0, static_cast<int64_t>(i)));
    return out;
  }

  const char* op_;
  at::TensorList self_;
  bool fast_ = false;
  std::vector<Input> inputs_;
  std::vector<at::Scalar> s0_;
};

// Each op's overloads: the fast route when ForeachCall allows it, else
// aten's per-tensor loop.

// -- add, sub, mul, div: List, Scalar, ScalarList, Tensor.

#define TESSERA_FOREACH_BINARY(OP, CODE, SLOW) \
  std::vector<at::Tensor> OP##_list(at::TensorList self, at::TensorList other, \
                                    const at::Scalar& alpha) { \
    ForeachCall c("_foreach_" #OP ".List", self); \
    c.list(other).arg(alpha); \
    if (!c.fast()) { \
      return at::native::foreach_tensor_##SLOW##_list_kernel_slow(self, other, alpha); \
    } \
    return c.run(CODE); \
  } \
  void OP##_list_(at::TensorList self, at::TensorList other, const at::Scalar& alpha) { \
    ForeachCall c("_foreach_" #OP "_.List", self); \
    c.list(other).arg(alpha); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##SLOW##_list_kernel_slow_(self, other, alpha); \
  } \
  std::vector<at::Tensor> OP##_scalar(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP ".Scalar", self); \
    c.scalar(1).arg(s); \
    if (!c.fast()) return at::native::foreach_tensor_##SLOW##_scalar_kernel_slow(self, s); \
    return c.run(CODE); \
  } \
  void OP##_scalar_(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP "_.Scalar", self); \
    c.scalar(1).arg(s); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##SLOW##_scalar_kernel_slow_(self, s); \
  } \
  std::vector<at::Tensor> OP##_scalarlist(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP ".ScalarList", self); \
    c.scalar(1).args(s); \
    if (!c.fast()) return at::native::foreach_tensor_##SLOW##_scalarlist_kernel_slow(self, s); \
    return c.run(CODE); \
  } \
  void OP##_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP "_.ScalarList", self); \
    c.scalar(1).args(s); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##SLOW##_scalarlist_kernel_slow_(self, s); \
  }

// add and sub take alpha; mul and div do not (their List and Tensor forms
// have no alpha argument). A scalar to add or subtract is alpha times a 0-d
// one, so it keeps its full value in any dtype.
TESSERA_FOREACH_BINARY(add, BinaryOp::kAdd, add)
TESSERA_FOREACH_BINARY(sub, BinaryOp::kSub, sub)

std::vector<at::Tensor> add_tensor(at::TensorList self, const at::Tensor& other,
                                   const at::Scalar& alpha) {
  ForeachCall c("_foreach_add.Tensor", self);
  c.tensor(other).arg(alpha);
  if (!c.fast()) return at::native::foreach_tensor_add_tensor_kernel_slow(self, other, alpha);
  return c.run(BinaryOp::kAdd);
}
void add_tensor_(at::TensorList self, const at::Tensor& other, const at::Scalar& alpha) {
  ForeachCall c("_foreach_add_.Tensor", self);
  c.tensor(other).arg(alpha);
  if (c.fast() && c.run_in_place(BinaryOp::kAdd)) return;
  at::native::foreach_tensor_add_tensor_kernel_slow_(self, other, alpha);
}

#define TESSERA_FOREACH_MULDIV(OP, CODE) \
  std::vector<at::Tensor> OP##_list(at::TensorList self, at::TensorList other) { \
    ForeachCall c("_foreach_" #OP ".List", self); \
    c.list(other).arg(1); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_list_kernel_slow(self, other); \
    return c.run(CODE); \
  } \
  void OP##_list_(at::TensorList self, at::TensorList other) { \
    ForeachCall c("_foreach_" #OP "_.List", self); \
    c.list(other).arg(1); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_list_kernel_slow_(self, other); \
  } \
  std::vector<at::Tensor> OP##_scalar(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP ".Scalar", self); \
    c.scalar(s).arg(1); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_scalar_kernel_slow(self, s); \
    return c.run(CODE); \
  } \
  void OP##_scalar_(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP "_.Scalar", self); \
    c.scalar(s).arg(1); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_scalar_kernel_slow_(self, s); \
  } \
  std::vector<at::Tensor> OP##_scalarlist(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP ".ScalarList", self); \
    c.scalars(s).arg(1); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_scalarlist_kernel_slow(self, s); \
    return c.run(CODE); \
  } \
  void OP##_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP "_.ScalarList", self); \
    c.scalars(s).arg(1); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_scalarlist_kernel_slow_(self, s); \
  } \
  std::vector<at::Tensor> OP##_tensor(at::TensorList self, const at::Tensor& other) { \
    ForeachCall c("_foreach_" #OP ".Tensor", self); \
    c.tensor(other).arg(1); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_tensor_kernel_slow(self, other); \
    return c.run(CODE); \
  } \
  void OP##_tensor_(at::TensorList self, const at::Tensor& other) { \
    ForeachCall c("_foreach_" #OP "_.Tensor", self); \
    c.tensor(other).arg(1); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_tensor_kernel_slow_(self, other); \
  }

TESSERA_FOREACH_MULDIV(mul, BinaryOp::kMul)
TESSERA_FOREACH_MULDIV(div, BinaryOp::kDiv)

// -- addcmul, addcdiv: value as Scalar, ScalarList or a 1-D Tensor.

#define TESSERA_FOREACH_ADDC(OP, CODE) \
  std::vector<at::Tensor> OP##_scalar(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                                      const at::Scalar& value) { \
    ForeachCall c("_foreach_" #OP ".Scalar", self); \
    c.list(t1).list(t2).arg(value); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_scalar_slow(self, t1, t2, value); \
    return c.run(CODE); \
  } \
  void OP##_scalar_(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                    const at::Scalar& value) { \
    ForeachCall c("_foreach_" #OP "_.Scalar", self); \
    c.list(t1).list(t2).arg(value); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_scalar_slow_(self, t1, t2, value); \
  } \
  std::vector<at::Tensor> OP##_scalarlist(at::TensorList self, at::TensorList t1, \
                                          at::TensorList t2, at::ArrayRef<at::Scalar> values) { \
    ForeachCall c("_foreach_" #OP ".ScalarList", self); \
    c.list(t1).list(t2).args(values); \
    if (!c.fast()) { \
      return at::native::foreach_tensor_##OP##_scalarlist_slow(self, t1, t2, values); \
    } \
    return c.run(CODE); \
  } \
  void OP##_scalarlist_(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                        at::ArrayRef<at::Scalar> values) { \
    ForeachCall c("_foreach_" #OP "_.ScalarList", self); \
    c.list(t1).list(t2).args(values); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_scalarlist_slow_(self, t1, t2, values); \
  } \
  std::vector<at::Tensor> OP##_tensor(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                                      const at::Tensor& values) { \
    ForeachCall c("_foreach_" #OP ".Tensor", self); \
    c.list(t1).list(t2).args(values); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_tensor_slow(self, t1, t2, values); \
    return c.run(CODE); \
  } \
  void OP##_tensor_(at::TensorList self, at::TensorList t1, at::TensorList t2, \
                    const at::Tensor& values) { \
    ForeachCall c("_foreach_" #OP "_.Tensor", self); \
    c.list(t1).list(t2).args(values); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_tensor_slow_(self, t1, t2, values); \
  }

TESSERA_FOREACH_ADDC(addcmul, TernaryOp::kAddcmul)
TESSERA_FOREACH_ADDC(addcdiv, TernaryOp::kAddcdiv)

// -- lerp: weights as a list, a Scalar or a ScalarList.

std::vector<at::Tensor> lerp_list(at::TensorList self, at::TensorList end, at::TensorList weights) {
  ForeachCall c("_foreach_lerp.List", self);
  c.list(end).list(weights);
  if (!c.fast()) return at::native::foreach_tensor_ternary_lerp_slow(self, end, weights);
  return c.run(TernaryOp::kLerp);
}
void lerp_list_(at::TensorList self, at::TensorList end, at::TensorList weights) {
  ForeachCall c("_foreach_lerp_.List", self);
  c.list(end).list(weights);
  if (c.fast() && c.run_in_place(TernaryOp::kLerp)) return;
  at::native::foreach_tensor_ternary_lerp_slow_(self, end, weights);
}
std::vector<at::Tensor> lerp_scalar(at::TensorList self, at::TensorList end,
                                    const at::Scalar& weight) {
  ForeachCall c("_foreach_lerp.Scalar", self);
  c.list(end).scalar(weight);
  if (!c.fast()) return at::native::foreach_tensor_lerp_list_kernel_slow(self, end, weight);
  return c.run(TernaryOp::kLerp);
}
void lerp_scalar_(at::TensorList self, at::TensorList end, const at::Scalar& weight) {
  ForeachCall c("_foreach_lerp_.Scalar", self);
  c.list(end).scalar(weight);
  if (c.fast() && c.run_in_place(TernaryOp::kLerp)) return;
  at::native::foreach_tensor_lerp_list_kernel_slow_(self, end, weight);
}
std::vector<at::Tensor> lerp_scalarlist(at::TensorList self, at::TensorList end,
                                        at::ArrayRef<at::Scalar> weights) {
  ForeachCall c("_foreach_lerp.ScalarList", self);
  c.list(end).scalars(weights);
  if (!c.fast()) {
    return at::native::foreach_tensor_lerp_scalarlist_kernel_slow(self, end, weights);
  }
  return c.run(TernaryOp::kLerp);
}
void lerp_scalarlist_(at::TensorList self, at::TensorList end, at::ArrayRef<at::Scalar> weights) {
  ForeachCall c("_foreach_lerp_.ScalarList", self);
  c.list(end).scalars(weights);
  if (c.fast() && c.run_in_place(TernaryOp::kLerp)) return;
  at::native::foreach_tensor_lerp_scalarlist_kernel_slow_(self, end, weights);
}

// -- maximum, minimum, clamp_min, clamp_max: List, Scalar, ScalarList.
// aten defines _foreach_maximum as clamp_min (and minimum as clamp_max):
// the NaN-propagating maximum with a list, the unary clamp with scalars.

#define TESSERA_FOREACH_EXTREMUM(OP, SLOW, LIST_CODE, SCALAR_CODE) \
  std::vector<at::Tensor> OP##_list(at::TensorList self, at::TensorList other) { \
    ForeachCall c("_foreach_" #OP ".List", self); \
    c.list(other); \
    if (!c.fast()) return at::native::foreach_tensor_##SLOW##_list_kernel_slow(self, other); \
    return c.run(LIST_CODE); \
  } \
  void OP##_list_(at::TensorList self, at::TensorList other) { \
    ForeachCall c("_foreach_" #OP "_.List", self); \
    c.list(other); \
    if (c.fast() && c.run_in_place(LIST_CODE)) return; \
    at::native::foreach_tensor_##SLOW##_list_kernel_slow_(self, other); \
  } \
  std::vector<at::Tensor> OP##_scalar(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP ".Scalar", self); \
    c.arg(s); \
    if (!c.fast()) return at::native::foreach_tensor_##SLOW##_scalar_kernel_slow(self, s); \
    return c.run(SCALAR_CODE); \
  } \
  void OP##_scalar_(at::TensorList self, const at::Scalar& s) { \
    ForeachCall c("_foreach_" #OP "_.Scalar", self); \
    c.arg(s); \
    if (c.fast() && c.run_in_place(SCALAR_CODE)) return; \
    at::native::foreach_tensor_##SLOW##_scalar_kernel_slow_(self, s); \
  } \
  std::vector<at::Tensor> OP##_scalarlist(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP ".ScalarList", self); \
    c.args(s); \
    if (!c.fast()) return at::native::foreach_tensor_##SLOW##_scalarlist_kernel_slow(self, s); \
    return c.run(SCALAR_CODE); \
  } \
  void OP##_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> s) { \
    ForeachCall c("_foreach_" #OP "_.ScalarList", self); \
    c.args(s); \
    if (c.fast() && c.run_in_place(SCALAR_CODE)) return; \
    at::native::foreach_tensor_##SLOW##_scalarlist_kernel_slow_(self, s); \
  }

TESSERA_FOREACH_EXTREMUM(maximum, clamp_min, PointwiseBinaryOp::kMaximum, UnaryOp::kClampMin)
TESSERA_FOREACH_EXTREMUM(minimum, clamp_max, PointwiseBinaryOp::kMinimum, UnaryOp::kClampMax)
TESSERA_FOREACH_EXTREMUM(clamp_min, clamp_min, PointwiseBinaryOp::kMaximum, UnaryOp::kClampMin)
TESSERA_FOREACH_EXTREMUM(clamp_max, clamp_max, PointwiseBinaryOp::kMinimum, UnaryOp::kClampMax)

// -- pow: exponents as a list, a Scalar, a ScalarList, or a Scalar base.

std::vector<at::Tensor> pow_list(at::TensorList self, at::TensorList exponent) {
  ForeachCall c("_foreach_pow.List", self);
  c.list(exponent);
  if (!c.fast()) return at::native::foreach_tensor_pow_list_kernel_slow(self, exponent);
  return c.run(PointwiseBinaryOp::kPow);
}
void pow_list_(at::TensorList self, at::TensorList exponent) {
  ForeachCall c("_foreach_pow_.List", self);
  c.list(exponent);
  if (c.fast() && c.run_in_place(PointwiseBinaryOp::kPow)) return;
  at::native::foreach_tensor_pow_list_kernel_slow_(self, exponent);
}
std::vector<at::Tensor> pow_scalar(at::TensorList self, const at::Scalar& exponent) {
  ForeachCall c("_foreach_pow.Scalar", self);
  c.scalar(exponent);
  if (!c.fast()) return at::native::foreach_tensor_pow_scalar_kernel_slow(self, exponent);
  return c.run(PointwiseBinaryOp::kPow);
}
void pow_scalar_(at::TensorList self, const at::Scalar& exponent) {
  ForeachCall c("_foreach_pow_.Scalar", self);
  c.scalar(exponent);
  if (c.fast() && c.run_in_place(PointwiseBinaryOp::kPow)) return;
  at::native::foreach_tensor_pow_scalar_kernel_slow_(self, exponent);
}
std::vector<at::Tensor> pow_scalarlist(at::TensorList self, at::ArrayRef<at::Scalar> exponent) {
  ForeachCall c("_foreach_pow.ScalarList", self);
  c.scalars(exponent);
  if (!c.fast()) return at::native::foreach_tensor_pow_scalarlist_kernel_slow(self, exponent);
  return c.run(PointwiseBinaryOp::kPow);
}
void pow_scalarlist_(at::TensorList self, at::ArrayRef<at::Scalar> exponent) {
  ForeachCall c("_foreach_pow_.ScalarList", self);
  c.scalars(exponent);
  if (c.fast() && c.run_in_place(PointwiseBinaryOp::kPow)) return;
  at::native::foreach_tensor_pow_scalarlist_kernel_slow_(self, exponent);
}

// -- unary ops: functional and in place.

#define TESSERA_FOREACH_UNARY(OP, CODE) \
  std::vector<at::Tensor> OP##_unary(at::TensorList self) { \
    ForeachCall c("_foreach_" #OP, self); \
    if (!c.fast()) return at::native::foreach_tensor_##OP##_slow(self); \
    return c.run(CODE); \
  } \
  void OP##_unary_(at::TensorList self) { \
    ForeachCall c("_foreach_" #OP "_", self); \
    if (c.fast() && c.run_in_place(CODE)) return; \
    at::native::foreach_tensor_##OP##_slow_(self); \
  }

// The Foreach rows of the runtime's unary op table.
#define TESSERA_FOREACH_UNARY_Foreach(name, Enum) TESSERA_FOREACH_UNARY(name, UnaryOp::k##Enum)
#define TESSERA_FOREACH_UNARY_NoForeach(name, Enum)
#define TESSERA_FOREACH_UNARY_ROW(Enum, name, Rule, Forms, Foreach) \
  TESSERA_FOREACH_UNARY_##Foreach(name, Enum)
TESSERA_UNARY_OP_TABLE(TESSERA_FOREACH_UNARY_ROW)
#undef TESSERA_FOREACH_UNARY_ROW
#undef TESSERA_FOREACH_UNARY_Foreach
#undef TESSERA_FOREACH_UNARY_NoForeach

#define TESSERA_IMPL_BINARY_FORMS(OP) \
  m.impl("_foreach_" #OP ".List", TORCH_FN(OP##_list)); \
  m.impl("_foreach_" #OP "_.List", TORCH_FN(OP##_list_)); \
  m.impl("_foreach_" #OP ".Scalar", TORCH_FN(OP##_scalar)); \
  m.impl("_foreach_" #OP "_.Scalar", TORCH_FN(OP##_scalar_)); \
  m.impl("_foreach_" #OP ".ScalarList", TORCH_FN(OP##_scalarlist)); \
  m.impl("_foreach_" #OP "_.ScalarList", TORCH_FN(OP##_scalarlist_));

#define TESSERA_IMPL_TENSOR_FORMS(OP) \
  m.impl("_foreach_" #OP ".Tensor", TORCH_FN(OP##_tensor)); \
  m.impl("_foreach_" #OP "_.Tensor", TORCH_FN(OP##_tensor_));

#define TESSERA_IMPL_UNARY(OP) \
  m.impl("_foreach_" #OP, TORCH_FN(OP##_unary)); \
  m.impl("_foreach_" #OP "_", TORCH_FN(OP##_unary_));

TESSERA_ATEN_KERNELS(m) {
  TESSERA_IMPL_BINARY_FORMS(add)
  TESSERA_IMPL_TENSOR_FORMS(add)
  TESSERA_IMPL_BINARY_FORMS(sub)
  TESSERA_IMPL_BINARY_FORMS(mul)
  TESSERA_IMPL_TENSOR_FORMS(mul)
  TESSERA_IMPL_BINARY_FORMS(div)
  TESSERA_IMPL_TENSOR_FORMS(div)
  m.impl("_foreach_addcmul.Scalar", TORCH_FN(addcmul_scalar));
  m.impl("_foreach_addcmul_.Scalar", TORCH_FN(addcmul_scalar_));
  m.impl("_foreach_addcmul.ScalarList", TORCH_FN(addcmul_scalarlist));
  m.impl("_foreach_addcmul_.ScalarList", TORCH_FN(addcmul_scalarlist_));
  TESSERA_IMPL_TENSOR_FORMS(addcmul)
  m.impl("_foreach_addcdiv.Scalar", TORCH_FN(addcdiv_scalar));
  m.impl("_foreach_addcdiv_.Scalar", TORCH_FN(addcdiv_scalar_));
  m.impl("_foreach_addcdiv.ScalarList", TORCH_FN(addcdiv_scalarlist));
  m.impl("_foreach_addcdiv_.ScalarList", TORCH_FN(addcdiv_scalarlist_));
  TESSERA_IMPL_TENSOR_FORMS(addcdiv)
  m.impl("_foreach_lerp.List", TORCH_FN(lerp_list));
  m.impl("_foreach_lerp_.List", TORCH_FN(lerp_list_));
  m.impl("_foreach_lerp.Scalar", TORCH_FN(lerp_scalar));
  m.impl("_foreach_lerp_.Scalar", TORCH_FN(lerp_scalar_));
  m.impl("_foreach_lerp.ScalarList", TORCH_FN(lerp_scalarlist));
  m.impl("_foreach_lerp_.ScalarList", TORCH_FN(lerp_scalarlist_));
  TESSERA_IMPL_BINARY_FORMS(maximum)
  TESSERA_IMPL_BINARY_FORMS(minimum)
  TESSERA_IMPL_BINARY_FORMS(clamp_min)
  TESSERA_IMPL_BINARY_FORMS(clamp_max)
  TESSERA_IMPL_BINARY_FORMS(pow)
#define TESSERA_IMPL_UNARY_Foreach(name) TESSERA_IMPL_UNARY(name)
#define TESSERA_IMPL_UNARY_NoForeach(name)
#define TESSERA_IMPL_UNARY_ROW(Enum, name, Rule, Forms, Foreach) TESSERA_IMPL_UNARY_##Foreach(name)
  TESSERA_UNARY_OP_TABLE(TESSERA_IMPL_UNARY_ROW)
#undef TESSERA_IMPL_UNARY_ROW
#undef TESSERA_IMPL_UNARY_Foreach
#undef TESSERA_IMPL_UNARY_NoForeach
}

}  // namespace
}  // namespace torch_tessera
