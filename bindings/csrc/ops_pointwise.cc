// Elementwise ops as tessera.<name> and, where PyTorch's Tensor has them,
// as Tensor methods with their in-place `name_` forms: unary math and
// activations, the isnan family, clamp, the binary ops with a number on
// either side where PyTorch takes one, add/sub/mul/div (alpha,
// rounding_mode), where, lerp, addcmul/addcdiv, the activation gradients and
// result_type. The Python operators are in tensor_operators.cc.
//
// The runtime's ops validate dtypes, shapes and devices; the bindings only
// pick the overload and keep PyTorch's argument names.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/pointwise_args.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Tensor;

// Which Tensor methods an op gets, after PyTorch's Tensor.
enum class Methods { kNone, kValue, kValueAndInPlace };

// Wraps runtime op `name`'s overloads in generic lambdas: `value(a, b...)`
// returns a new tensor, `in_place(self, b...)` writes self and `into(out,
// a, b...)` writes out. The return types are spelled out so that
// std::is_invocable can ask whether an overload exists.
#define TESSERA_VALUE(name) \
  [](const auto&... a) -> decltype(tessera::name(a...)) { return tessera::name(a...); }
#define TESSERA_IN_PLACE(name) \
  [](Tensor& self, const auto&... a) -> decltype(tessera::name##_(self, a...)) { \
    return tessera::name##_(self, a...);                                         \
  }
#define TESSERA_INTO(name) \
  [](Tensor& out, const auto&... a) -> decltype(tessera::name##_out(out, a...)) { \
    return tessera::name##_out(out, a...);                                        \
  }

// -- Unary: name(input, *, out=None), Tensor.name(), Tensor.name_().

template <typename Value, typename InPlace, typename Into>
void def_unary(py::module_& m, TensorClass& cls, const char* name, Value value, InPlace in_place,
               Into into, Methods methods) {
  m.def(name, [value, into](const Tensor& input, Tensor* out) {
    return value_or_out(out, [&] { return value(input); }, [&](Tensor& o) { into(o, input); });
  }, "input"_a, py::kw_only(), "out"_a = py::none());
  if (methods == Methods::kNone) return;
  cls.def(name, [value](const Tensor& self) { return value(self); }, ReleaseGil());
  if constexpr (std::is_invocable_v<InPlace, Tensor&>) {
    if (methods == Methods::kValueAndInPlace) {
      cls.def((std::string(name) + "_").c_str(),
              [in_place](Tensor& self) -> Tensor& { return in_place(self); }, ReleaseGil());
    }
  }
}

#define TESSERA_DEF_UNARY(name, methods)                                                  \
  def_unary(m, cls, #name, TESSERA_VALUE(name), TESSERA_IN_PLACE(name), TESSERA_INTO(name), \
            Methods::methods)

void register_unary(py::module_& m, TensorClass& cls) {
  // The Tensor rows of the runtime's op table are functions and Tensor
  // methods; the Function rows (torch.nn.functional's activations, which
  // PyTorch's Tensor lacks) functions only.
#define TESSERA_DEF_UNARY_Tensor(name) TESSERA_DEF_UNARY(name, kValueAndInPlace);
#define TESSERA_DEF_UNARY_Function(name) TESSERA_DEF_UNARY(name, kNone);
#define TESSERA_DEF_UNARY_Custom(name)
#define TESSERA_DEF_UNARY_ROW(Enum, name, Rule, Forms, Foreach) TESSERA_DEF_UNARY_##Forms(name)
  TESSERA_UNARY_OP_TABLE(TESSERA_DEF_UNARY_ROW)
#undef TESSERA_DEF_UNARY_ROW
#undef TESSERA_DEF_UNARY_Tensor
#undef TESSERA_DEF_UNARY_Function
#undef TESSERA_DEF_UNARY_Custom

  m.def("gelu", [](const Tensor& input, const std::string& approximate, Tensor* out) {
    return value_or_out(out, [&] { return tessera::gelu(input, approximate); },
                        [&](Tensor& o) { tessera::gelu_out(o, input, approximate); });
  }, "input"_a, py::kw_only(), "approximate"_a = "none", "out"_a = py::none(),
     "x * Phi(x); approximate='tanh' uses the tanh approximation.");

  // Bool results; out= only where PyTorch has it.
  for (auto [name, value] : {std::pair{"isnan", &tessera::isnan}, {"isinf", &tessera::isinf},
                             {"isfinite", &tessera::isfinite}}) {
    m.def(name, value, "input"_a, ReleaseGil());
    cls.def(name, value, ReleaseGil());
  }
  def_unary(m, cls, "isneginf", TESSERA_VALUE(isneginf), nullptr, TESSERA_INTO(isneginf),
            Methods::kValue);
  def_unary(m, cls, "isposinf", TESSERA_VALUE(isposinf), nullptr, TESSERA_INTO(isposinf),
            Methods::kValue);
}

// -- clamp, clamp_min, clamp_max with number or tensor bounds.

void register_clamp(py::module_& m, TensorClass& cls) {
  using OptTensor = std::optional<Tensor>;
  using OptScalar = std::optional<Scalar>;
  // Tensor bounds first: clamp(x, None, None) reaches the runtime's error.
  m.def("clamp", [](const Tensor& input, const OptTensor& min, const OptTensor& max, Tensor* out) {
    return value_or_out(out, [&] { return tessera::clamp(input, min, max); },
                        [&](Tensor& o) { tessera::clamp_out(o, input, min, max); });
  }, "input"_a, "min"_a = py::none(), "max"_a = py::none(), py::kw_only(), "out"_a = py::none());
  m.def("clamp", [](const Tensor& input, OptScalar min, OptScalar max, Tensor* out) {
    return value_or_out(out, [&] { return tessera::clamp(input, min, max); },
                        [&](Tensor& o) { tessera::clamp_out(o, input, min, max); });
  }, "input"_a, "min"_a = py::none(), "max"_a = py::none(), py::kw_only(), "out"_a = py::none(),
     "Limits input to [min, max] (numbers or tensors that broadcast); min > max gives max.");
  cls.def("clamp", [](const Tensor& self, const OptTensor& min, const OptTensor& max) {
    return tessera::clamp(self, min, max);
  }, "min"_a = py::none(), "max"_a = py::none(), ReleaseGil());
  cls.def("clamp", [](const Tensor& self, OptScalar min, OptScalar max) {
    return tessera::clamp(self, min, max);
  }, "min"_a = py::none(), "max"_a = py::none(), ReleaseGil());
  cls.def("clamp_", [](Tensor& self, const OptTensor& min, const OptTensor& max) -> Tensor& {
    return tessera::clamp_(self, min, max);
  }, "min"_a = py::none(), "max"_a = py::none(), ReleaseGil());
  cls.def("clamp_", [](Tensor& self, OptScalar min, OptScalar max) -> Tensor& {
    return tessera::clamp_(self, min, max);
  }, "min"_a = py::none(), "max"_a = py::none(), ReleaseGil());

  // One bound, named as PyTorch names it.
  auto def_bound = [&](const char* name, const char* bound, auto value, auto in_place, auto into) {
    auto define = [&](auto bound_type) {
      using Bound = decltype(bound_type);
      m.def(name, [value, into](const Tensor& input, const Bound& b, Tensor* out) {
        return value_or_out(out, [&] { return value(input, b); },
                            [&](Tensor& o) { into(o, input, b); });
      }, "input"_a, py::arg(bound), py::kw_only(), "out"_a = py::none());
      cls.def(name, [value](const Tensor& self, const Bound& b) { return value(self, b); },
              py::arg(bound), ReleaseGil());
      cls.def((std::string(name) + "_").c_str(),
              [in_place](Tensor& self, const Bound& b) -> Tensor& { return in_place(self, b); },
              py::arg(bound), ReleaseGil());
    };
    define(Tensor());
    define(Scalar());
  };
  def_bound("clamp_min", "min", TESSERA_VALUE(clamp_min), TESSERA_IN_PLACE(clamp_min),
            TESSERA_INTO(clamp_min));
  def_bound("clamp_max", "max", TESSERA_VALUE(clamp_max), TESSERA_IN_PLACE(clamp_max),
            TESSERA_INTO(clamp_max));
}

// -- Binary: name(input, other, *, out=None) with other a tensor or a
// number, and name(number, other) where PyTorch takes a number first;
// Tensor.name(other) and Tensor.name_(other).

template <typename Value, typename InPlace, typename Into>
void def_binary(py::module_& m, TensorClass& cls, const char* name, Value value, InPlace in_place,
                Into into, bool number_first, Methods methods, const char* other_name = "other") {
  auto define = [&](auto other_type) {
    using Other = decltype(other_type);
    m.def(name, [value, into](const Tensor& input, const Other& other, Tensor* out) {
      return value_or_out(out, [&] { return value(input, other); },
                          [&](Tensor& o) { into(o, input, other); });
    }, "input"_a, py::arg(other_name), py::kw_only(), "out"_a = py::none());
    if (methods == Methods::kNone) return;
    cls.def(name, [value](const Tensor& self, const Other& other) { return value(self, other); },
            py::arg(other_name), ReleaseGil());
    if (methods == Methods::kValueAndInPlace) {
      cls.def((std::string(name) + "_").c_str(), [in_place](Tensor& self, const Other& other)
              -> Tensor& { return in_place(self, other); }, py::arg(other_name), ReleaseGil());
    }
  };
  define(Tensor());
  define(Scalar());
  if (!number_first) return;
  // The runtime's own Scalar-first overload where it has one (pow, remainder,
  // shifts), else the number as a 0-d tensor of the dtype it promotes to.
  m.def(name, [value, into](Scalar input, const Tensor& other, Tensor* out) {
    return value_or_out(out, [&] {
      if constexpr (std::is_invocable_v<Value, const Scalar&, const Tensor&>) {
        return value(input, other);
      } else {
        return value(scalar_operand(input, other), other);
      }
    }, [&](Tensor& o) { into(o, scalar_operand(input, other), other); });
  }, "input"_a, py::arg(other_name), py::kw_only(), "out"_a = py::none());
}

#define TESSERA_DEF_BINARY(name, number_first, methods)                                    \
  def_binary(m, cls, #name, TESSERA_VALUE(name), TESSERA_IN_PLACE(name), TESSERA_INTO(name), \
             number_first, Methods::methods)

void register_binary(py::module_& m, TensorClass& cls) {
  TESSERA_DEF_BINARY(floor_divide, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(remainder, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(fmod, false, kValueAndInPlace);
  // PyTorch names pow's second operand `exponent`.
  def_binary(m, cls, "pow", TESSERA_VALUE(pow), TESSERA_IN_PLACE(pow), TESSERA_INTO(pow), true,
             Methods::kValueAndInPlace, "exponent");
  TESSERA_DEF_BINARY(maximum, false, kValue);
  TESSERA_DEF_BINARY(minimum, false, kValue);
  TESSERA_DEF_BINARY(atan2, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(logaddexp, false, kValue);
  TESSERA_DEF_BINARY(logaddexp2, false, kValue);
  TESSERA_DEF_BINARY(eq, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(ne, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(lt, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(le, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(gt, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(ge, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(logical_and, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(logical_or, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(logical_xor, false, kValueAndInPlace);
  TESSERA_DEF_BINARY(bitwise_and, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(bitwise_or, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(bitwise_xor, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(bitwise_left_shift, true, kValueAndInPlace);
  TESSERA_DEF_BINARY(bitwise_right_shift, true, kValueAndInPlace);
}

// -- add, sub (alpha), mul, div (rounding_mode). A number operand goes to
// the runtime's Scalar overload, or as a 0-d tensor where it has none.

// input + alpha * other (sub: minus).
template <typename Value, typename Into>
void def_add_sub(py::module_& m, const char* name, Value value, Into into) {
  m.def(name, [value, into](const Tensor& input, const Tensor& other, Scalar alpha, Tensor* out) {
    return value_or_out(out, [&] { return value(input, other, alpha); },
                        [&](Tensor& o) { into(o, input, other, alpha); });
  }, "input"_a, "other"_a, py::kw_only(), "alpha"_a = 1, "out"_a = py::none());
  m.def(name, [value, into](const Tensor& input, Scalar other, Scalar alpha, Tensor* out) {
    return value_or_out(out, [&] { return value(input, other, alpha); },
                        [&](Tensor& o) { into(o, input, scalar_operand(other, input), alpha); });
  }, "input"_a, "other"_a, py::kw_only(), "alpha"_a = 1, "out"_a = py::none());
  m.def(name, [value, into](Scalar input, const Tensor& other, Scalar alpha, Tensor* out) {
    return value_or_out(out, [&] { return value(scalar_operand(input, other), other, alpha); },
                        [&](Tensor& o) { into(o, scalar_operand(input, other), other, alpha); });
  }, "input"_a, "other"_a, py::kw_only(), "alpha"_a = 1, "out"_a = py::none());
}

void register_arithmetic(py::module_& m, TensorClass& cls) {
  def_add_sub(m, "add", TESSERA_VALUE(add), TESSERA_INTO(add));
  def_add_sub(m, "sub", TESSERA_VALUE(sub), TESSERA_INTO(sub));
  cls.def("add", [](const Tensor& self, const Tensor& other, Scalar alpha) {
    return tessera::add(self, other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("add", [](const Tensor& self, Scalar other, Scalar alpha) {
    return tessera::add(self, other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("add_", [](Tensor& self, const Tensor& other, Scalar alpha) -> Tensor& {
    return self.add_(other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  // A number joins the in-place forms as scalar_operand, not through the
  // runtime's add_(self, Scalar) & co., which round a float number through
  // float32 (x.add_(0.1) on float64 would add 0.10000000149).
  cls.def("add_", [](Tensor& self, Scalar other, Scalar alpha) -> Tensor& {
    return self.add_(scalar_operand(other, self), alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("sub", [](const Tensor& self, const Tensor& other, Scalar alpha) {
    return tessera::sub(self, other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("sub", [](const Tensor& self, Scalar other, Scalar alpha) {
    return tessera::sub(self, other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("sub_", [](Tensor& self, const Tensor& other, Scalar alpha) -> Tensor& {
    return self.sub_(other, alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());
  cls.def("sub_", [](Tensor& self, Scalar other, Scalar alpha) -> Tensor& {
    return self.sub_(scalar_operand(other, self), alpha);
  }, "other"_a, py::kw_only(), "alpha"_a = 1, ReleaseGil());

  // mul: no alpha, and mul_out has only the tensor form.
  m.def("mul", [](const Tensor& input, const Tensor& other, Tensor* out) {
    return value_or_out(out, [&] { return tessera::mul(input, other); },
                        [&](Tensor& o) { tessera::mul_out(o, input, other); });
  }, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none());
  m.def("mul", [](const Tensor& input, Scalar other, Tensor* out) {
    return value_or_out(out, [&] { return tessera::mul(input, other); }, [&](Tensor& o) {
      tessera::mul_out(o, input, scalar_operand(other, input));
    });
  }, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none());
  m.def("mul", [](Scalar input, const Tensor& other, Tensor* out) {
    return value_or_out(out, [&] { return tessera::mul(other, input); }, [&](Tensor& o) {
      tessera::mul_out(o, scalar_operand(input, other), other);
    });
  }, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none());
  cls.def("mul", [](const Tensor& self, const Tensor& other) { return tessera::mul(self, other); },
          "other"_a, ReleaseGil());
  cls.def("mul", [](const Tensor& self, Scalar other) { return tessera::mul(self, other); },
          "other"_a, ReleaseGil());
  cls.def("mul_", [](Tensor& self, const Tensor& other) -> Tensor& { return self.mul_(other); },
          "other"_a, ReleaseGil());
  cls.def("mul_", [](Tensor& self, Scalar other) -> Tensor& {
    return self.mul_(scalar_operand(other, self));
  }, "other"_a, ReleaseGil());

  // div: rounding_mode None (true division), "trunc" or "floor".
  using Mode = std::optional<std::string>;
  auto mode_view = [](const Mode& mode) -> std::optional<std::string_view> {
    if (!mode) return std::nullopt;
    return std::string_view(*mode);
  };
  auto def_div = [&](auto input_type, auto other_type, const char* doc) {
    using Input = decltype(input_type);
    using Other = decltype(other_type);
    m.def("div", [mode_view](const Input& input, const Other& other, const Mode& rounding_mode,
                             Tensor* out) {
      // The runtime's div takes a tensor first; a number first is a 0-d tensor.
      auto tensor_first = [&] {
        if constexpr (std::is_same_v<Input, Scalar>) {
          return scalar_operand(input, other);
        } else {
          return input;
        }
      };
      return value_or_out(out, [&] {
        return tessera::div(tensor_first(), other, mode_view(rounding_mode));
      }, [&](Tensor& o) {
        const Tensor& a = tensor_first();
        if constexpr (std::is_same_v<Other, Scalar>) {
          tessera::div_out(o, a, scalar_operand(other, a), mode_view(rounding_mode));
        } else {
          tessera::div_out(o, a, other, mode_view(rounding_mode));
        }
      });
    }, "input"_a, "other"_a, py::kw_only(), "rounding_mode"_a = py::none(), "out"_a = py::none(),
       doc);
  };
  def_div(Tensor(), Tensor(),
          "input / other; rounding_mode None (true division), 'trunc' or 'floor'.");
  def_div(Tensor(), Scalar(), nullptr);
  def_div(Scalar(), Tensor(), nullptr);
  auto def_div_method = [&](auto other_type) {
    using Other = decltype(other_type);
    cls.def("div", [mode_view](const Tensor& self, const Other& other, const Mode& rounding_mode) {
      return tessera::div(self, other, mode_view(rounding_mode));
    }, "other"_a, py::kw_only(), "rounding_mode"_a = py::none(), ReleaseGil());
    cls.def("div_", [mode_view](Tensor& self, const Other& other, const Mode& rounding_mode)
            -> Tensor& {
      if constexpr (std::is_same_v<Other, Scalar>) {
        // True division by a number: as add_ above.
        if (!rounding_mode) return self.div_(scalar_operand(other, self));
      }
      return tessera::div_(self, other, mode_view(rounding_mode));
    },
            "other"_a, py::kw_only(), "rounding_mode"_a = py::none(), ReleaseGil());
  };
  def_div_method(Tensor());
  def_div_method(Scalar());

  // result_type(tensor, other), as PyTorch names them: numbers on either
  // side or both.
  m.def("result_type", py::overload_cast<const Tensor&, const Tensor&>(&tessera::result_type),
        "tensor"_a, "other"_a);
  m.def("result_type", py::overload_cast<const Tensor&, Scalar>(&tessera::result_type),
        "tensor"_a, "other"_a);
  m.def("result_type", [](Scalar a, const Tensor& b) { return tessera::result_type(b, a); },
        "tensor"_a, "other"_a);
  m.def("result_type", [](Scalar a, Scalar b) {
    return tessera::default_dtype_for(std::max(a.category(), b.category()));
  }, "tensor"_a, "other"_a,
     "The dtype an elementwise op of the two gives (numbers promote less than tensors).");
}

// -- where, lerp, addcmul, addcdiv.

// The dtype where() gives two numbers: bool, int64 or float32 after the
// higher kind.
Tensor number_tensor(Scalar value, Scalar partner, tessera::Device device) {
  DType dtype = tessera::default_dtype_for(std::max(value.category(), partner.category()));
  return tessera::full({}, value, tessera::TensorOptions(dtype, device));
}

void register_ternary(py::module_& m, TensorClass& cls) {
  // where(condition, input, other): numbers become 0-d tensors of the dtype
  // they promote the other operand to, as PyTorch's wrapped numbers.
  auto as_tensor = [](const auto& operand, const auto& partner, const Tensor& condition) {
    using Operand = std::decay_t<decltype(operand)>;
    using Partner = std::decay_t<decltype(partner)>;
    if constexpr (std::is_same_v<Operand, Tensor>) {
      return operand;
    } else if constexpr (std::is_same_v<Partner, Tensor>) {
      return scalar_operand(operand, partner);
    } else {
      return number_tensor(operand, partner, condition.device());
    }
  };
  auto def_where = [&](auto input_type, auto other_type, const char* doc) {
    using Input = decltype(input_type);
    using Other = decltype(other_type);
    m.def("where", [as_tensor](const Tensor& condition, const Input& input, const Other& other,
                               Tensor* out) {
      return value_or_out(out, [&] {
        if constexpr (std::is_same_v<Input, Scalar> && std::is_same_v<Other, Scalar>) {
          return tessera::where(condition, as_tensor(input, other, condition),
                                as_tensor(other, input, condition));
        } else {
          return tessera::where(condition, input, other);
        }
      }, [&](Tensor& o) {
        tessera::where_out(o, condition, as_tensor(input, other, condition),
                           as_tensor(other, input, condition));
      });
    }, "condition"_a, "input"_a, "other"_a, py::kw_only(), "out"_a = py::none(), doc);
  };
  def_where(Tensor(), Tensor(),
            "input where condition (bool) is true, other elsewhere; numbers or tensors, "
            "broadcast.");
  def_where(Tensor(), Scalar(), nullptr);
  def_where(Scalar(), Tensor(), nullptr);
  def_where(Scalar(), Scalar(), nullptr);
  cls.def("where", [](const Tensor& self, const Tensor& condition, const Tensor& other) {
    return tessera::where(condition, self, other);
  }, "condition"_a, "other"_a, ReleaseGil());
  cls.def("where", [](const Tensor& self, const Tensor& condition, Scalar other) {
    return tessera::where(condition, self, other);
  }, "condition"_a, "other"_a, ReleaseGil());

  auto def_lerp = [&](auto weight_type, const char* doc) {
    using Weight = decltype(weight_type);
    m.def("lerp", [](const Tensor& input, const Tensor& end, const Weight& weight, Tensor* out) {
      return value_or_out(out, [&] { return tessera::lerp(input, end, weight); },
                          [&](Tensor& o) { tessera::lerp_out(o, input, end, weight); });
    }, "input"_a, "end"_a, "weight"_a, py::kw_only(), "out"_a = py::none(), doc);
    cls.def("lerp", [](const Tensor& self, const Tensor& end, const Weight& weight) {
      return tessera::lerp(self, end, weight);
    }, "end"_a, "weight"_a, ReleaseGil());
    cls.def("lerp_", [](Tensor& self, const Tensor& end, const Weight& weight) -> Tensor& {
      return tessera::lerp_(self, end, weight);
    }, "end"_a, "weight"_a, ReleaseGil());
  };
  def_lerp(Tensor(), "input + weight * (end - input); weight a number or a tensor.");
  def_lerp(Scalar(), nullptr);

  // input + value * tensor1 (* or /) tensor2.
  auto def_addc = [&](const char* name, auto value_fn, auto in_place, auto into) {
    m.def(name, [value_fn, into](const Tensor& input, const Tensor& tensor1, const Tensor& tensor2,
                                 Scalar value, Tensor* out) {
      return value_or_out(out, [&] { return value_fn(input, tensor1, tensor2, value); },
                          [&](Tensor& o) { into(o, input, tensor1, tensor2, value); });
    }, "input"_a, "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1, "out"_a = py::none());
    cls.def(name, [value_fn](const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                             Scalar value) { return value_fn(self, tensor1, tensor2, value); },
            "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1, ReleaseGil());
    cls.def((std::string(name) + "_").c_str(),
            [in_place](Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value)
                -> Tensor& { return in_place(self, tensor1, tensor2, value); },
            "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1, ReleaseGil());
  };
  def_addc("addcmul", TESSERA_VALUE(addcmul), TESSERA_IN_PLACE(addcmul), TESSERA_INTO(addcmul));
  def_addc("addcdiv", TESSERA_VALUE(addcdiv), TESSERA_IN_PLACE(addcdiv), TESSERA_INTO(addcdiv));
}

// -- Activation gradients, under ATen's names and argument names: what a
// hand-written backward pass needs (grad_output broadcasts with the saved
// tensor).

void register_activation_gradients(py::module_& m) {
  m.def("threshold_backward", &tessera::threshold_backward, "grad_output"_a, "self"_a,
        "threshold"_a, ReleaseGil(), "grad_output where self > threshold, else 0.");
  m.def("relu_backward", &tessera::relu_backward, "grad_output"_a, "result"_a, ReleaseGil());
  m.def("gelu_backward", [](const Tensor& grad_output, const Tensor& self,
                            const std::string& approximate) {
    return tessera::gelu_backward(grad_output, self, approximate);
  }, "grad_output"_a, "self"_a, py::kw_only(), "approximate"_a = "none", ReleaseGil());
  m.def("silu_backward", &tessera::silu_backward, "grad_output"_a, "self"_a, ReleaseGil());
  m.def("sigmoid_backward", &tessera::sigmoid_backward, "grad_output"_a, "output"_a, ReleaseGil());
  m.def("tanh_backward", &tessera::tanh_backward, "grad_output"_a, "output"_a, ReleaseGil());
  m.def("hardswish_backward", &tessera::hardswish_backward, "grad_output"_a, "self"_a,
        ReleaseGil());
  m.def("hardsigmoid_backward", &tessera::hardsigmoid_backward, "grad_output"_a, "self"_a,
        ReleaseGil());
  m.def("leaky_relu_backward", &tessera::leaky_relu_backward, "grad_output"_a, "self"_a,
        "negative_slope"_a, ReleaseGil());
  m.def("elu_backward", &tessera::elu_backward, "grad_output"_a, "alpha"_a, "scale"_a,
        "input_scale"_a, "is_result"_a, "self_or_result"_a, ReleaseGil(),
        "self_or_result is elu's result when is_result (after an in-place elu), else its input.");
  m.def("softplus_backward", &tessera::softplus_backward, "grad_output"_a, "self"_a, "beta"_a,
        "threshold"_a, ReleaseGil());
  m.def("hardtanh_backward", &tessera::hardtanh_backward, "grad_output"_a, "self"_a, "min_val"_a,
        "max_val"_a, ReleaseGil());
  m.def("log_sigmoid_backward", &tessera::log_sigmoid_backward, "grad_output"_a, "self"_a,
        ReleaseGil());
  m.def("mish_backward", &tessera::mish_backward, "grad_output"_a, "self"_a, ReleaseGil());
}

#undef TESSERA_DEF_BINARY
#undef TESSERA_DEF_UNARY
#undef TESSERA_INTO
#undef TESSERA_IN_PLACE
#undef TESSERA_VALUE

}  // namespace

void register_pointwise_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  register_unary(m, cls);
  register_clamp(m, cls);
  register_binary(m, cls);
  register_arithmetic(m, cls);
  register_ternary(m, cls);
  register_activation_gradients(m);
  register_tensor_operators(m);
}

}  // namespace tessera_py
