#include "bindings/csrc/interop.h"

namespace tessera_py {

std::optional<tessera::Tensor> tensor_from_array_object(py::handle) { return std::nullopt; }
void register_interop(py::module_&) {}

}  // namespace tessera_py
