// The Conv2dBackward kernel on the CPU.
//
//  - f32: oneDNN's backward-data and backward-weights primitives (what
//    PyTorch's own CPU convolution backward runs on), in the blocked layouts
//    oneDNN picks; our NCHW tensors are reordered in and out, as in the
//    forward kernel. The bias gradient comes from the backward-weights
//    primitive too. Where oneDNN has only its reference implementation
//    (large strided kernels such as ViT's patch embedding, depthwise
//    weight gradients), unfolded patches and GEMMs (conv_gemm.h).
//  - other floating dtypes (f64, f16, bf16), and any f32 case oneDNN
//    declines: direct loops over staged contiguous double buffers. These
//    are for correctness, not speed (a ResNet-18 step at batch 8 took 25 s
//    through them in f32, against 0.4 s in torch).
#include <optional>
#include <unordered_map>
#include <vector>

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

// A contiguous tensor with t's sizes and dtype to compute into: t itself
// when it is contiguous, else a temporary that finish() copies into t.
struct Destination {
  explicit Destination(Tensor& t)
      : target(t), value(t.is_contiguous() ? t : empty(t.sizes(), TensorOptions(t.dtype(), t.device()))) {}
  void finish() {
    if (!value.is_same(target)) cpu_copy(target, value);
  }
  Tensor& target;
  Tensor value;
};

dnnl::convolution_backward_data::primitive_desc data_pd(const nn::DnnlConvDims& dims) {
  const dnnl::convolution_backward_data::desc desc(
      dnnl::algorithm::convolution_direct, dims.compute_src(), dims.any_weights(),
      dims.compute_dst(), dims.strides, dims.dilates, dims.pad_l, dims.pad_r);
  return {desc, nn::dnnl_cpu_engine(), dims.forward_training(false)};
}

dnnl::convolution_backward_weights::primitive_desc weights_pd(const nn::DnnlConvDims& dims,
                                                              bool with_bias) {
  const auto desc =
      with_bias ? dnnl::convolution_backward_weights::desc(
                      dnnl::algorithm::convolution_direct, dims.compute_src(), dims.any_weights(),
                      dims.plain_bias(), dims.compute_dst(), dims.strides, dims.dilates,
                      dims.pad_l, dims.pad_r)
                : dnnl::convolution_backward_weights::desc(
                      dnnl::algorithm::convolution_direct, dims.compute_src(), dims.any_weights(),
                      dims.compute_dst(), dims.strides, dims.dilates, dims.pad_l, dims.pad_r);
  return {desc, nn::dnnl_cpu_engine(), dims.forward_training(with_bias)};
}

// gx for the images of gy (every tensor contiguous).
void dnnl_backward_data_images(Tensor gx, const Tensor& gy, const Tensor& w,
                               const nn::ConvGeometry& g) {
  const nn::DnnlConvDims dims(g);
  dnnl::engine& eng = nn::dnnl_cpu_engine();
  dnnl::stream strm(eng);
  nn::DnnlBuffers buffers;
  const auto pd = data_pd(dims);
  memory user_gy(dims.plain_dst(), eng, gy.data_ptr());
  memory user_w(dims.plain_weights(), eng, w.data_ptr());
  memory user_gx(dims.plain_src(), eng, gx.data_ptr());
  memory diff_src = nn::output_in_layout(user_gx, pd.diff_src_desc(), buffers);
  dnnl::convolution_backward_data(pd).execute(
      strm, {{DNNL_ARG_DIFF_DST, nn::to_layout(user_gy, pd.diff_dst_desc(), strm, buffers)},
             {DNNL_ARG_WEIGHTS, nn::to_layout(user_w, pd.weights_desc(), strm, buffers)},
             {DNNL_ARG_DIFF_SRC, diff_src}});
  nn::from_layout(diff_src, user_gx, strm);
  strm.wait();
}

// gw (and gb where defined) summed over the images of x and gy (every
// tensor contiguous).
void dnnl_backward_weights_images(Tensor gw, Tensor gb, const Tensor& x, const Tensor& gy,
                                  const nn::ConvGeometry& g) {
  const nn::DnnlConvDims dims(g);
  dnnl::engine& eng = nn::dnnl_cpu_engine();
  dnnl::stream strm(eng);
  nn::DnnlBuffers buffers;
  const auto pd = weights_pd(dims, gb.defined());
  memory user_x(dims.plain_src(), eng, x.data_ptr());
  memory user_gy(dims.plain_dst(), eng, gy.data_ptr());
  memory user_gw(dims.plain_weights(), eng, gw.data_ptr());
  memory diff_w = nn::output_in_layout(user_gw, pd.diff_weights_desc(), buffers);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, nn::to_layout(user_x, pd.src_desc(), strm, buffers)},
      {DNNL_ARG_DIFF_DST, nn::to_layout(user_gy, pd.diff_dst_desc(), strm, buffers)},
      {DNNL_ARG_DIFF_WEIGHTS, diff_w}};
  if (gb.defined()) args.emplace(DNNL_ARG_DIFF_BIAS, memory(dims.plain_bias(), eng, gb.data_ptr()));
  dnnl::convolution_backward_weights(pd).execute(strm, args);
  nn::from_layout(diff_w, user_gw, strm);
  strm.wait();
}

// The f32 backward on oneDNN, the batch in slices (nn::BatchSlices; the
// weight and bias gradients of each slice summed in slice order), or on
// unfolded patches where oneDNN has only its reference implementation;
// false when oneDNN rejects the problem.
bool dnnl_conv2d_backward(Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias,
                          const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                          const nn::ConvGeometry& g) {
  try {
    const nn::BatchSlices slices = nn::batch_slices(g.n);
    const nn::DnnlConvDims slice_dims(nn::with_batch(g, slices.per));
    const Tensor gy = grad_out.contiguous();
    const bool with_bias = grad_bias.defined();

    if (grad_input.defined()) {
      const Tensor w = weight.contiguous();
      Destination gx(grad_input);
      if (nn::reference_only(data_pd(slice_dims))) {
        nn::gemm_conv2d_backward_data(g, w.data<float>(), gy.data<float>(),
                                      gx.value.data<float>());
      } else {
        nn::for_each_slice(slices, g.n, [&](int64_t n0, int64_t images) {
          dnnl_backward_data_images(gx.value.narrow(0, n0, images), gy.narrow(0, n0, images), w,
                                    nn::with_batch(g, images));
        });
      }
      gx.finish();
    }

    if (grad_weight.defined() || with_bias) {
      const Tensor x = input.contiguous();
      // The weight gradient is needed as the primitive's output even when
      // only the bias gradient was asked for.
      const TensorOptions f32(DType::kF32, weight.device());
      Tensor gw_store = grad_weight.defined() ? grad_weight : empty(weight.sizes(), f32);
      Destination gw(gw_store);
      std::optional<Destination> gb;
      if (with_bias) gb.emplace(grad_bias);
      if (nn::reference_only(weights_pd(slice_dims, with_bias))) {
        nn::gemm_conv2d_backward_weights(g, x.data<float>(), gy.data<float>(),
                                         gw.value.data<float>(),
                                         gb ? gb->value.data<float>() : nullptr);
      } else {
        // Slice 0 writes into the gradients, the others into their own
        // buffers, added after in slice order.
        std::vector<Tensor> part_w(static_cast<size_t>(slices.count));
        std::vector<Tensor> part_b(static_cast<size_t>(slices.count));
        for (int64_t s = 0; s < slices.count; ++s) {
          part_w[s] = s == 0 ? gw.value : empty(weight.sizes(), f32);
          if (gb) part_b[s] = s == 0 ? gb->value : empty({g.cout}, f32);
        }
        nn::for_each_slice(slices, g.n, [&](int64_t n0, int64_t images) {
          const size_t s = static_cast<size_t>(n0 / slices.per);
          dnnl_backward_weights_images(part_w[s], part_b[s], x.narrow(0, n0, images),
                                       gy.narrow(0, n0, images), nn::with_batch(g, images));
        });
        for (int64_t s = 1; s < slices.count; ++s) {
          gw.value.add_(part_w[s]);
          if (gb) gb->value.add_(part_b[s]);
        }
      }
      gw.finish();
      if (gb) gb->finish();
    }
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

void conv2d_backward_kernel(const KernelContext&, Tensor& grad_input, Tensor& grad_weight,
                            Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                            const Tensor& weight, const Shape& stride, const Shape& padding,
                            const Shape& dilation, int64_t groups) {
  const nn::ConvGeometry g =
      nn::conv_geometry(input, weight, grad_out, stride, padding, dilation, groups);
  const auto all_f32 = [](const Tensor& t) { return !t.defined() || t.dtype() == DType::kF32; };
  if (grad_out.numel() > 0 && input.dtype() == DType::kF32 && all_f32(weight) &&
      all_f32(grad_out) && all_f32(grad_input) && all_f32(grad_weight) && all_f32(grad_bias) &&
      dnnl_conv2d_backward(grad_input, grad_weight, grad_bias, grad_out, input, weight, g)) {
    return;
  }
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
