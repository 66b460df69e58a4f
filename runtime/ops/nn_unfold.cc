// im2col (torch.nn.functional.unfold) and col2im (fold, and unfold's
// backward) as views and copies, so every device runs them natively; and
// the backward of Tensor.unfold (sliding windows along one dim), the same
// idea in one dimension.
//
// im2col of the zero-padded input is a strided view [N, C, kh, kw, OH, OW]
// (strides dilation x and stride x the input's) copied into
// [N, C*kh*kw, OH*OW]: exact, one copy. col2im adds, for each kernel
// offset (i, j) in order, the [N, C, OH, OW] block of columns into the
// strided window of the padded output it came from, then crops the
// padding: the sums run in PyTorch's order (kernel offsets ascending).
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

struct Geometry {
  Shape kernel, dilation, padding, stride;
  int64_t oh, ow;  // sliding blocks per dim
};

Geometry geometry(const char* op, int64_t h, int64_t w, const Shape& kernel_size,
                  const Shape& dilation, const Shape& padding, const Shape& stride) {
  Geometry g{nn_detail::pair_arg(op, "kernel_size", kernel_size),
             nn_detail::pair_arg(op, "dilation", dilation),
             nn_detail::pair_arg(op, "padding", padding), nn_detail::pair_arg(op, "stride", stride),
             0, 0};
  for (int d = 0; d < 2; ++d) {
    TESSERA_CHECK(g.kernel[d] > 0 && g.dilation[d] > 0 && g.stride[d] > 0 && g.padding[d] >= 0,
                  ValueError, op, ": kernel_size, dilation and stride must be positive and "
                  "padding non-negative, got kernel_size ", shape_to_string(g.kernel),
                  ", dilation ", shape_to_string(g.dilation), ", padding ",
                  shape_to_string(g.padding), ", stride ", shape_to_string(g.stride));
  }
  auto blocks = [&](int64_t size, int d) {
    const int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    const int64_t room = size + 2 * g.padding[d] - span;
    return room < 0 ? 0 : room / g.stride[d] + 1;
  };
  g.oh = blocks(h, 0);
  g.ow = blocks(w, 1);
  TESSERA_CHECK(g.oh >= 1 && g.ow >= 1, ValueError, op, ": given input with spatial size (", h,
                ", ", w, "), kernel_size ", shape_to_string(g.kernel), ", dilation ",
                shape_to_string(g.dilation), ", padding ", shape_to_string(g.padding),
                ", the calculated shape of the array of sliding blocks is (", g.oh, ", ", g.ow,
                "), but its components must be at least one");
  return g;
}

}  // namespace

Tensor im2col(const Tensor& input, const Shape& kernel_size, const Shape& dilation,
              const Shape& padding, const Shape& stride) {
  const char* op = "im2col";
  TESSERA_CHECK(input.defined(), ValueError, op, ": undefined input");
  TESSERA_CHECK(input.dim() == 3 || input.dim() == 4, ValueError, op,
                ": expected a 3-D or 4-D input, got ", describe(input));
  TESSERA_CHECK(input.size(-3) > 0 && input.size(-2) > 0 && input.size(-1) > 0, ValueError, op,
                ": expected non-empty channel and spatial dims, got ", describe(input));
  const bool batched = input.dim() == 4;
  const Tensor x4 = batched ? input : input.unsqueeze(0);
  const int64_t n = x4.size(0), c = x4.size(1);
  const Geometry g = geometry(op, x4.size(2), x4.size(3), kernel_size, dilation, padding, stride);
  const Shape out_sizes = {n, c * g.kernel[0] * g.kernel[1], g.oh * g.ow};
  Tensor cols;
  if (n == 0) {
    cols = empty(out_sizes, TensorOptions(input.dtype(), input.device()));
  } else {
    const Tensor padded =
        g.padding[0] || g.padding[1]
            ? constant_pad(x4, {g.padding[1], g.padding[1], g.padding[0], g.padding[0]})
            : x4.contiguous();
    const Shape& st = padded.strides();
    const Tensor blocks = padded.as_strided(
        {n, c, g.kernel[0], g.kernel[1], g.oh, g.ow},
        {st[0], st[1], g.dilation[0] * st[2], g.dilation[1] * st[3], g.stride[0] * st[2],
         g.stride[1] * st[3]},
        padded.storage_offset());
    cols = blocks.reshape(out_sizes);
  }
  return batched ? cols : cols.squeeze(0);
}

Tensor col2im(const Tensor& columns, const Shape& output_size, const Shape& kernel_size,
              const Shape& dilation, const Shape& padding, const Shape& stride) {
  const char* op = "col2im";
  TESSERA_CHECK(columns.defined(), ValueError, op, ": undefined input");
  TESSERA_CHECK(columns.dim() == 2 || columns.dim() == 3, ValueError, op,
                ": expected a 2-D or 3-D input of columns, got ", describe(columns));
  const Shape out_hw = nn_detail::pair_arg(op, "output_size", output_size);
  TESSERA_CHECK(out_hw[0] > 0 && out_hw[1] > 0, ValueError, op,
                ": output_size must be positive, got ", shape_to_string(out_hw));
  const Geometry g = geometry(op, out_hw[0], out_hw[1], kernel_size, dilation, padding, stride);
  const bool batched = columns.dim() == 3;
  const Tensor cols3 = batched ? columns : columns.unsqueeze(0);
  const int64_t n = cols3.size(0), kk = g.kernel[0] * g.kernel[1];
  TESSERA_CHECK(cols3.size(1) > 0 && cols3.size(1) % kk == 0, ValueError, op,
                ": expected size of input's dimension 1 to be divisible by the product of "
                "kernel_size ", shape_to_string(g.kernel), ", got ", describe(columns));
  TESSERA_CHECK(cols3.size(2) == g.oh * g.ow, ValueError, op, ": given output_size ",
                shape_to_string(out_hw), ", kernel_size ", shape_to_string(g.kernel),
                ", dilation ", shape_to_string(g.dilation), ", padding ",
                shape_to_string(g.padding), ", stride ", shape_to_string(g.stride),
                ", expected size of input's dimension 2 to match the calculated number of "
                "sliding blocks ", g.oh, " * ", g.ow, " = ", g.oh * g.ow, ", got ",
                describe(columns));
  const int64_t c = cols3.size(1) / kk;
  const int64_t ph = g.padding[0], pw = g.padding[1];
  Tensor padded = zeros({n, c, out_hw[0] + 2 * ph, out_hw[1] + 2 * pw},
                        TensorOptions(columns.dtype(), columns.device()));
  if (n > 0) {
    const Tensor blocks = cols3.reshape({n, c, g.kernel[0], g.kernel[1], g.oh, g.ow});
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const int64_t y0 = i * g.dilation[0], x0 = j * g.dilation[1];
        Tensor window = padded.slice(2, y0, y0 + g.stride[0] * (g.oh - 1) + 1, g.stride[0])
                            .slice(3, x0, x0 + g.stride[1] * (g.ow - 1) + 1, g.stride[1]);
        window.add_(blocks.select(3, j).select(2, i));
      }
    }
  }
  Tensor out = padded.narrow(2, ph, out_hw[0]).narrow(3, pw, out_hw[1]).contiguous();
  return batched ? out : out.squeeze(0);
}

Tensor unfold_backward(const Tensor& grad, const Shape& input_sizes, int64_t dim, int64_t size,
                       int64_t step) {
  const char* op = "unfold_backward";
  TESSERA_CHECK(grad.defined(), ValueError, op, ": undefined grad");
  TESSERA_CHECK(size > 0 && step > 0, ValueError, op, ": size and step must be positive, got ",
                size, " and ", step);
  // A 0-d input unfolds into one window of one element.
  if (input_sizes.empty()) return grad.reshape({}).clone();
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(input_sizes.size()), op);
  Shape want = input_sizes;
  want[d] = input_sizes[d] >= size ? (input_sizes[d] - size) / step + 1 : 0;
  want.push_back(size);
  TESSERA_CHECK(grad.sizes() == want, ValueError, op, ": expected grad of shape ",
                shape_to_string(want), " for input ", shape_to_string(input_sizes), ", dim ", d,
                ", size ", size, ", step ", step, ", got ", describe(grad));
  Tensor out = zeros(input_sizes, TensorOptions(grad.dtype(), grad.device()));
  const int64_t windows = want[d];
  if (grad.numel() == 0) return out;
  // Element k of every window, in order of k.
  for (int64_t k = 0; k < size; ++k) {
    Tensor at_k = out.slice(d, k, k + step * (windows - 1) + 1, step);
    at_k.add_(grad.select(-1, k));
  }
  return out;
}

}  // namespace tessera
