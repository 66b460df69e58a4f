// The Python operators of tessera.Tensor, as PyTorch's: arithmetic
// (+ - * / // % ** @) with a tensor or a number on either side, the
// in-place forms (+= ... returning self), comparisons giving bool tensors,
// bitwise & | ^ << >> ~, unary - + abs(), and an identity hash (defining
// __eq__ would otherwise make tensors unhashable).
//
// Every binary operator is bound with py::is_operator(): for an operand it
// does not take it returns NotImplemented, so Python tries the other
// operand's reflected method and `x == None` is False rather than an error.
#include <type_traits>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/pointwise_args.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::Scalar;
using tessera::Tensor;

// `self op other` for a tensor or a number; fn(self, other) picks the
// runtime overload.
template <typename Fn>
void def_operator(TensorClass& cls, const char* dunder, Fn fn) {
  cls.def(dunder, [fn](const Tensor& self, const Tensor& other) { return fn(self, other); },
          py::is_operator(), ReleaseGil());
  cls.def(dunder, [fn](const Tensor& self, Scalar other) { return fn(self, other); },
          py::is_operator(), ReleaseGil());
}

// `number op self`: Python calls self.__rop__(number).
template <typename Fn>
void def_reflected(TensorClass& cls, const char* dunder, Fn fn) {
  cls.def(dunder, [fn](const Tensor& self, Scalar number) { return fn(number, self); },
          py::is_operator(), ReleaseGil());
}

// `self op= other`: writes self and returns it (the same Python object).
template <typename Fn>
void def_in_place(TensorClass& cls, const char* dunder, Fn fn) {
  cls.def(dunder, [fn](Tensor& self, const Tensor& other) -> Tensor& { return fn(self, other); },
          py::is_operator(), ReleaseGil());
  cls.def(dunder, [fn](Tensor& self, Scalar other) -> Tensor& { return fn(self, other); },
          py::is_operator(), ReleaseGil());
}

// other itself, or a number as scalar_operand.
inline const Tensor& tensor_operand(const Tensor& other, const Tensor&) { return other; }
inline Tensor tensor_operand(Scalar other, const Tensor& self) {
  return scalar_operand(other, self);
}

// The runtime op `name` for either kind of second operand.
#define TESSERA_OP(name) [](const Tensor& a, const auto& b) { return tessera::name(a, b); }
#define TESSERA_OP_(name) \
  [](Tensor& self, const auto& b) -> Tensor& { return tessera::name##_(self, b); }
// A number on the left where the runtime has only `tensor op number`: the
// number as a 0-d tensor of the dtype it promotes self to.
#define TESSERA_NUMBER_FIRST(name) \
  [](Scalar a, const Tensor& b) { return tessera::name(scalar_operand(a, b), b); }

}  // namespace

void register_tensor_operators(py::module_& m) {
  TensorClass cls = tensor_class(m);

  // -- Arithmetic.
  def_operator(cls, "__add__", TESSERA_OP(add));
  def_reflected(cls, "__radd__", [](Scalar a, const Tensor& b) { return tessera::add(b, a); });
  def_operator(cls, "__sub__", TESSERA_OP(sub));
  def_reflected(cls, "__rsub__", TESSERA_NUMBER_FIRST(sub));
  def_operator(cls, "__mul__", TESSERA_OP(mul));
  def_reflected(cls, "__rmul__", [](Scalar a, const Tensor& b) { return tessera::mul(b, a); });
  def_operator(cls, "__truediv__", TESSERA_OP(div));
  def_reflected(cls, "__rtruediv__", TESSERA_NUMBER_FIRST(div));
  def_operator(cls, "__floordiv__", TESSERA_OP(floor_divide));
  def_reflected(cls, "__rfloordiv__", TESSERA_NUMBER_FIRST(floor_divide));
  def_operator(cls, "__mod__", TESSERA_OP(remainder));
  def_reflected(cls, "__rmod__",
                [](Scalar a, const Tensor& b) { return tessera::remainder(a, b); });
  def_operator(cls, "__pow__", TESSERA_OP(pow));
  def_reflected(cls, "__rpow__", [](Scalar a, const Tensor& b) { return tessera::pow(a, b); });
  cls.def("__matmul__", [](const Tensor& self, const Tensor& other) {
    return tessera::matmul(self, other);
  }, py::is_operator(), ReleaseGil());
  cls.def("__rmatmul__", [](const Tensor& self, const Tensor& other) {
    return tessera::matmul(other, self);
  }, py::is_operator(), ReleaseGil());

  // A number joins as scalar_operand: the runtime's add_(self, Scalar) & co.
  // round a float number through float32 (see ops_pointwise.cc).
  def_in_place(cls, "__iadd__", [](Tensor& self, const auto& b) -> Tensor& {
    return self.add_(tensor_operand(b, self));
  });
  def_in_place(cls, "__isub__", [](Tensor& self, const auto& b) -> Tensor& {
    return self.sub_(tensor_operand(b, self));
  });
  def_in_place(cls, "__imul__", [](Tensor& self, const auto& b) -> Tensor& {
    return self.mul_(tensor_operand(b, self));
  });
  def_in_place(cls, "__itruediv__", [](Tensor& self, const auto& b) -> Tensor& {
    return self.div_(tensor_operand(b, self));
  });
  def_in_place(cls, "__ifloordiv__", TESSERA_OP_(floor_divide));
  def_in_place(cls, "__imod__", TESSERA_OP_(remainder));
  def_in_place(cls, "__ipow__", TESSERA_OP_(pow));

  // -- Unary.
  cls.def("__neg__", [](const Tensor& self) { return tessera::neg(self); }, ReleaseGil());
  cls.def("__abs__", [](const Tensor& self) { return tessera::abs(self); }, ReleaseGil());
  cls.def("__invert__", [](const Tensor& self) { return tessera::bitwise_not(self); },
          ReleaseGil(), "Bitwise not; logical not for bool.");
  cls.def("__pos__", [](const Tensor& self) {
    TESSERA_CHECK(self.dtype() != tessera::DType::kBool, TypeError,
                  "the unary + operator is not supported for bool tensors (",
                  tessera::describe(self), ")");
    return self;
  }, "self itself (an alias sharing memory), as PyTorch's positive().");

  // -- Comparisons: bool tensors.
  def_operator(cls, "__eq__", TESSERA_OP(eq));
  def_operator(cls, "__ne__", TESSERA_OP(ne));
  def_operator(cls, "__lt__", TESSERA_OP(lt));
  def_operator(cls, "__le__", TESSERA_OP(le));
  def_operator(cls, "__gt__", TESSERA_OP(gt));
  def_operator(cls, "__ge__", TESSERA_OP(ge));
  // Tensors are dict keys and set members by identity, as in PyTorch.
  cls.attr("__hash__") = py::module_::import("builtins").attr("object").attr("__hash__");

  // -- Bitwise (integral and bool; shifts integral only).
  def_operator(cls, "__and__", TESSERA_OP(bitwise_and));
  def_reflected(cls, "__rand__",
                [](Scalar a, const Tensor& b) { return tessera::bitwise_and(b, a); });
  def_operator(cls, "__or__", TESSERA_OP(bitwise_or));
  def_reflected(cls, "__ror__",
                [](Scalar a, const Tensor& b) { return tessera::bitwise_or(b, a); });
  def_operator(cls, "__xor__", TESSERA_OP(bitwise_xor));
  def_reflected(cls, "__rxor__",
                [](Scalar a, const Tensor& b) { return tessera::bitwise_xor(b, a); });
  def_operator(cls, "__lshift__", TESSERA_OP(bitwise_left_shift));
  def_reflected(cls, "__rlshift__",
                [](Scalar a, const Tensor& b) { return tessera::bitwise_left_shift(a, b); });
  def_operator(cls, "__rshift__", TESSERA_OP(bitwise_right_shift));
  def_reflected(cls, "__rrshift__",
                [](Scalar a, const Tensor& b) { return tessera::bitwise_right_shift(a, b); });
  def_in_place(cls, "__iand__", TESSERA_OP_(bitwise_and));
  def_in_place(cls, "__ior__", TESSERA_OP_(bitwise_or));
  def_in_place(cls, "__ixor__", TESSERA_OP_(bitwise_xor));
  def_in_place(cls, "__ilshift__", TESSERA_OP_(bitwise_left_shift));
  def_in_place(cls, "__irshift__", TESSERA_OP_(bitwise_right_shift));
}

#undef TESSERA_NUMBER_FIRST
#undef TESSERA_OP_
#undef TESSERA_OP

}  // namespace tessera_py
