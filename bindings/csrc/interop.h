// Zero-copy exchange with other array libraries: NumPy (and anything with
// the buffer protocol) on the host, DLPack on every device that has a
// DLPack device type.
#pragma once

#include <optional>

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// A tensor sharing the memory of an object that exports DLPack or the
// buffer protocol (keeping the object alive), or nothing for other objects.
std::optional<tessera::Tensor> tensor_from_array_object(py::handle obj);

}  // namespace tessera_py
