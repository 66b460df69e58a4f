// conv2d and its backward as im2col + GEMM (cuBLAS through gemm.h), for
// the floating dtypes, deterministic (no atomics).
//
// Images are unfolded into columns laid out channel-first,
//   col[(c, ky, kx)][n][oy * Wo + ox] = input[n, c, iy, ix] (0 in padding),
// so one GEMM per group covers a whole chunk of images:
//   forward      y[Cout, n*HoWo]    = W[Cout, Cin*kk] @ col
//   grad_weight  dW[Cout, Cin*kk]  += dy[Cout, n*HoWo] @ col^T
//   grad_input   dcol[Cin*kk, ...]  = W^T @ dy, then folded back (col2im)
//                by gathering, for each input pixel, every column entry
//                that read it: a fixed order, no atomics.
// Chunks of images keep the column buffer under kColumnBytes; the outputs
// go through [Cout, n, HoWo] temporaries permuted into NCHW.
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/gemm.h"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// Column buffers of at most this size (a chunk is at least one image).
constexpr int64_t kColumnBytes = int64_t{256} << 20;

struct Geometry {
  int64_t n, cin, h, w, cout, cin_g, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw, groups;
  __host__ __device__ int64_t kk() const { return kh * kw; }
  __host__ __device__ int64_t hw_out() const { return oh * ow; }
};

Geometry geometry(const Tensor& input, const Tensor& weight, const Tensor& out_like,
                  const Shape& stride, const Shape& padding, const Shape& dilation, int64_t groups,
                  const char* op) {
  TESSERA_CHECK(input.dim() == 4 && weight.dim() == 4 && out_like.dim() == 4 &&
                    stride.size() == 2 && padding.size() == 2 && dilation.size() == 2 && groups > 0,
                ValueError, op, ": the cuda kernel needs 4-D tensors and 2-entry parameters, got ",
                describe(input), ", ", describe(weight), ", ", describe(out_like));
  TESSERA_CHECK(is_floating(input.dtype()) && weight.dtype() == input.dtype(), TypeError, op,
                ": the cuda kernel needs one floating dtype, got ", describe(input), " and ",
                describe(weight));
  return {input.size(0), input.size(1), input.size(2),  input.size(3),  weight.size(0),
          weight.size(1), weight.size(2), weight.size(3), out_like.size(2), out_like.size(3),
          stride[0],     stride[1],     padding[0],     padding[1],     dilation[0],
          dilation[1],   groups};
}

struct Strides4 {
  int64_t n, c, y, x;
};

Strides4 strides_of(const Tensor& t) {
  return {t.strides()[0], t.strides()[1], t.strides()[2], t.strides()[3]};
}

template <typename T>
__global__ void im2col_gpu(T* col, const T* input, Strides4 s, Geometry g, int64_t n0, int64_t nb) {
  const int64_t hw = g.oh * g.ow;
  const int64_t total = g.cin * g.kk() * nb * hw;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t p = e % hw;
    const int64_t n = (e / hw) % nb;
    const int64_t row = e / (hw * nb);  // (c, ky, kx)
    const int64_t kx = row % g.kw, ky = (row / g.kw) % g.kh, c = row / g.kk();
    const int64_t oy = p / g.ow, ox = p % g.ow;
    const int64_t iy = oy * g.sh - g.ph + ky * g.dh, ix = ox * g.sw - g.pw + kx * g.dw;
    col[e] = (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w)
                 ? input[(n0 + n) * s.n + c * s.c + iy * s.y + ix * s.x]
                 : T(0);
  }
}

// grad_input pixel (n, c, iy, ix) = the sum of the column entries that
// read it, ky and kx in order.
template <typename T>
__global__ void col2im_gpu(T* grad_input, Strides4 s, const T* col, Geometry g, int64_t n0, int64_t nb) {
  using A = compute_t<T>;
  const int64_t hw = g.oh * g.ow;
  const int64_t total = nb * g.cin * g.h * g.w;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t ix = e % g.w, iy = (e / g.w) % g.h, c = (e / (g.w * g.h)) % g.cin;
    const int64_t n = e / (g.w * g.h * g.cin);
    A sum = 0;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t ty = iy + g.ph - ky * g.dh;
      if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
      const int64_t oy = ty / g.sh;
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const int64_t tx = ix + g.pw - kx * g.dw;
        if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
        const int64_t ox = tx / g.sw;
        const int64_t row = (c * g.kh + ky) * g.kw + kx;
        sum += convert<A>(col[(row * nb + n) * hw + oy * g.ow + ox]);
      }
    }
    grad_input[(n0 + n) * s.n + c * s.c + iy * s.y + ix * s.x] = convert<T>(sum);
  }
}

int64_t images_per_chunk(const Geometry& g, size_t itemsize) {
  const int64_t per_image = g.cin * g.kk() * g.hw_out() * static_cast<int64_t>(itemsize);
  return std::clamp<int64_t>(kColumnBytes / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(g.n, 1));
}

Tensor unfold(const KernelContext& ctx, const Tensor& input, const Geometry& g, int64_t n0, int64_t nb) {
  Tensor col = empty({g.cin * g.kk(), nb * g.hw_out()}, TensorOptions(input.dtype(), ctx.device));
  dispatch_float_dtype(input.dtype(), "conv2d", [&](auto tag) {
    using T = decltype(tag);
    im2col_gpu<T><<<grid_for(col.numel()), kBlockSize, 0, stream_of(ctx)>>>(
        col.data<T>(), input.data<T>(), strides_of(input), g, n0, nb);
  });
  after_launch(ctx, "conv2d");
  return col;
}

// Rows [g * rows_per_group, ...) of a 2-D matrix, as a [1, rows, cols] batch.
Tensor group_rows(const Tensor& m, int64_t group, int64_t rows_per_group) {
  return m.narrow(0, group * rows_per_group, rows_per_group).unsqueeze(0);
}

void conv2d_kernel(const KernelContext& ctx, Tensor& out, const Tensor& input, const Tensor& weight,
                   const Tensor& bias, const Shape& stride, const Shape& padding,
                   const Shape& dilation, int64_t groups) {
  const Geometry g = geometry(input, weight, out, stride, padding, dilation, groups, "conv2d");
  if (out.numel() == 0) return;
  const int64_t cout_g = g.cout / g.groups, rows_g = g.cin_g * g.kk();
  const Tensor w = weight.contiguous().view({g.cout, rows_g});
  const int64_t chunk = images_per_chunk(g, input.itemsize());
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.n - n0);
    const Tensor col = unfold(ctx, input, g, n0, nb);
    Tensor y = empty({g.cout, nb * g.hw_out()}, TensorOptions(out.dtype(), ctx.device));
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      Tensor y_g = group_rows(y, gr, cout_g);
      batched_matmul(ctx, y_g, group_rows(w, gr, cout_g), group_rows(col, gr, rows_g));
    }
    // [Cout, nb, Ho*Wo] -> out[n0:n0+nb] in NCHW.
    Tensor dst = out.narrow(0, n0, nb);
    dst.copy_(y.view({g.cout, nb, g.oh, g.ow}).permute({1, 0, 2, 3}));
  }
  if (bias.defined()) out.add_(bias.view({1, g.cout, 1, 1}));
}

void conv2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input, Tensor& grad_weight,
                            Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                            const Tensor& weight, const Shape& stride, const Shape& padding,
                            const Shape& dilation, int64_t groups) {
  const Geometry g =
      geometry(input, weight, grad_out, stride, padding, dilation, groups, "conv2d_backward");
  const int64_t cout_g = g.cout / g.groups, rows_g = g.cin_g * g.kk();
  const TensorOptions opts(input.dtype(), ctx.device);
  if (grad_bias.defined()) grad_bias.copy_(sum(grad_out, {0, 2, 3}));
  if (!grad_input.defined() && !grad_weight.defined()) return;
  const Tensor w = weight.contiguous().view({g.cout, rows_g});
  Tensor dw_total;
  if (grad_weight.defined()) dw_total = zeros({g.cout, rows_g}, opts);
  const int64_t chunk = images_per_chunk(g, input.itemsize());
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.n - n0);
    // dy as [Cout, nb * Ho*Wo].
    const Tensor dy = grad_out.narrow(0, n0, nb).permute({1, 0, 2, 3}).contiguous().view(
        {g.cout, nb * g.hw_out()});
    if (grad_weight.defined()) {
      const Tensor col = unfold(ctx, input, g, n0, nb);
      Tensor dw = empty({g.cout, rows_g}, opts);
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        Tensor dw_g = group_rows(dw, gr, cout_g);
        batched_matmul(ctx, dw_g, group_rows(dy, gr, cout_g), group_rows(col, gr, rows_g).transpose(1, 2));
      }
      dw_total.add_(dw);
    }
    if (grad_input.defined()) {
      Tensor dcol = empty({g.cin * g.kk(), nb * g.hw_out()}, opts);
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        Tensor dcol_g = group_rows(dcol, gr, rows_g);
        batched_matmul(ctx, dcol_g, group_rows(w, gr, cout_g).transpose(1, 2), group_rows(dy, gr, cout_g));
      }
      dispatch_float_dtype(input.dtype(), "conv2d_backward", [&](auto tag) {
        using T = decltype(tag);
        col2im_gpu<T><<<grid_for(nb * g.cin * g.h * g.w), kBlockSize, 0, stream_of(ctx)>>>(
            grad_input.data<T>(), strides_of(grad_input), dcol.data<T>(), g, n0, nb);
      });
      after_launch(ctx, "conv2d_backward");
    }
  }
  if (grad_weight.defined()) grad_weight.copy_(dw_total.view(grad_weight.sizes()));
}

}  // namespace

void register_conv2d_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Conv2d>(type, &conv2d_kernel);
  registry.register_kernel<kernels::Conv2dBackward>(type, &conv2d_backward_kernel);
}

}  // namespace tessera::cuda
