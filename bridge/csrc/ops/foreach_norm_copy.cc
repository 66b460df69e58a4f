// The multi-tensor ops that are not pointwise arithmetic: _foreach_norm
// (clip_grad_norm_ takes every gradient's norm with it), _foreach_zero_
// (zero_grad(set_to_none=False)) and _foreach_copy_ (EMA and
// state-dict copies). A plain list (every tensor on one tessera device,
// floating, no math bits) runs as one call: one device guard and one
// runtime op for the list (the norm) or per tensor (zero and copy),
// without aten's per-tensor dispatch. Anything else takes aten's
// per-tensor loop.
#include <ATen/ATen.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <torch/library.h>

#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// Every tensor defined, on `device`, floating (not complex) and without a
// conjugate or negative bit.
bool plain_list(at::TensorList list, const c10::Device& device) {
  for (const at::Tensor& t : list) {
    if (!t.defined() || t.device() != device || !at::isFloatingType(t.scalar_type()) ||
        t.is_conj() || t.is_neg()) {
      return false;
    }
  }
  return true;
}

bool on_one_tessera_device(at::TensorList list) {
  return !list.empty() && list[0].defined() && list[0].device().is_privateuseone() &&
         plain_list(list, list[0].device());
}

// One runtime call for the list: the device's multi-tensor norm kernel
// where it has one.
std::vector<at::Tensor> foreach_norm(at::TensorList self, const at::Scalar& ord,
                                     std::optional<at::ScalarType> dtype) {
  const bool fast = on_one_tessera_device(self) && !ord.isComplex() &&
                    (!dtype.has_value() || at::isFloatingType(*dtype));
  if (!fast) return at::native::foreach_tensor_norm_slow(self, ord, dtype);
  const OpScope scope(self[0]);
  std::vector<tessera::Tensor> tensors;
  tensors.reserve(self.size());
  for (const at::Tensor& t : self) tensors.push_back(to_runtime(t, "_foreach_norm"));
  std::optional<tessera::DType> runtime_dtype;
  if (dtype.has_value()) runtime_dtype = to_runtime_dtype(*dtype, "_foreach_norm");
  std::vector<tessera::Tensor> norms = call_runtime([&] {
    return tessera::foreach_norm("_foreach_norm", tensors, ord.toDouble(), runtime_dtype);
  });
  std::vector<at::Tensor> out;
  out.reserve(norms.size());
  for (const tessera::Tensor& n : norms) out.push_back(to_torch(n));
  return out;
}

void foreach_zero_(at::TensorList self) {
  if (!on_one_tessera_device(self)) return at::native::foreach_tensor_zero_slow_(self);
  const OpScope scope(self[0]);
  call_runtime([&] {
    for (const at::Tensor& t : self) to_runtime(t, "_foreach_zero_").zero_();
  });
}

// Entry by entry in order, so a list whose destinations overlap its sources
// gives aten's result.
void foreach_copy_(at::TensorList self, at::TensorList src, bool non_blocking) {
  bool fast = on_one_tessera_device(self) && src.size() == self.size() &&
              plain_list(src, self[0].device());
  for (size_t i = 0; fast && i < self.size(); ++i) fast = self[i].sizes() == src[i].sizes();
  if (!fast) return at::native::foreach_tensor_copy_list_kernel_slow_(self, src, non_blocking);
  const OpScope scope(self[0]);
  call_runtime([&] {
    for (size_t i = 0; i < self.size(); ++i) {
      tessera::Tensor dst = to_runtime(self[i], "_foreach_copy_");
      dst.copy_(to_runtime(src[i], "_foreach_copy_"));
    }
  });
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_foreach_norm.Scalar", TORCH_FN(foreach_norm));
  m.impl("_foreach_zero_", TORCH_FN(foreach_zero_));
  m.impl("_foreach_copy_", TORCH_FN(foreach_copy_));
}

}  // namespace
}  // namespace torch_tessera
