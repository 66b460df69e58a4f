// The Conv2d kernel on the CPU.
//
//  - f32: oneDNN's convolution primitive (the library PyTorch's own CPU
//    conv2d runs on). Source and destination are declared channel-blocked
//    (nChw16c with AVX-512, see DnnlConvDims::compute_src), weights "any",
//    so that oneDNN runs its JIT direct convolution; our NCHW tensors are
//    reordered in and out, which costs a few MB of copies against GFLOPs
//    of work.
//    oneDNN caches the compiled primitives itself (primitive cache), so a
//    repeated shape pays for the JIT once. Measured on ResNet's
//    [8,64,56,56] x [64,64,3,3], padding 1, 2 threads, same run side by
//    side with torch.nn.functional.conv2d (2 cores shared with other jobs,
//    so noisy): 60 ms vs torch 64 ms, 95 vs 96 ms (oneDNN alone); through
//    tessera's conv2d 76 vs 64 ms and 125 vs 108 ms under heavier load,
//    i.e. 0.85x or better, as expected since torch runs the same library.
//    Where oneDNN has only its reference implementation (wav2vec2's
//    grouped kernel-128 positional convolution), unfolded patches and
//    GEMMs (conv_gemm.h).
//  - other floating dtypes (f64, f16, bf16), and any f32 case oneDNN
//    declines: a direct loop over staged contiguous buffers, accumulating
//    in double (f16/bf16 in PyTorch accumulate in f32; double is at least
//    as accurate). These paths are for correctness, not speed.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "devices/cpu/kernels/conv_common.h"
#include "devices/cpu/kernels/conv_dnnl.h"
#include "devices/cpu/kernels/conv_gemm.h"
#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/nn_staging.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cpu {

namespace {

using dnnl::memory;

dnnl::convolution_forward::primitive_desc forward_pd(const nn::DnnlConvDims& dims,
                                                     bool with_bias) {
  auto desc = with_bias
                  ? dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                        dims.compute_src(), dims.any_weights(), dims.plain_bias(), dims.compute_dst(),
                        dims.strides, dims.dilates, dims.pad_l, dims.pad_r)
                  : dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                        dims.compute_src(), dims.any_weights(), dims.compute_dst(), dims.strides,
                        dims.dilates, dims.pad_l, dims.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, nn::dnnl_cpu_engine());
}

// y = conv(x, w) + b on oneDNN, for the images of x (contiguous, as y).
void dnnl_conv2d_images(Tensor y, const Tensor& x, const Tensor& w, const Tensor& b,
                        const nn::ConvGeometry& g) {
  const nn::DnnlConvDims dims(g);
  dnnl::engine& eng = nn::dnnl_cpu_engine();
  dnnl::stream strm(eng);
  const auto pd = forward_pd(dims, b.defined());
  memory user_src(dims.plain_src(), eng, x.data_ptr());
  memory user_wei(dims.plain_weights(), eng, w.data_ptr());
  memory user_dst(dims.plain_dst(), eng, y.data_ptr());
  nn::DnnlBuffers buffers;
  memory dst = nn::output_in_layout(user_dst, pd.dst_desc(), buffers);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, nn::to_layout(user_src, pd.src_desc(), strm, buffers)},
      {DNNL_ARG_WEIGHTS, nn::to_layout(user_wei, pd.weights_desc(), strm, buffers)},
      {DNNL_ARG_DST, dst}};
  if (b.defined()) args.emplace(DNNL_ARG_BIAS, memory(dims.plain_bias(), eng, b.data_ptr()));
  dnnl::convolution_forward(pd).execute(strm, args);
  nn::from_layout(dst, user_dst, strm);
  strm.wait();
}

// Runs the convolution on oneDNN (the batch in slices, see
// nn::BatchSlices), or where oneDNN has only its reference implementation
// on unfolded patches; false when oneDNN rejects the problem.
bool dnnl_conv2d(Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                 const nn::ConvGeometry& g) {
  try {
    Tensor x = input.contiguous(), w = weight.contiguous();
    Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    const bool direct_out = out.is_contiguous();
    Tensor y = direct_out ? out : empty(out.sizes(), TensorOptions(out.dtype(), out.device()));
    const nn::BatchSlices slices = nn::batch_slices(g.n);
    const nn::DnnlConvDims slice_dims(nn::with_batch(g, slices.per));
    if (nn::reference_only(forward_pd(slice_dims, b.defined()))) {
      nn::gemm_conv2d_forward(g, x.data<float>(), w.data<float>(),
                              b.defined() ? b.data<float>() : nullptr, y.data<float>());
    } else {
      nn::for_each_slice(slices, g.n, [&](int64_t n0, int64_t images) {
        dnnl_conv2d_images(y.narrow(0, n0, images), x.narrow(0, n0, images), w, b,
                           nn::with_batch(g, images));
      });
    }
    if (!direct_out) cpu_copy(out, y);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// Direct convolution on staged double buffers, any floating dtype.
void generic_conv2d(Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                    const nn::ConvGeometry& g) {
  const std::vector<double> x = nn::read_as<double>(input), w = nn::read_as<double>(weight);
  const std::vector<double> b = bias.defined() ? nn::read_as<double>(bias) : std::vector<double>();
  std::vector<double> y(static_cast<size_t>(out.numel()));
  const int64_t cout_g = g.cout / g.groups;
  parallel_for_range(g.n * g.cout, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / g.cout, oc = t % g.cout, grp = oc / cout_g;
      double* yp = y.data() + t * g.oh * g.ow;
      for (int64_t i = 0; i < g.oh * g.ow; ++i) yp[i] = b.empty() ? 0.0 : b[oc];
      for (int64_t ic = 0; ic < g.cin_g; ++ic) {
        const double* xp = x.data() + (n * g.cin + grp * g.cin_g + ic) * g.h * g.w;
        const double* wp = w.data() + (oc * g.cin_g + ic) * g.kh * g.kw;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const double wv = wp[ky * g.kw + kx];
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t ox = 0; ox < g.ow; ++ox) {
                const int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                if (ix < 0 || ix >= g.w) continue;
                yp[oy * g.ow + ox] += wv * xp[iy * g.w + ix];
              }
            }
          }
        }
      }
    }
  });
  nn::write_from(out, y);
}

void conv2d_kernel(const KernelContext&, Tensor& out, const Tensor& input, const Tensor& weight,
                   const Tensor& bias, const Shape& stride, const Shape& padding,
                   const Shape& dilation, int64_t groups) {
  const nn::ConvGeometry g = nn::conv_geometry(input, weight, out, stride, padding, dilation, groups);
  if (out.numel() == 0) return;
  if (out.dtype() == DType::kF32 && dnnl_conv2d(out, input, weight, bias, g)) return;
  generic_conv2d(out, input, weight, bias, g);
}

}  // namespace

void register_conv_forward_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Conv2d>(type, &conv2d_kernel);
}

}  // namespace tessera::cpu
