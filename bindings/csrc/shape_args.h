// Sizes given the two ways PyTorch accepts them: as separate ints
// (`x.view(2, 3)`, `tessera.zeros(2, 3)`) or as one sequence
// (`x.view((2, 3))`, `tessera.zeros([2, 3])`).
#pragma once

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// op names the function in the TypeError for anything else.
tessera::Shape shape_from_args(const py::args& args, const char* op);

}  // namespace tessera_py
