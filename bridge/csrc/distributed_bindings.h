// torch_tessera._C's functions for torch_tessera/distributed.py.
#pragma once

#include <pybind11/pybind11.h>

namespace torch_tessera {

// Defines _host_copy_backend and _host_copy_backend_host on `m`. Calling
// them needs torch.distributed imported (it registers c10d's Python types).
void bind_distributed(pybind11::module_& m);

}  // namespace torch_tessera
