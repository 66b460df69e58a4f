// The Conv2d kernel on the CPU.
//
//  - f32: oneDNN's convolution primitive (the library PyTorch's own CPU
//    conv2d runs on). Source, weights and destination are declared with
//    format "any" so that oneDNN picks its blocked layouts (nChw16c...) and
//    its JIT AVX-512 direct convolution; our NCHW tensors are reordered in
//    and out, which costs a few MB of copies against GFLOPs of work.
//    oneDNN caches the compiled primitives itself (primitive cache), so a
//    repeated shape pays for the JIT once. Measured on ResNet's
//    [8,64,56,56] x [64,64,3,3], padding 1, 2 threads, same run side by
//    side with torch.nn.functional.conv2d (2 cores shared with other jobs,
//    so noisy): 60 ms vs torch 64 ms, 95 vs 96 ms (oneDNN alone); through
//    tessera's conv2d 76 vs 64 ms and 125 vs 108 ms under heavier load,
//    i.e. 0.85x or better, as expected since torch runs the same library.
//  - other floating dtypes (f64, f16, bf16), and any f32 case oneDNN
//    declines: a direct loop over staged contiguous buffers, accumulating
//    in double (f16/bf16 in PyTorch accumulate in f32; double is at least
//    as accurate). These paths are for correctness, not speed.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "devices/cpu/kernels/conv_common.h"
#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/nn_staging.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cpu {

namespace {

using dnnl::memory;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Runs the convolution on oneDNN; false when oneDNN rejects the problem.
bool dnnl_conv2d(Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
                 const nn::ConvGeometry& g) {
  try {
    Tensor x = input.contiguous(), w = weight.contiguous();
    Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    const bool direct_out = out.is_contiguous();
    Tensor y = direct_out ? out : empty(out.sizes(), TensorOptions(out.dtype(), out.device()));

    match_dnnl_threads();
    dnnl::engine& eng = cpu_engine();
    dnnl::stream strm(eng);
    const memory::dims src_dims{g.n, g.cin, g.h, g.w};
    const memory::dims dst_dims{g.n, g.cout, g.oh, g.ow};
    const memory::dims wei_dims =
        g.groups == 1 ? memory::dims{g.cout, g.cin_g, g.kh, g.kw}
                      : memory::dims{g.groups, g.cout / g.groups, g.cin_g, g.kh, g.kw};
    const memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
    const memory::dims pad_l{g.ph, g.pw};
    // The right padding that yields exactly oh x ow outputs.
    const memory::dims pad_r{(g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.ph,
                             (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pw};
    const auto f32 = memory::data_type::f32;
    const auto any = memory::format_tag::any;
    memory::desc src_md(src_dims, f32, any), dst_md(dst_dims, f32, any), wei_md(wei_dims, f32, any);
    memory::desc bias_md({g.cout}, f32, memory::format_tag::x);
    auto desc = b.defined()
                    ? dnnl::convolution_forward::desc(
                          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                          src_md, wei_md, bias_md, dst_md, strides, dilates, pad_l, pad_r)
                    : dnnl::convolution_forward::desc(
                          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                          src_md, wei_md, dst_md, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, eng);

    memory user_src({src_dims, f32, memory::format_tag::nchw}, eng, x.data_ptr());
    memory user_wei({wei_dims, f32, g.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw},
                    eng, w.data_ptr());
    memory user_dst({dst_dims, f32, memory::format_tag::nchw}, eng, y.data_ptr());
    memory src = user_src, wei = user_wei, dst = user_dst;
    if (pd.src_desc() != user_src.get_desc()) {
      src = memory(pd.src_desc(), eng);
      dnnl::reorder(user_src, src).execute(strm, user_src, src);
    }
    if (pd.weights_desc() != user_wei.get_desc()) {
      wei = memory(pd.weights_desc(), eng);
      dnnl::reorder(user_wei, wei).execute(strm, user_wei, wei);
    }
    const bool reorder_dst = pd.dst_desc() != user_dst.get_desc();
    if (reorder_dst) dst = memory(pd.dst_desc(), eng);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
    if (b.defined()) args.emplace(DNNL_ARG_BIAS, memory(bias_md, eng, b.data_ptr()));
    dnnl::convolution_forward(pd).execute(strm, args);
    if (reorder_dst) dnnl::reorder(dst, user_dst).execute(strm, dst, user_dst);
    strm.wait();
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
