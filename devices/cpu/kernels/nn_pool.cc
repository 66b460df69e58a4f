// max_pool2d and avg_pool2d with their backward on the CPU: one task per
// (batch, channel) plane, reading the strided input in place.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "runtime/core/error.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/nn_staging.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

// Element (n, c, y, x) of a 4-D tensor.
template <typename T>
struct View4 {
  T* data;
  int64_t s0, s1, s2, s3;
  explicit View4(const Tensor& t)
      : data(static_cast<T*>(t.data_ptr())),
        s0(t.strides()[0]), s1(t.strides()[1]), s2(t.strides()[2]), s3(t.strides()[3]) {}
  T& at(int64_t n, int64_t c, int64_t y, int64_t x) const {
    return data[n * s0 + c * s1 + y * s2 + x * s3];
  }
};

void max_pool2d_kernel(const KernelContext&, Tensor& out, Tensor& indices, const Tensor& input,
                       const Shape& kernel, const Shape& stride, const Shape& padding,
                       const Shape& dilation) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  dispatch_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      TESSERA_CHECK(false, TypeError, "max_pool2d: not supported for bool");
    } else {
      using A = compute_t<T>;
      const View4<const T> x(input);
      const View4<T> y(out);
      const View4<int64_t> ind(indices);
      parallel_for_range(N * C, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t n = p / C, c = p % C;
          for (int64_t oy = 0; oy < OH; ++oy) {
            int64_t y0 = oy * stride[0] - padding[0];
            const int64_t y1 = std::min(y0 + (kernel[0] - 1) * dilation[0] + 1, H);
            while (y0 < 0) y0 += dilation[0];
            for (int64_t ox = 0; ox < OW; ++ox) {
              int64_t x0 = ox * stride[1] - padding[1];
              const int64_t x1 = std::min(x0 + (kernel[1] - 1) * dilation[1] + 1, W);
              while (x0 < 0) x0 += dilation[1];
              A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                            : std::numeric_limits<A>::lowest();
              int64_t best_i = y0 * W + x0;
              for (int64_t iy = y0; iy < y1; iy += dilation[0]) {
                // The window's row, read through its own pointer: the
                // element index math of View4 per tap cost a ResNet stem's
                // pooling 3-4x.
                const T* row = &x.at(n, c, iy, 0);
                for (int64_t ix = x0; ix < x1; ix += dilation[1]) {
                  const A a = convert<A>(row[ix * x.s3]);
                  // NaN wins (PyTorch's rule: a NaN replaces the max; a NaN
                  // is the only value unequal to itself). Selects, not a
                  // branch: on real activations the branch mispredicts.
                  const bool take = (a > best) | (a != a);
                  best = take ? a : best;
                  best_i = take ? iy * W + ix : best_i;
                }
              }
              y.at(n, c, oy, ox) = convert<T>(best);
              ind.at(n, c, oy, ox) = best_i;
            }
          }
        }
      });
    }
  });
}

void max_pool2d_backward_kernel(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                                const Tensor& indices) {
  const int64_t N = grad_input.size(0), C = grad_input.size(1), H = grad_input.size(2),
                W = grad_input.size(3);
  const int64_t OH = grad_out.size(2), OW = grad_out.size(3);
  dispatch_dtype(grad_input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_same_v<T, bool>, int64_t, compute_t<T>>;
    const View4<const T> g(grad_out);
    const View4<const int64_t> ind(indices);
    const View4<T> gi(grad_input);
    auto check_index = [&](int64_t i) {
      TESSERA_CHECK(i >= 0 && i < H * W, IndexError, "max_pool2d_with_indices_backward: index ",
                    i, " is out of range for a plane of ", H, " x ", W);
    };
    if constexpr (std::is_same_v<T, A>) {
      if (grad_input.is_contiguous() && grad_out.is_contiguous() && indices.is_contiguous()) {
        // Dense planes: the gradients add straight into grad_input (in
        // its own precision, as PyTorch's kernel), with no plane copy.
        parallel_for_range(N * C, 1, [&](int64_t p0, int64_t p1) {
          for (int64_t p = p0; p < p1; ++p) {
            T* plane = gi.data + p * H * W;
            const T* gp = g.data + p * OH * OW;
            const int64_t* ip = ind.data + p * OH * OW;
            std::fill(plane, plane + H * W, T(0));
            for (int64_t o = 0; o < OH * OW; ++o) {
              check_index(ip[o]);
              plane[ip[o]] += gp[o];
            }
          }
        });
        return;
      }
    }
    parallel_for_range(N * C, 1, [&](int64_t p0, int64_t p1) {
      std::vector<A> plane(static_cast<size_t>(H * W));
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        std::fill(plane.begin(), plane.end(), A(0));
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            const int64_t i = ind.at(n, c, oy, ox);
            check_index(i);
            plane[i] += convert<A>(g.at(n, c, oy, ox));
          }
        }
        for (int64_t iy = 0; iy < H; ++iy) {
          for (int64_t ix = 0; ix < W; ++ix) gi.at(n, c, iy, ix) = convert<T>(plane[iy * W + ix]);
        }
      }
    });
  });
}

// The window of output (oy, ox) clipped to the input, and its divisor.
struct AvgWindow {
  int64_t y0, y1, x0, x1;
  int64_t divisor;
};

AvgWindow avg_window(int64_t oy, int64_t ox, int64_t H, int64_t W, const Shape& kernel,
                     const Shape& stride, const Shape& padding, bool count_include_pad,
                     int64_t divisor_override) {
  int64_t y0 = oy * stride[0] - padding[0], x0 = ox * stride[1] - padding[1];
  int64_t y1 = std::min(y0 + kernel[0], H + padding[0]);
  int64_t x1 = std::min(x0 + kernel[1], W + padding[1]);
  const int64_t padded_size = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0);
  x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, H);
  x1 = std::min(x1, W);
  int64_t divisor = divisor_override != 0 ? divisor_override
                    : count_include_pad   ? padded_size
                                          : (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, divisor};
}

void avg_pool2d_kernel(const KernelContext&, Tensor& out, const Tensor& input, const Shape& kernel,
                       const Shape& stride, const Shape& padding, bool count_include_pad,
                       int64_t divisor_override) {
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  dispatch_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;
    const View4<const T> x(input);
    const View4<T> y(out);
    parallel_for_range(N * C, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            const AvgWindow win =
                avg_window(oy, ox, H, W, kernel, stride, padding, count_include_pad, divisor_override);
            if (win.y0 >= win.y1 || win.x0 >= win.x1) {
              y.at(n, c, oy, ox) = convert<T>(0);
              continue;
            }
            A sum = 0;
            for (int64_t iy = win.y0; iy < win.y1; ++iy) {
              for (int64_t ix = win.x0; ix < win.x1; ++ix) sum += convert<A>(x.at(n, c, iy, ix));
            }
            y.at(n, c, oy, ox) = convert<T>(sum / static_cast<A>(win.divisor));
          }
        }
      }
    });
  });
}

void avg_pool2d_backward_kernel(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                                const Shape& kernel, const Shape& stride, const Shape& padding,
                                bool count_include_pad, int64_t divisor_override) {
  const int64_t N = grad_input.size(0), C = grad_input.size(1), H = grad_input.size(2),
                W = grad_input.size(3);
  const int64_t OH = grad_out.size(2), OW = grad_out.size(3);
  dispatch_dtype(grad_input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;
    const View4<const T> g(grad_out);
    const View4<T> gi(grad_input);
    parallel_for_range(N * C, 1, [&](int64_t p0, int64_t p1) {
      std::vector<A> plane(static_cast<size_t>(H * W));
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        std::fill(plane.begin(), plane.end(), A(0));
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            const AvgWindow win =
                avg_window(oy, ox, H, W, kernel, stride, padding, count_include_pad, divisor_override);
            const A share = convert<A>(g.at(n, c, oy, ox)) / static_cast<A>(win.divisor);
            for (int64_t iy = win.y0; iy < win.y1; ++iy) {
              for (int64_t ix = win.x0; ix < win.x1; ++ix) plane[iy * W + ix] += share;
            }
          }
        }
        for (int64_t iy = 0; iy < H; ++iy) {
          for (int64_t ix = 0; ix < W; ++ix) gi.at(n, c, iy, ix) = convert<T>(plane[iy * W + ix]);
        }
      }
    });
  });
}

}  // namespace

void register_pool_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaxPool2d>(type, &max_pool2d_kernel);
  registry.register_kernel<kernels::MaxPool2dBackward>(type, &max_pool2d_backward_kernel);
  registry.register_kernel<kernels::AvgPool2d>(type, &avg_pool2d_kernel);
  registry.register_kernel<kernels::AvgPool2dBackward>(type, &avg_pool2d_backward_kernel);
}

}  // namespace tessera::cpu
