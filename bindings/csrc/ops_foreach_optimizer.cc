// Multi-tensor ops (runtime/ops/foreach_ops.h) as PyTorch's
// tessera._foreach_<op> (new tensors) and _foreach_<op>_ (in place,
// returning None) over lists of tensors, with a list of tensors, a number,
// a list of numbers or a 0-d tensor as the other operand; and the fused
// optimizer steps (ops_fused_optimizer.cc).
//
// As PyTorch's CUDA kernels, a foreach call (ForeachCall, foreach_call.h)
// runs as one multi-tensor op only when its lists are plain: every tensor
// on one device, of one floating dtype, each entry's tensors of one shape,
// and (for 16-bit lists) every number exact in the list's dtype, since the
// multi-tensor op takes numbers as 0-d tensors of that dtype; in place, no
// entry may write memory another entry reads. Any other call (integer
// lists, mixed dtypes or devices, broadcasting, aliasing) runs the
// single-tensor op per entry, in order, with its type promotion.
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/foreach_call.h"
#include "bindings/csrc/fused_optimizer.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::PointwiseEntry;
using tessera::PointwiseOpCode;
using tessera::Scalar;
using tessera::Tensor;
using tessera::TensorOptions;
using tessera::kernels::BinaryOp;
using tessera::kernels::PointwiseBinaryOp;
using tessera::kernels::TernaryOp;
using tessera::kernels::UnaryOp;

// An op's two routes and its documentation; def_forms registers its
// functional and in-place forms for one way of passing the operands.
struct ForeachOp {
  std::string name;  // "_foreach_add"
  Encode encode;
  PerEntry per_entry;
  PerEntryInPlace per_entry_;
  std::string doc;
};

template <typename... Args, typename... Extra>
void def_forms(py::module_& m, const ForeachOp& op, std::function<void(ForeachCall&, Args...)> add,
               const Extra&... extra) {
  const std::string name = op.name;
  m.def(name.c_str(), [op, add](const TensorListArg& self, Args... args) {
    ForeachCall c(op.name.c_str(), self);
    add(c, args...);
    return c.run(op.encode, op.per_entry);
  }, "self"_a, extra..., ReleaseGil(), op.doc.c_str());
  m.def((name + "_").c_str(), [op, add](const TensorListArg& self, Args... args) {
    const std::string in_place = op.name + "_";
    ForeachCall c(in_place.c_str(), self);
    add(c, args...);
    c.run_(op.encode, op.per_entry_);
  }, "self"_a, extra..., ReleaseGil(), (op.doc + " In place; returns None.").c_str());
}

// The numbers of a 1-d tensor (addcmul's `scalars` given as a tensor).
ScalarList numbers_of(const Tensor& t) {
  TESSERA_CHECK(t.dim() == 1, ValueError, "expected a 1-d tensor of scalars, got ",
                tessera::describe(t));
  ScalarList out;
  if (tessera::is_floating(t.dtype())) {
    for (double v : t.to_vector<double>()) out.emplace_back(v);
  } else {
    for (int64_t v : t.to_vector<int64_t>()) out.emplace_back(v);
  }
  return out;
}

// -- add, sub, mul, div.

// a * b, integral when both are (a number operand times alpha).
Scalar product(Scalar a, Scalar b) {
  if (a.is_floating() || b.is_floating()) return Scalar(a.to<double>() * b.to<double>());
  return Scalar(a.to<int64_t>() * b.to<int64_t>());
}

Tensor binary(BinaryOp op, const Tensor& a, const EntryValue& b, Scalar alpha) {
  return std::visit([&](const auto& other) -> Tensor {
    switch (op) {
      case BinaryOp::kAdd: return tessera::add(a, other, alpha);
      case BinaryOp::kSub: return tessera::sub(a, other, alpha);
      case BinaryOp::kMul: return tessera::mul(a, other);
      case BinaryOp::kDiv: return tessera::div(a, other);
    }
    return {};
  }, b);
}

void binary_(BinaryOp op, Tensor a, const EntryValue& b, Scalar alpha) {
  if (const Tensor* t = std::get_if<Tensor>(&b)) {
    switch (op) {
      case BinaryOp::kAdd: a.add_(*t, alpha); return;
      case BinaryOp::kSub: a.sub_(*t, alpha); return;
      case BinaryOp::kMul: a.mul_(*t); return;
      case BinaryOp::kDiv: a.div_(*t); return;
    }
  }
  const Scalar s = std::get<Scalar>(b);
  switch (op) {
    case BinaryOp::kAdd: tessera::add_(a, s, alpha); return;
    case BinaryOp::kSub: tessera::sub_(a, s, alpha); return;
    case BinaryOp::kMul: tessera::mul_(a, s); return;
    case BinaryOp::kDiv: tessera::div_(a, s); return;
  }
}

void def_binary(py::module_& m, const char* name, BinaryOp code, const char* symbol) {
  const bool has_alpha = code == BinaryOp::kAdd || code == BinaryOp::kSub;
  ForeachOp op;
  op.name = std::string("_foreach_") + name;
  // add and sub run a number as alpha times a 0-d one (keeping its full
  // value); mul and div take it as a 0-d tensor.
  op.encode = [code, has_alpha](const ForeachCall& c, std::vector<PointwiseEntry>& e) {
    const bool as_alpha = has_alpha && c.is_number(0);
    const TensorList b = as_alpha ? c.filled(1) : c.tensors(0);
    for (size_t i = 0; i < e.size(); ++i) {
      e[i].b = b[i];
      e[i].s0 = as_alpha ? product(c.number_value(0, i), c.arg_of(i)) : c.arg_of(i);
    }
    return PointwiseOpCode(code);
  };
  op.per_entry = [code](const ForeachCall& c, size_t i) {
    return binary(code, c.self()[i], c.value(0, i), c.arg_of(i));
  };
  op.per_entry_ = [code](const ForeachCall& c, size_t i) {
    binary_(code, c.self()[i], c.value(0, i), c.arg_of(i));
  };
  op.doc = std::string("Per entry: self[i] ") + symbol + (has_alpha ? " alpha * " : " ") +
           "other[i]; other a list of tensors, a number, a list of numbers (`scalars`) or a 0-d "
           "tensor.";
  if (has_alpha) {
    def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& other, Scalar alpha) {
      c.list(other, "other").arg(alpha);
    }), "other"_a, py::kw_only(), "alpha"_a = 1);
  } else {
    def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& other) {
      c.list(other, "other");
    }), "other"_a);
  }
  if (code == BinaryOp::kAdd) {
    def_forms(m, op, std::function([](ForeachCall& c, const Tensor& other, Scalar alpha) {
      c.tensor(other).arg(alpha);
    }), "other"_a, py::kw_only(), "alpha"_a = 1);
  } else if (code != BinaryOp::kSub) {
    def_forms(m, op, std::function([](ForeachCall& c, const Tensor& other) { c.tensor(other); }),
              "other"_a);
  }
  def_forms(m, op, std::function([](ForeachCall& c, Scalar scalar) { c.number(scalar); }),
            "scalar"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const ScalarList& scalars) {
    c.numbers(scalars, "scalars");
  }), "scalars"_a);
}

// -- maximum, minimum, clamp_min, clamp_max: with a list, the NaN-
// propagating maximum/minimum (clamp_min/clamp_max with tensor bounds);
// with numbers, clamp.

void def_extremum(py::module_& m, const char* name, bool upper_bound, bool clamp_list) {
  ForeachOp op;
  op.name = std::string("_foreach_") + name;
  op.encode = [upper_bound](const ForeachCall& c, std::vector<PointwiseEntry>& e) {
    if (c.is_number(0)) {
      for (size_t i = 0; i < e.size(); ++i) e[i].s0 = c.number_value(0, i);
      return PointwiseOpCode(upper_bound ? UnaryOp::kClampMax : UnaryOp::kClampMin);
    }
    const TensorList b = c.tensors(0);
    for (size_t i = 0; i < e.size(); ++i) e[i].b = b[i];
    return PointwiseOpCode(upper_bound ? PointwiseBinaryOp::kMinimum : PointwiseBinaryOp::kMaximum);
  };
  op.per_entry = [upper_bound, clamp_list](const ForeachCall& c, size_t i) -> Tensor {
    const Tensor& a = c.self()[i];
    if (c.is_number(0)) {
      const Scalar s = c.number_value(0, i);
      return upper_bound ? tessera::clamp_max(a, s) : tessera::clamp_min(a, s);
    }
    const Tensor b = c.tensor_value(0, i);
    if (clamp_list) return upper_bound ? tessera::clamp_max(a, b) : tessera::clamp_min(a, b);
    return upper_bound ? tessera::minimum(a, b) : tessera::maximum(a, b);
  };
  op.per_entry_ = [upper_bound, clamp_list](const ForeachCall& c, size_t i) {
    Tensor a = c.self()[i];
    if (c.is_number(0)) {
      const Scalar s = c.number_value(0, i);
      upper_bound ? tessera::clamp_max_(a, s) : tessera::clamp_min_(a, s);
      return;
    }
    const Tensor b = c.tensor_value(0, i);
    if (clamp_list) {
      upper_bound ? tessera::clamp_max_(a, b) : tessera::clamp_min_(a, b);
    } else {
      upper_bound ? tessera::minimum_(a, b) : tessera::maximum_(a, b);
    }
  };
  op.doc = std::string("Per entry: the elementwise ") + (upper_bound ? "minimum" : "maximum") +
           " of self[i] and other[i] (a list of tensors, NaN-propagating), or self[i] clamped " +
           (upper_bound ? "above" : "below") + " by a number (`scalar`, or one per entry: "
           "`scalars`).";
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& other) {
    c.list(other, "other");
  }), "other"_a);
  def_forms(m, op, std::function([](ForeachCall& c, Scalar scalar) { c.number(scalar); }),
            "scalar"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const ScalarList& scalars) {
    c.numbers(scalars, "scalars");
  }), "scalars"_a);
}

// -- pow: exponents as a list, a number or numbers; or a number's powers.

void def_pow(py::module_& m) {
  ForeachOp op;
  op.name = "_foreach_pow";
  op.encode = [](const ForeachCall& c, std::vector<PointwiseEntry>& e) {
    const TensorList b = c.tensors(0);
    for (size_t i = 0; i < e.size(); ++i) e[i].b = b[i];
    return PointwiseOpCode(PointwiseBinaryOp::kPow);
  };
  op.per_entry = [](const ForeachCall& c, size_t i) {
    return std::visit([&](const auto& e) { return tessera::pow(c.self()[i], e); }, c.value(0, i));
  };
  op.per_entry_ = [](const ForeachCall& c, size_t i) {
    Tensor a = c.self()[i];
    std::visit([&](const auto& e) { tessera::pow_(a, e); }, c.value(0, i));
  };
  op.doc = "Per entry: self[i] ** exponent[i] (a list of tensors, a number or a list of numbers).";
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& exponent) {
    c.list(exponent, "exponent");
  }), "exponent"_a);
  def_forms(m, op, std::function([](ForeachCall& c, Scalar exponent) { c.number(exponent); }),
            "exponent"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const ScalarList& exponent) {
    c.numbers(exponent, "exponent");
  }), "exponent"_a);
  // A number raised to each tensor: per entry (rare; no multi-tensor form).
  m.def("_foreach_pow", [](Scalar base, const TensorListArg& exponent) {
    TensorList out;
    for (const Tensor& e : exponent) out.push_back(tessera::pow(base, e));
    return out;
  }, "self"_a, "exponent"_a, ReleaseGil());
}

// -- lerp: weights as a list, a number or numbers.

void def_lerp(py::module_& m) {
  ForeachOp op;
  op.name = "_foreach_lerp";
  op.encode = [](const ForeachCall& c, std::vector<PointwiseEntry>& e) {
    const TensorList end = c.tensors(0), weight = c.tensors(1);
    for (size_t i = 0; i < e.size(); ++i) {
      e[i].b = end[i];
      e[i].c = weight[i];
    }
    return PointwiseOpCode(TernaryOp::kLerp);
  };
  op.per_entry = [](const ForeachCall& c, size_t i) {
    const Tensor end = c.tensor_value(0, i);
    return std::visit([&](const auto& w) { return tessera::lerp(c.self()[i], end, w); },
                      c.value(1, i));
  };
  op.per_entry_ = [](const ForeachCall& c, size_t i) {
    Tensor a = c.self()[i];
    const Tensor end = c.tensor_value(0, i);
    std::visit([&](const auto& w) { tessera::lerp_(a, end, w); }, c.value(1, i));
  };
  op.doc = "Per entry: self[i] + weight * (tensors1[i] - self[i]); weights a list of tensors, "
           "a number or a list of numbers.";
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& end,
                                    const TensorListArg& weights) {
    c.list(end, "tensors1").list(weights, "weights");
  }), "tensors1"_a, "weights"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& end, Scalar weight) {
    c.list(end, "tensors1").number(weight);
  }), "tensors1"_a, "weight"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& end,
                                    const ScalarList& weight) {
    c.list(end, "tensors1").numbers(weight, "weight");
  }), "tensors1"_a, "weight"_a);
}

// -- addcmul, addcdiv: the value as a number, numbers or a 1-d tensor.

void def_addc(py::module_& m, const char* name, TernaryOp code, const char* symbol) {
  const bool multiply = code == TernaryOp::kAddcmul;
  ForeachOp op;
  op.name = std::string("_foreach_") + name;
  op.encode = [code](const ForeachCall& c, std::vector<PointwiseEntry>& e) {
    for (size_t i = 0; i < e.size(); ++i) {
      e[i].b = c.tensor_value(0, i);
      e[i].c = c.tensor_value(1, i);
      e[i].s0 = c.arg_of(i);
    }
    return PointwiseOpCode(code);
  };
  op.per_entry = [multiply](const ForeachCall& c, size_t i) {
    const Tensor t1 = c.tensor_value(0, i), t2 = c.tensor_value(1, i);
    return multiply ? tessera::addcmul(c.self()[i], t1, t2, c.arg_of(i))
                    : tessera::addcdiv(c.self()[i], t1, t2, c.arg_of(i));
  };
  op.per_entry_ = [multiply](const ForeachCall& c, size_t i) {
    Tensor a = c.self()[i];
    const Tensor t1 = c.tensor_value(0, i), t2 = c.tensor_value(1, i);
    multiply ? tessera::addcmul_(a, t1, t2, c.arg_of(i))
             : tessera::addcdiv_(a, t1, t2, c.arg_of(i));
  };
  op.doc = std::string("Per entry: self[i] + value * tensor1[i] ") + symbol +
           " tensor2[i]; value a number, or one per entry (`scalars`: numbers or a 1-d tensor).";
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& t1,
                                    const TensorListArg& t2, const Tensor& scalars) {
    c.list(t1, "tensor1").list(t2, "tensor2").args(numbers_of(scalars), "scalars");
  }), "tensor1"_a, "tensor2"_a, "scalars"_a);
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& t1,
                                    const TensorListArg& t2, Scalar value) {
    c.list(t1, "tensor1").list(t2, "tensor2").arg(value);
  }), "tensor1"_a, "tensor2"_a, "value"_a = 1);
  def_forms(m, op, std::function([](ForeachCall& c, const TensorListArg& t1,
                                    const TensorListArg& t2, const ScalarList& scalars) {
    c.list(t1, "tensor1").list(t2, "tensor2").args(scalars, "scalars");
  }), "tensor1"_a, "tensor2"_a, "scalars"_a);
}

// -- Unary ops.

struct UnarySpec {
  const char* name;
  UnaryOp code;
  Tensor (*fn)(const Tensor&);
  Tensor& (*fn_)(Tensor&);
};

void def_unary(py::module_& m, const UnarySpec& spec) {
  ForeachOp op;
  op.name = std::string("_foreach_") + spec.name;
  const UnaryOp code = spec.code;
  op.encode = [code](const ForeachCall&, std::vector<PointwiseEntry>&) {
    return PointwiseOpCode(code);
  };
  auto fn = spec.fn;
  auto fn_ = spec.fn_;
  op.per_entry = [fn](const ForeachCall& c, size_t i) { return fn(c.self()[i]); };
  op.per_entry_ = [fn_](const ForeachCall& c, size_t i) {
    Tensor a = c.self()[i];
    fn_(a);
  };
  op.doc = std::string("Per entry: ") + spec.name + "(self[i]).";
  def_forms(m, op, std::function([](ForeachCall&) {}));
}

#define TESSERA_UNARY_SPEC(name, code) \
  UnarySpec { #name, UnaryOp::code, &tessera::name, &tessera::name##_ }

void register_foreach(py::module_& m) {
  def_binary(m, "add", BinaryOp::kAdd, "+");
  def_binary(m, "sub", BinaryOp::kSub, "-");
  def_binary(m, "mul", BinaryOp::kMul, "*");
  def_binary(m, "div", BinaryOp::kDiv, "/");
  def_extremum(m, "maximum", /*upper_bound=*/false, /*clamp_list=*/false);
  def_extremum(m, "minimum", /*upper_bound=*/true, /*clamp_list=*/false);
  def_extremum(m, "clamp_min", /*upper_bound=*/false, /*clamp_list=*/true);
  def_extremum(m, "clamp_max", /*upper_bound=*/true, /*clamp_list=*/true);
  def_pow(m);
  def_lerp(m);
  def_addc(m, "addcmul", TernaryOp::kAddcmul, "*");
  def_addc(m, "addcdiv", TernaryOp::kAddcdiv, "/");
  // The Foreach rows of the runtime's unary op table.
#define TESSERA_UNARY_SPEC_Foreach(name, Enum) TESSERA_UNARY_SPEC(name, k##Enum),
#define TESSERA_UNARY_SPEC_NoForeach(name, Enum)
#define TESSERA_UNARY_SPEC_ROW(Enum, name, Rule, Forms, Foreach) \
  TESSERA_UNARY_SPEC_##Foreach(name, Enum)
  for (const UnarySpec& spec : {TESSERA_UNARY_OP_TABLE(TESSERA_UNARY_SPEC_ROW)}) {
    def_unary(m, spec);
  }
#undef TESSERA_UNARY_SPEC_ROW
#undef TESSERA_UNARY_SPEC_Foreach
#undef TESSERA_UNARY_SPEC_NoForeach

  // Not pointwise kernels, but what the optimizers call beside them.
  m.def("_foreach_zero_", [](const TensorListArg& self) {
    for (Tensor t : self) t.zero_();
  }, "self"_a, ReleaseGil(), "Per entry: self[i].zero_().");
  m.def("_foreach_copy_", [](const TensorListArg& self, const TensorListArg& src,
                               bool non_blocking) {
    TESSERA_CHECK(src.size() == self.size(), ValueError, "_foreach_copy_: expected ", self.size(),
                  " tensors in src (one per entry of self), got ", src.size());
    for (size_t i = 0; i < self.size(); ++i) {
      Tensor t = self[i];
      t.copy_(src[i], non_blocking);
    }
  }, "self"_a, "src"_a, "non_blocking"_a = false, ReleaseGil(),
     "Per entry: self[i].copy_(src[i]) (broadcast, cast, across devices).");
  m.def("_foreach_norm", [](const TensorListArg& self, double ord, std::optional<DType> dtype) {
    return tessera::foreach_norm("_foreach_norm", self, ord, dtype);
  }, "self"_a, "ord"_a = 2.0, "dtype"_a = py::none(), ReleaseGil(),
     "Per entry: the vector norm of self[i] (any order) as a 0-d tensor, computed in dtype if "
     "given; one multi-tensor kernel for orders 1, 2 and inf where the device has one.");
}

#undef TESSERA_UNARY_SPEC

}  // namespace

void register_foreach_optimizer_ops(py::module_& m) {
  register_foreach(m);
  register_fused_optimizer_ops(m);
  register_grad_scaler_ops(m);
}

}  // namespace tessera_py
