// im2col / col2im on tessera (F.unfold and F.fold, each the other's
// backward), over the runtime's composites. Upsampling is in upsample.cc.
#include <torch/library.h>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

tessera::Tensor unfold(const at::Tensor& self, c10::IntArrayRef kernel_size,
                       c10::IntArrayRef dilation, c10::IntArrayRef padding,
                       c10::IntArrayRef stride) {
  return call_runtime([&] {
    return tessera::im2col(to_runtime(self, "im2col"), to_runtime_shape(kernel_size),
                           to_runtime_shape(dilation), to_runtime_shape(padding),
                           to_runtime_shape(stride));
  });
}

at::Tensor im2col(const at::Tensor& self, c10::IntArrayRef kernel_size,
                  c10::IntArrayRef dilation, c10::IntArrayRef padding, c10::IntArrayRef stride) {
  const OpScope scope(self);
  return to_torch(unfold(self, kernel_size, dilation, padding, stride));
}

at::Tensor& im2col_out(const at::Tensor& self, c10::IntArrayRef kernel_size,
                       c10::IntArrayRef dilation, c10::IntArrayRef padding,
                       c10::IntArrayRef stride, at::Tensor& out) {
  const OpScope scope(self);
  return write_out_exact(out, unfold(self, kernel_size, dilation, padding, stride));
}

tessera::Tensor fold(const at::Tensor& self, c10::IntArrayRef output_size,
                     c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                     c10::IntArrayRef padding, c10::IntArrayRef stride) {
  return call_runtime([&] {
    return tessera::col2im(to_runtime(self, "col2im"), to_runtime_shape(output_size),
                           to_runtime_shape(kernel_size), to_runtime_shape(dilation),
                           to_runtime_shape(padding), to_runtime_shape(stride));
  });
}

at::Tensor col2im(const at::Tensor& self, c10::IntArrayRef output_size,
                  c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                  c10::IntArrayRef padding, c10::IntArrayRef stride) {
  const OpScope scope(self);
  return to_torch(fold(self, output_size, kernel_size, dilation, padding, stride));
}

at::Tensor& col2im_out(const at::Tensor& self, c10::IntArrayRef output_size,
                       c10::IntArrayRef kernel_size, c10::IntArrayRef dilation,
                       c10::IntArrayRef padding, c10::IntArrayRef stride, at::Tensor& out) {
  const OpScope scope(self);
  return write_out_exact(out, fold(self, output_size, kernel_size, dilation, padding, stride));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("im2col", TORCH_FN(im2col));
  m.impl("im2col.out", TORCH_FN(im2col_out));
  m.impl("col2im", TORCH_FN(col2im));
  m.impl("col2im.out", TORCH_FN(col2im_out));
}

}  // namespace
}  // namespace torch_tessera
