// fill_ (Scalar and 0-d tensor values) and zero_: what factories such as
// torch.zeros/ones/full and optimizers' state init run on.
#include <torch/library.h>

#include "bridge/csrc/complex_views.h"
#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// A complex tensor's real and imaginary parts, each filled (complex_views.h).
at::Tensor& fill_complex(at::Tensor& self, const c10::Scalar& value) {
  const OpScope scope(self);
  const tessera::Tensor pairs = to_runtime_real_pairs(self, "fill_");
  const c10::complex<double> v = value.toComplexDouble();
  tessera::Tensor real = pairs.select(-1, 0), imag = pairs.select(-1, 1);
  call_runtime([&] {
    real.fill_(tessera::Scalar(v.real()));
    imag.fill_(tessera::Scalar(v.imag()));
  });
  return self;
}

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (self.is_complex()) return fill_complex(self, value);
  const OpScope scope(self);
  tessera::Tensor s = to_runtime(self, "fill_");
  const tessera::Scalar v = to_runtime_scalar(value, "fill_");
  call_runtime([&] { s.fill_(v); });
  return self;
}

// A 0-d value on the host is read as a Scalar; one on a tessera device is
// broadcast-copied, so that filling never waits for the device.
at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor "
              "with ", value.dim(), " dimensions.");
  if (value.device().is_cpu()) return fill_scalar(self, value.item());
  const OpScope scope(self);
  if (self.is_complex() || value.is_complex()) {
    // Through copy_'s complex rules: one dispatch, no host round trip.
    self.copy_(value.expand(self.sizes()));
    return self;
  }
  tessera::Tensor s = to_runtime(self, "fill_");
  const tessera::Tensor v = to_runtime(value, "fill_");
  call_runtime([&] { s.copy_(v); });
  return self;
}

at::Tensor& zero(at::Tensor& self) {
  const OpScope scope(self);
  tessera::Tensor s =
      self.is_complex() ? to_runtime_real_pairs(self, "zero_") : to_runtime(self, "zero_");
  call_runtime([&] { s.zero_(); });
  return self;
}

TESSERA_ATEN_KERNELS(m) {
  m.impl_complex_aware("fill_.Scalar", TORCH_FN(fill_scalar));
  m.impl_complex_aware("fill_.Tensor", TORCH_FN(fill_tensor));
  m.impl_complex_aware("zero_", TORCH_FN(zero));
}

}  // namespace
}  // namespace torch_tessera
