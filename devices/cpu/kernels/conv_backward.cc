// The Conv2dBackward kernel on the CPU: direct loops over staged
// contiguous double buffers, for every floating dtype. Written for
// correctness first (training through the bridge is not yet measured);
// a oneDNN backward path can replace the f32 case without changing the
// signature.
#include <vector>

#include "devices/cpu/kernels/conv_common.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/nn_staging.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

// Calls f(input offset, weight offset, grad_out offset) for each tap of the
// convolution for batch item n and output channel oc.
template <typename F>
void for_each_tap(const nn::ConvGeometry& g, int64_t n, int64_t oc, F&& f) {
  const int64_t cout_g = g.cout / g.groups, grp = oc / cout_g;
  for (int64_t ic = 0; ic < g.cin_g; ++ic) {
    const int64_t x_base = (n * g.cin + grp * g.cin_g + ic) * g.h * g.w;
    const int64_t w_base = (oc * g.cin_g + ic) * g.kh * g.kw;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
            if (ix < 0 || ix >= g.w) continue;
            f(x_base + iy * g.w + ix, w_base + ky * g.kw + kx,
              ((n * g.cout + oc) * g.oh + oy) * g.ow + ox);
          }
        }
      }
    }
  }
}

void conv2d_backward_kernel(const KernelContext&, Tensor& grad_input, Tensor& grad_weight,
                            Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                            const Tensor& weight, const Shape& stride, const Shape& padding,
                            const Shape& dilation, int64_t groups) {
  const nn::ConvGeometry g =
      nn::conv_geometry(input, weight, grad_out, stride, padding, dilation, groups);
  const std::vector<double> go = nn::read_as<double>(grad_out);
  if (grad_bias.defined()) {
    std::vector<double> gb(static_cast<size_t>(g.cout), 0.0);
    for (int64_t n = 0; n < g.n; ++n) {
      for (int64_t oc = 0; oc < g.cout; ++oc) {
        const double* p = go.data() + (n * g.cout + oc) * g.oh * g.ow;
        for (int64_t i = 0; i < g.oh * g.ow; ++i) gb[oc] += p[i];
      }
    }
    nn::write_from(grad_bias, gb);
  }
  if (grad_weight.defined()) {
    const std::vector<double> x = nn::read_as<double>(input);
    std::vector<double> gw(static_cast<size_t>(weight.numel()), 0.0);
    // One task per output channel: each owns its slice of gw.
    parallel_for_range(g.cout, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t oc = c0; oc < c1; ++oc) {
        for (int64_t n = 0; n < g.n; ++n) {
          for_each_tap(g, n, oc, [&](int64_t xi, int64_t wi, int64_t gi) { gw[wi] += x[xi] * go[gi]; });
        }
      }
    });
    nn::write_from(grad_weight, gw);
  }
  if (grad_input.defined()) {
    const std::vector<double> w = nn::read_as<double>(weight);
    std::vector<double> gx(static_cast<size_t>(input.numel()), 0.0);
    // One task per batch item: each owns its slice of gx.
    parallel_for_range(g.n, 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        for (int64_t oc = 0; oc < g.cout; ++oc) {
          for_each_tap(g, n, oc, [&](int64_t xi, int64_t wi, int64_t gi) { gx[xi] += w[wi] * go[gi]; });
        }
      }
    });
    nn::write_from(grad_input, gx);
  }
}

}  // namespace

void register_conv_backward_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Conv2dBackward>(type, &conv2d_backward_kernel);
}

}  // namespace tessera::cpu
