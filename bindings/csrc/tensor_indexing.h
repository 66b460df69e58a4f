// The parts of the indexing ops' registration (register_indexing_ops in
// ops_indexing.cc calls the other two), and the advanced-indexing engine
// that Tensor.__setitem__ and index_put share.
#pragma once

#include <optional>
#include <vector>

#include "bindings/csrc/bindings.h"

namespace tessera_py {

// Tensor.__getitem__ and __setitem__ (tensor_indexing.cc).
void register_tensor_indexing(py::module_& m);

// gather, scatter, index_select, index_add/copy/fill/put, masked_*, take,
// nonzero, where(condition) (ops_gather_scatter.cc).
void register_gather_scatter_ops(py::module_& m);

// torch.index_put_: self[indices] = values (or += with accumulate), where
// an absent index stands for a whole dim (a `:`) and the index tensors
// (integer or bool) are placed as in self[i0, :, i2]. values must have
// self's dtype. Runs ops: call it with the GIL released.
tessera::Tensor& index_put_with_slices(tessera::Tensor& self,
                                       const std::vector<std::optional<tessera::Tensor>>& indices,
                                       const tessera::Tensor& values, bool accumulate);

// `run()` (returning a std::vector<Tensor>) with the GIL released, as a
// Python tuple, which is what torch.split, chunk, unbind, ... return.
template <typename Run>
py::tuple tensor_tuple(Run&& run) {
  std::vector<tessera::Tensor> tensors;
  {
    py::gil_scoped_release release;
    tensors = run();
  }
  py::tuple out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) out[i] = py::cast(std::move(tensors[i]));
  return out;
}

}  // namespace tessera_py
