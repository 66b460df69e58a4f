// TensorListArg: a list-of-tensors argument (cat's `tensors`, a foreach
// op's lists, an optimizer's parameters) from any sequence of tensors, but
// never from a tensor. A tensor is a sequence of its rows, which pybind11's
// std::vector<Tensor> conversion would silently accept (tessera.cat(x)
// joining x's rows), whereas PyTorch rejects torch.cat(x) with a TypeError;
// so does this conversion, and overload resolution moves on to a Tensor
// overload (`_foreach_add(xs, t)`) instead of iterating t.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "bindings/csrc/bindings.h"

namespace tessera_py {

struct TensorListArg : std::vector<tessera::Tensor> {};

// The same for lists whose entries may be None (index_put's `indices`).
struct OptionalTensorListArg : std::vector<std::optional<tessera::Tensor>> {};

}  // namespace tessera_py

namespace pybind11::detail {

template <>
struct type_caster<tessera_py::TensorListArg> {
  PYBIND11_TYPE_CASTER(tessera_py::TensorListArg, const_name("Sequence[Tensor]"));

  bool load(handle src, bool convert) {
    if (isinstance<tessera::Tensor>(src)) return false;
    make_caster<std::vector<tessera::Tensor>> list;
    if (!list.load(src, convert)) return false;
    static_cast<std::vector<tessera::Tensor>&>(value) =
        std::move(cast_op<std::vector<tessera::Tensor>&>(list));
    return true;
  }
};

template <>
struct type_caster<tessera_py::OptionalTensorListArg> {
  PYBIND11_TYPE_CASTER(tessera_py::OptionalTensorListArg,
                       const_name("Sequence[Optional[Tensor]]"));

  bool load(handle src, bool convert) {
    if (isinstance<tessera::Tensor>(src)) return false;
    make_caster<std::vector<std::optional<tessera::Tensor>>> list;
    if (!list.load(src, convert)) return false;
    static_cast<std::vector<std::optional<tessera::Tensor>>&>(value) =
        std::move(cast_op<std::vector<std::optional<tessera::Tensor>>&>(list));
    return true;
  }
};

}  // namespace pybind11::detail
