// How op results come back to Python, as PyTorch hands them back:
//  - `out=`: the out tensor's own Python object (`r is out`);
//  - several results: a tessera.return_types.<op> (a tuple subclass with
//    named fields, like torch.return_types), so that both
//    `values, indices = tessera.max(x, 1)` and `r.values` work.
// The op itself runs with the GIL released; the Python objects are made
// after, with it held.
#pragma once

#include <initializer_list>
#include <optional>
#include <tuple>
#include <utility>

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// The type tessera.return_types.<name> with these fields (a namedtuple),
// made on first use; later calls return the same type (fields must agree).
py::object return_type(py::module_& m, const char* name,
                       std::initializer_list<const char*> fields);

// `run()` with the GIL released; out's own Python object when out is given
// (run writes it), else the tensor run returns.
template <typename Run>
py::object tensor_or_out(tessera::Tensor* out, Run&& run) {
  tessera::Tensor result;
  {
    py::gil_scoped_release release;
    result = run();
  }
  if (out != nullptr) return py::cast(out, py::return_value_policy::reference);
  return py::cast(std::move(result));
}

// `run()` (returning a std::tuple<Tensor, Tensor>) with the GIL released,
// packed as an instance of type.
template <typename Run>
py::object pair_result(const py::object& type, Run&& run) {
  std::tuple<tessera::Tensor, tessera::Tensor> r;
  {
    py::gil_scoped_release release;
    r = run();
  }
  return type(std::move(std::get<0>(r)), std::move(std::get<1>(r)));
}

// An `out=` taken as a py::object: None gives nullptr, a tensor itself,
// anything else a TypeError naming op. For overloads that must win over
// another in pybind11's first (no-conversion) pass, where a `Tensor* out`
// does not accept None.
tessera::Tensor* out_tensor(const py::object& out, const char* op);

// A two-tensor `out=` argument: None, or a tuple or list of two tensors
// (TypeError naming op and the fields otherwise).
struct OutPair {
  py::object objects;  // the tuple or list as given
  tessera::Tensor* first = nullptr;
  tessera::Tensor* second = nullptr;
};
std::optional<OutPair> out_pair(const py::object& out, const char* op, const char* fields);

// pair_result when out is None; otherwise run_out(first, second) with the
// GIL released and the out tensors' own objects packed as an instance of type.
template <typename Run, typename RunOut>
py::object pair_result_or_out(const py::object& type, const py::object& out, const char* op,
                              const char* fields, Run&& run, RunOut&& run_out) {
  std::optional<OutPair> pair = out_pair(out, op, fields);
  if (!pair) return pair_result(type, std::forward<Run>(run));
  {
    py::gil_scoped_release release;
    run_out(*pair->first, *pair->second);
  }
  return type(pair->objects[py::int_(0)], pair->objects[py::int_(1)]);
}

}  // namespace tessera_py
