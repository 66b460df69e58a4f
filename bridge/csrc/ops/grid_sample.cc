// grid_sampler_2d (F.grid_sample on 4-D inputs, spatial transformers):
// bilinear, nearest and bicubic sampling with zeros, border and reflection
// padding, composed of tessera ops: the grid unnormalized to pixel
// coordinates as PyTorch's kernel does, then each tap gathered from the
// [N, C, H*W] view and weighted. (Its backward still runs on the CPU.)
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// Coordinates in [-1, 1] to pixel coordinates of a side of `size`, in
// the arithmetic of PyTorch's CPU kernel.
at::Tensor unnormalize(const at::Tensor& coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1) * ((size - 1) / 2.0) : (coord + 1) * (size / 2.0) - 0.5;
}

// Reflected into [twice_low / 2, twice_high / 2] as often as it takes.
at::Tensor reflect(const at::Tensor& x, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return at::zeros_like(x);
  const double low = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  const at::Tensor distance = (x - low).abs();
  const at::Tensor extra = at::fmod(distance, span);
  const at::Tensor flips = (distance / span).floor();
  return at::where(at::fmod(flips, 2) == 0, extra + low, span - extra + low);
}

// Pixel coordinates moved by the padding mode (border: clamped,
// reflection: reflected then clamped; zeros: as they are).
at::Tensor padded(at::Tensor x, int64_t size, int64_t padding, bool align_corners) {
  if (padding == kBorder) {
    x = x.clamp(0, size - 1);
  } else if (padding == kReflection) {
    x = align_corners ? reflect(x, 0, 2 * (size - 1)) : reflect(x, -1, 2 * size - 1);
    x = x.clamp(0, size - 1);
  }
  // Far outside and NaN coordinates (their corners all lie outside: they
  // sample zeros) kept in a range that converts to integers safely.
  return at::where(x.isnan(), -2.0, x.clamp(-2, size + 1));
}

at::Tensor source_coordinates(const at::Tensor& coord, int64_t size, int64_t padding,
                              bool align_corners) {
  return padded(unnormalize(coord, size, align_corners), size, padding, align_corners);
}

// The cubic convolution weights (A = -0.75) of the four taps around t.
std::array<at::Tensor, 4> cubic_weights(const at::Tensor& t) {
  constexpr double a = -0.75;
  auto near = [](const at::Tensor& x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](const at::Tensor& x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// input[n, :, y, x] for integer coordinates [N, P], 0 where (y, x) lies
// outside the image: [N, C, P].
at::Tensor corner(const at::Tensor& flat_input, const at::Tensor& y, const at::Tensor& x,
                  int64_t height, int64_t width) {
  const at::Tensor inside = (x >= 0) & (x < width) & (y >= 0) & (y < height);
  const at::Tensor index = (y.clamp(0, height - 1) * width + x.clamp(0, width - 1)).to(at::kLong);
  const int64_t channels = flat_input.size(1);
  const at::Tensor values =
      flat_input.gather(2, index.unsqueeze(1).expand({index.size(0), channels, index.size(1)}));
  return values * inside.unsqueeze(1).to(values.scalar_type());
}

at::Tensor grid_sampler_2d(const at::Tensor& input, const at::Tensor& grid,
                           int64_t interpolation_mode, int64_t padding_mode, bool align_corners) {
  TORCH_CHECK(input.dim() == 4 && grid.dim() == 4 && grid.size(3) == 2 &&
                  grid.size(0) == input.size(0),
              "grid_sampler_2d: expected input [N, C, H, W] and grid [N, H_out, W_out, 2] with "
              "one N, got input ", input.sizes(), " and grid ", grid.sizes());
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(), "grid_sampler_2d: expected input and "
              "grid to have the same dtype, got ", input.scalar_type(), " and ",
              grid.scalar_type());
  TORCH_CHECK(padding_mode >= kZeros && padding_mode <= kReflection,
              "grid_sampler_2d: unknown padding mode ", padding_mode);
  TORCH_CHECK(interpolation_mode >= kBilinear && interpolation_mode <= kBicubic,
              "grid_sampler_2d: unknown interpolation mode ", interpolation_mode);
  const c10::DeviceGuard guard(input.device());
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t out_h = grid.size(1), out_w = grid.size(2);
  if (input.numel() == 0 || grid.numel() == 0) {
    return at::zeros({n, c, out_h, out_w}, input.options());
  }
  const at::Tensor points = grid.reshape({n, out_h * out_w, 2});
  const at::Tensor flat = input.reshape({n, c, h * w});
  if (interpolation_mode == kBicubic) {
    // 16 taps around the unpadded point, each tap's coordinate padded.
    const at::Tensor ix = unnormalize(points.select(2, 0), w, align_corners);
    const at::Tensor iy = unnormalize(points.select(2, 1), h, align_corners);
    const at::Tensor x0 = ix.floor(), y0 = iy.floor();
    const auto wx = cubic_weights(ix - x0), wy = cubic_weights(iy - y0);
    at::Tensor out = at::zeros({n, c, out_h * out_w}, input.options());
    for (int i = 0; i < 4; ++i) {
      const at::Tensor y = padded(y0 + (i - 1), h, padding_mode, align_corners);
      at::Tensor row = at::zeros_like(out);
      for (int j = 0; j < 4; ++j) {
        const at::Tensor x = padded(x0 + (j - 1), w, padding_mode, align_corners);
        row = row + corner(flat, y, x, h, w) * wx[j].unsqueeze(1);
      }
      out = out + row * wy[i].unsqueeze(1);
    }
    return out.view({n, c, out_h, out_w});
  }
  const at::Tensor x = source_coordinates(points.select(2, 0), w, padding_mode, align_corners);
  const at::Tensor y = source_coordinates(points.select(2, 1), h, padding_mode, align_corners);
  at::Tensor out;
  if (interpolation_mode == kNearest) {
    out = corner(flat, y.round(), x.round(), h, w);  // round half to even, as nearbyint
  } else {
    const at::Tensor x0 = x.floor(), y0 = y.floor();
    const at::Tensor x1 = x0 + 1, y1 = y0 + 1;
    const at::Tensor wx1 = (x - x0).unsqueeze(1), wy1 = (y - y0).unsqueeze(1);
    const at::Tensor wx0 = 1 - wx1, wy0 = 1 - wy1;
    out = corner(flat, y0, x0, h, w) * (wy0 * wx0) + corner(flat, y0, x1, h, w) * (wy0 * wx1) +
          corner(flat, y1, x0, h, w) * (wy1 * wx0) + corner(flat, y1, x1, h, w) * (wy1 * wx1);
  }
  return out.view({n, c, out_h, out_w});
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("grid_sampler_2d", TORCH_FN(grid_sampler_2d));
}

}  // namespace
}  // namespace torch_tessera
