// Resampling on tessera: upsample_nearest2d and upsample_bilinear2d (what
// F.interpolate calls for 4-D input, through the .vec composites) with
// their backward, and im2col / col2im (F.unfold and F.fold, each the
// other's backward), over the runtime's composites.
#include <torch/library.h>

#include <optional>

#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Scale = std::optional<double>;

tessera::Tensor nearest(const at::Tensor& self, c10::IntArrayRef output_size, Scale h, Scale w) {
  return call_runtime([&] {
    return tessera::upsample_nearest2d(to_runtime(self, "upsample_nearest2d"),
                                       to_runtime_shape(output_size), h, w);
  });
}

at::Tensor upsample_nearest2d(const at::Tensor& self, c10::IntArrayRef output_size, Scale h,
                              Scale w) {
  const OpScope scope(self);
  return to_torch(nearest(self, output_size, h, w));
}

at::Tensor& upsample_nearest2d_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                   Scale h, Scale w, at::Tensor& out) {
  const OpScope scope(self);
  return write_out_exact(out, nearest(self, output_size, h, w));
}

tessera::Tensor nearest_backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                                 c10::IntArrayRef input_size, Scale h, Scale w) {
  return call_runtime([&] {
    return tessera::upsample_nearest2d_backward(to_runtime(grad, "upsample_nearest2d_backward"),
                                                to_runtime_shape(output_size),
                                                to_runtime_shape(input_size), h, w);
  });
}

at::Tensor upsample_nearest2d_backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                                       c10::IntArrayRef input_size, Scale h, Scale w) {
  const OpScope scope(grad);
  return to_torch(nearest_backward(grad, output_size, input_size, h, w));
}

at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad, c10::IntArrayRef output_size,
                                            c10::IntArrayRef input_size, Scale h, Scale w,
                                            at::Tensor& grad_input) {
  const OpScope scope(grad);
  return write_out_exact(grad_input, nearest_backward(grad, output_size, input_size, h, w));
}

tessera::Tensor bilinear(const at::Tensor& self, c10::IntArrayRef output_size,
                         bool align_corners, Scale h, Scale w) {
  return call_runtime([&] {
    return tessera::upsample_bilinear2d(to_runtime(self, "upsample_bilinear2d"),
                                        to_runtime_shape(output_size), align_corners, h, w);
  });
}

at::Tensor upsample_bilinear2d(const at::Tensor& self, c10::IntArrayRef output_size,
                               bool align_corners, Scale h, Scale w) {
  const OpScope scope(self);
  return to_torch(bilinear(self, output_size, align_corners, h, w));
}

at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                    bool align_corners, Scale h, Scale w, at::Tensor& out) {
  const OpScope scope(self);
  return write_out_exact(out, bilinear(self, output_size, align_corners, h, w));
}

tessera::Tensor bilinear_backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                                  c10::IntArrayRef input_size, bool align_corners, Scale h,
                                  Scale w) {
  return call_runtime([&] {
    return tessera::upsample_bilinear2d_backward(
        to_runtime(grad, "upsample_bilinear2d_backward"), to_runtime_shape(output_size),
        to_runtime_shape(input_size), align_corners, h, w);
  });
}

at::Tensor upsample_bilinear2d_backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                                        c10::IntArrayRef input_size, bool align_corners,
                                        Scale h, Scale w) {
  const OpScope scope(grad);
  return to_torch(bilinear_backward(grad, output_size, input_size, align_corners, h, w));
}

at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad,
                                             c10::IntArrayRef output_size,
                                             c10::IntArrayRef input_size, bool align_corners,
                                             Scale h, Scale w, at::Tensor& grad_input) {
  const OpScope scope(grad);
  return write_out_exact(grad_input,
                         bilinear_backward(grad, output_size, input_size, align_corners, h, w));
}

// -- im2col / col2im.
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest2d", TORCH_FN(upsample_nearest2d));
  m.impl("upsample_nearest2d.out", TORCH_FN(upsample_nearest2d_out));
  m.impl("upsample_nearest2d_backward", TORCH_FN(upsample_nearest2d_backward));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(upsample_nearest2d_backward_out));
  m.impl("upsample_bilinear2d", TORCH_FN(upsample_bilinear2d));
  m.impl("upsample_bilinear2d.out", TORCH_FN(upsample_bilinear2d_out));
  m.impl("upsample_bilinear2d_backward", TORCH_FN(upsample_bilinear2d_backward));
  m.impl("upsample_bilinear2d_backward.grad_input", TORCH_FN(upsample_bilinear2d_backward_out));
  m.impl("im2col", TORCH_FN(im2col));
  m.impl("im2col.out", TORCH_FN(im2col_out));
  m.impl("col2im", TORCH_FN(col2im));
  m.impl("col2im.out", TORCH_FN(col2im_out));
}

}  // namespace
}  // namespace torch_tessera
