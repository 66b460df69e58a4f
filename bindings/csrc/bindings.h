// What every source of the tessera module shares: the pybind11 namespace
// alias, the call guard that releases the GIL around an op, and the
// registration function of each part of the module (module.cc calls them
// in order: dtypes and devices first, then the Tensor class, then the ops
// that add functions and Tensor methods).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/csrc/casters.h"
#include "runtime/core/tensor.h"

namespace tessera_py {

namespace py = pybind11;
using namespace pybind11::literals;

// Every op and copy runs with the GIL released, so Python threads run ops
// concurrently. Arguments are converted before, results after, with it held.
using ReleaseGil = py::call_guard<py::gil_scoped_release>;

using TensorClass = py::class_<tessera::Tensor>;

// The tessera.<dtype> object of t (one object per dtype, for `is` tests).
py::object dtype_object(tessera::DType t);

// The Tensor class, once register_tensor_class has created it.
TensorClass tensor_class(py::module_& m);

void register_errors(py::module_& m);
void register_dtypes_devices(py::module_& m);
void register_tensor_class(py::module_& m);
void register_creation_ops(py::module_& m);
void register_runtime_state(py::module_& m);  // streams, events, memory, seeds, fallback
void register_interop(py::module_& m);        // NumPy, buffer protocol, DLPack
void register_io(py::module_& m);             // safetensors files
void register_pointwise_ops(py::module_& m);
void register_reduction_ops(py::module_& m);
void register_special_ops(py::module_& m);  // tessera.special and the math beside it
void register_linalg_ops(py::module_& m);
void register_indexing_ops(py::module_& m);
void register_foreach_optimizer_ops(py::module_& m);
void register_nn_ops(py::module_& m, py::module_& functional);

}  // namespace tessera_py
