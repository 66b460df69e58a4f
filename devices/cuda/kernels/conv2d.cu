// conv2d and its backward as im2col + GEMM (cuBLAS through gemm.h), for
// the floating dtypes, deterministic (no atomics).
//
// Images are unfolded into columns, one row per (c, ky, kx) and one column
// per output pixel, in one of two layouts:
//   image-major    col[n][(c, ky, kx)][oy * Wo + ox]   (the forward)
//   channel-first  col[(c, ky, kx)][n][oy * Wo + ox]   (the backward)
// The forward is then one batched GEMM per group over the images, each
//   y[n] [Cout, HoWo] = W [Cout, Cin*kk] @ col[n]
// written straight into an NCHW output (no permute); a 1x1 convolution
// with stride 1 and no padding needs no columns at all (col[n] is the
// image itself). The backward keeps whole chunks in single GEMMs:
//   grad_weight  dW[Cout, Cin*kk]  += dy[Cout, n*HoWo] @ col^T
//   grad_input   dcol[Cin*kk, ...]  = W^T @ dy, then folded back (col2im)
//                by gathering, for each input pixel, every column entry
//                that read it: a fixed order, no atomics.
// Chunks of images keep the column buffer under column_bytes(), so that
// a chunk's columns can stay in L2 between the unfold and the GEMM.
#include <limits>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/gemm.h"
#include "devices/cuda/kernels/kernels.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/core/environment.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// Column buffers of at most this size (a chunk is at least one image);
// TESSERA_CUDA_CONV_COLUMN_BYTES overrides it, to tune on a new GPU.
constexpr int64_t kColumnBytes = int64_t{256} << 20;

int64_t column_bytes() {
  static const int64_t bytes = env_integer("TESSERA_CUDA_CONV_COLUMN_BYTES", kColumnBytes, 1,
                                           std::numeric_limits<long>::max());
  return bytes;
}

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

// Where column entry (row, n, p) lives: row * row_stride + n * image_stride + p.
struct ColumnLayout {
  int64_t row_stride, image_stride;
};

ColumnLayout image_major(const Geometry& g) { return {g.hw_out(), g.cin * g.kk() * g.hw_out()}; }
ColumnLayout channel_first(const Geometry& g, int64_t nb) { return {nb * g.hw_out(), g.hw_out()}; }

// One block per (row, image) pair, its threads over the output pixels: the
// (c, ky, kx, n) decoding happens once per block, and a pixel costs one
// 32-bit division (hw_out < 2^31 is checked by the caller).
template <typename T>
__global__ void im2col_gpu(T* col, ColumnLayout layout, const T* input, Strides4 s, Geometry g,
                           int64_t n0, int64_t nb) {
  const int64_t pair = blockIdx.x;
  const int64_t n = pair % nb, row = pair / nb;
  const int kx = static_cast<int>(row % g.kw), ky = static_cast<int>((row / g.kw) % g.kh);
  const int64_t c = row / g.kk();
  const T* image = input + (n0 + n) * s.n + c * s.c;
  T* dst = col + row * layout.row_stride + n * layout.image_stride;
  const int ow = static_cast<int>(g.ow), hw = static_cast<int>(g.hw_out());
  const int64_t y0 = static_cast<int64_t>(ky) * g.dh - g.ph, x0 = static_cast<int64_t>(kx) * g.dw - g.pw;
  for (int p = threadIdx.x; p < hw; p += blockDim.x) {
    const int oy = p / ow, ox = p - oy * ow;
    const int64_t iy = oy * g.sh + y0, ix = ox * g.sw + x0;
    dst[p] = (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) ? image[iy * s.y + ix * s.x] : T(0);
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
  return std::clamp<int64_t>(column_bytes() / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(g.n, 1));
}

// Columns for images [n0, n0 + nb) in the given layout.
Tensor unfold(const KernelContext& ctx, const Tensor& input, const Geometry& g, int64_t n0,
              int64_t nb, bool image_major_layout) {
  const int64_t rows = g.cin * g.kk();
  TESSERA_CHECK(g.hw_out() <= INT32_MAX && rows * nb <= INT32_MAX, ValueError,
                "conv2d: the cuda kernel takes below 2^31 output pixels per image and column "
                "rows per chunk, got ", describe(input));
  Tensor col = image_major_layout
                   ? empty({nb, rows, g.hw_out()}, TensorOptions(input.dtype(), ctx.device))
                   : empty({rows, nb * g.hw_out()}, TensorOptions(input.dtype(), ctx.device));
  const ColumnLayout layout = image_major_layout ? image_major(g) : channel_first(g, nb);
  const int threads =
      static_cast<int>(std::min<int64_t>(kBlockSize, ceil_div(g.hw_out(), 32) * 32));
  dispatch_float_dtype(input.dtype(), "conv2d", [&](auto tag) {
    using T = decltype(tag);
    im2col_gpu<T><<<static_cast<unsigned>(rows * nb), threads, 0, stream_of(ctx)>>>(
        col.data<T>(), layout, input.data<T>(), strides_of(input), g, n0, nb);
  });
  after_launch(ctx, "conv2d");
  return col;
}

bool is_pointwise(const Geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
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
  const int64_t cout_g = g.cout / g.groups, rows_g = g.cin_g * g.kk(), hw = g.hw_out();
  const Tensor w = weight.contiguous().view({g.cout, rows_g});
  // A 1x1 convolution of a contiguous input reads the images as columns.
  const bool direct_columns = is_pointwise(g) && input.is_contiguous();
  const int64_t chunk = direct_columns ? g.n : images_per_chunk(g, input.itemsize());
  // An NCHW output takes the GEMMs' results in place.
  const bool direct_output = out.is_contiguous();
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nb = std::min(chunk, g.n - n0);
    const Tensor col = direct_columns ? input.narrow(0, n0, nb).view({nb, g.cin, hw})
                                      : unfold(ctx, input, g, n0, nb, /*image_major=*/true);
    Tensor y = direct_output ? out.narrow(0, n0, nb).view({nb, g.cout, hw})
                             : empty({nb, g.cout, hw}, TensorOptions(out.dtype(), ctx.device));
    for (int64_t gr = 0; gr < g.groups; ++gr) {
      Tensor y_g = y.narrow(1, gr * cout_g, cout_g);
      const Tensor w_g = w.narrow(0, gr * cout_g, cout_g).unsqueeze(0).expand({nb, cout_g, rows_g});
      batched_matmul(ctx, y_g, w_g, col.narrow(1, gr * rows_g, rows_g));
    }
    if (!direct_output) out.narrow(0, n0, nb).copy_(y.view({nb, g.cout, g.oh, g.ow}));
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
      const Tensor col = unfold(ctx, input, g, n0, nb, /*image_major=*/false);
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
