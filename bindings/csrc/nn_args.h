// What the tessera.nn.functional bindings (ops_nn*.cc) share: the parts
// of the submodule each file registers, PyTorch's argument conventions
// (an int or a tuple per spatial dim, reduction='mean' with the legacy
// size_average / reduce, inplace=) and the composites more than one part
// uses.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "bindings/csrc/bindings.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace tessera_py {

// The parts of tessera.nn.functional, registered by register_nn_ops.
void register_nn_conv_pool(py::module_& f);      // ops_nn.cc
void register_nn_layers(py::module_& f);         // ops_nn_layers.cc
void register_nn_activations(py::module_& f);    // ops_nn_activations.cc
void register_nn_normalization(py::module_& f);  // ops_nn_normalization.cc
void register_nn_losses(py::module_& f);         // ops_nn_losses.cc

// A tensor argument that may be None.
inline tessera::Tensor optional_tensor(const tessera::Tensor* t) {
  return t != nullptr ? *t : tessera::Tensor();
}

// A per-spatial-dim argument (stride=2 or stride=(2, 1)) as `rank` entries:
// one entry applies to every dim; ValueError naming op and name otherwise.
tessera::Shape spatial_arg(const tessera::Shape& s, size_t rank, const char* op, const char* name);

// An input of `rank` spatial dims, batched [N, C, ...] or unbatched
// [C, ...]; ValueError naming op otherwise. Returns whether it is batched.
bool check_spatial_input(const tessera::Tensor& input, int64_t rank, const char* op);

// -- Loss reductions.
enum class Reduction { kNone, kMean, kSum };

// reduction ("none", "mean", "sum"), unless the deprecated size_average /
// reduce are given, which decide as in PyTorch (both default to True).
Reduction reduction_arg(const std::string& reduction, std::optional<bool> size_average,
                        std::optional<bool> reduce, const char* op);
const char* reduction_name(Reduction r);
tessera::Tensor reduce_loss(const tessera::Tensor& loss, Reduction r);

// -- Results that may be the input itself (inplace=True).

// run() -> Tensor with the GIL released; the new tensor.
template <typename Run>
py::object run_released(Run&& run) {
  tessera::Tensor result;
  {
    py::gil_scoped_release release;
    result = run();
  }
  return py::cast(std::move(result));
}

// inplace: run_inplace() writes self, whose own Python object comes back;
// otherwise run() makes a new tensor. Both run with the GIL released.
template <typename Run, typename RunInplace>
py::object result_or_self(tessera::Tensor& self, bool inplace, Run&& run,
                          RunInplace&& run_inplace) {
  if (!inplace) return run_released(std::forward<Run>(run));
  {
    py::gil_scoped_release release;
    run_inplace();
  }
  return py::cast(&self, py::return_value_policy::reference);
}

// The same where the op has no in-place kernel: the result (elementwise,
// of self's shape) is copied into self.
template <typename Run>
py::object result_or_copy_into(tessera::Tensor& self, bool inplace, Run&& run) {
  return result_or_self(self, inplace, run, [&] { self.copy_(run()); });
}

// A dim argument that may be None (softmax(x) without dim): PyTorch's
// implicit choice, dim 0 for 0-, 1- and 3-D inputs, else 1.
int64_t implicit_softmax_dim(std::optional<int64_t> dim, const tessera::Tensor& input);

}  // namespace tessera_py
