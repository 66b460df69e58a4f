// conv2d and its backward on the device, as im2col + the shared
// GEMM (gemm.h) + col2im, chunked over the batch so the column buffer (a
// device temporary) stays near kColumnBudget elements:
//  - forward: columns = im2col(input chunk) [C*kh*kw][n][oh*ow]; per group,
//    out[n, g] = weight[g] @ columns[g] (+ bias), batched over n;
//  - grad_bias: a per-channel tree sum (conv2d_bias_grad_f32.comp);
//  - grad_weight: per group, sum over chunks of grad_out[g] (as
//    [Cout/g, n * oh*ow]) @ columns[g]^T, accumulated in the GEMM;
//  - grad_input: per group, column grads = weight[g]^T @ grad_out[g], then
//    col2im gathers each input element's taps (no atomics).
// Sums are f32, deterministic. f16 and bf16 run the same f32 path on
// widened copies (widened_f32.h). f64 runs it in double (the _f64 shaders
// and GEMM) where the device has shaderFloat64. Other dtypes, and tensors
// whose offsets or sizes overflow the shaders' 32-bit arithmetic, stage
// through the host.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "devices/vulkan/kernels/gemm.h"
#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/widened_f32.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/signatures/nn.h"

namespace tessera::vulkan {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
// Column buffer elements per chunk (64 MiB of f32, 128 MiB of f64); a
// chunk holds at least one image.
constexpr int64_t kColumnBudget = int64_t{16} << 20;

struct ConvGeometry {
  DType dtype;                   // of every tensor: f32 or f64
  int64_t n, cin, h, w;          // input
  int64_t cout, cin_g, kh, kw;   // weight
  int64_t oh, ow;                // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t cout_g() const { return cout / groups; }
  int64_t rows_g() const { return cin_g * kh * kw; }  // GEMM depth per group
  int64_t plane() const { return oh * ow; }
  // Images per chunk of the column buffer.
  int64_t chunk() const {
    return std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(cin * kh * kw * plane(), 1), 1,
                               std::max<int64_t>(n, 1));
  }
};

// Matches ConvParams in shaders/conv2d_geometry.glsl.
struct ConvParams {
  uint64_t image;
  uint64_t columns;
  uint32_t numel;
  uint32_t batch, channels, height, width;
  uint32_t kernel_h, kernel_w, out_h, out_w;
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int32_t image_strides[4];
};

// True when the shaders can address every element of t with int32 offsets.
bool fits_int32(const Tensor& t) {
  if (!t.defined()) return true;
  if (t.numel() > kInt32Max) return false;
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0 || t.stride(d) > kInt32Max) return false;
    if (t.size(d) > 0) last += (t.size(d) - 1) * t.stride(d);
  }
  return last <= kInt32Max;
}

// The compute dtype of a call whose tensors all have the dtype of
// `first`: f32, or f64 where the device has shaderFloat64; nullopt when the
// shaders cannot take them.
std::optional<DType> shader_dtype(const KernelContext& ctx, const Tensor& first,
                                  std::initializer_list<const Tensor*> others) {
  const DType dtype = first.dtype();
  if (dtype != DType::kF32 &&
      !(dtype == DType::kF64 && vulkan_context_of(ctx).has_f64_shaders())) {
    return std::nullopt;
  }
  if (!all_defined_have(dtype, others)) return std::nullopt;
  return dtype;
}

// The shader of a conv body for dtype: "<body>_f32" or "<body>_f64".
std::string shader_for(std::string_view body, DType dtype) {
  return std::string(body) + (dtype == DType::kF64 ? "_f64" : "_f32");
}

// The geometry, or false when the shaders cannot take it.
bool conv_geometry(DType dtype, const Tensor& input, const Tensor& weight, const Tensor& out,
                   const Shape& stride, const Shape& padding, const Shape& dilation,
                   int64_t groups, ConvGeometry* g) {
  if (input.dim() != 4 || weight.dim() != 4 || out.dim() != 4 || stride.size() != 2 ||
      padding.size() != 2 || dilation.size() != 2 || groups < 1) {
    return false;
  }
  *g = ConvGeometry{dtype,
                    input.size(0), input.size(1), input.size(2),  input.size(3),
                    weight.size(0), weight.size(1), weight.size(2), weight.size(3),
                    out.size(2),   out.size(3),    stride[0],      stride[1],
                    padding[0],    padding[1],     dilation[0],    dilation[1], groups};
  for (int64_t v : {g->sh, g->sw, g->dh, g->dw}) {
    if (v < 1 || v > kInt32Max) return false;
  }
  for (int64_t v : {g->ph, g->pw}) {
    if (v < 0 || v > kInt32Max) return false;
  }
  // One chunk's columns must have int32 offsets too.
  return g->chunk() * g->cin * g->kh * g->kw * g->plane() <= kInt32Max;
}

ConvParams conv_params(const ConvGeometry& g, const Tensor& image, int64_t n0, int64_t batch,
                       const Tensor& columns, int64_t numel) {
  ConvParams p{};
  p.image = reinterpret_cast<uint64_t>(image.data_ptr()) +
            static_cast<uint64_t>(n0 * image.stride(0)) * image.itemsize();
  p.columns = reinterpret_cast<uint64_t>(columns.data_ptr());
  p.numel = static_cast<uint32_t>(numel);
  p.batch = static_cast<uint32_t>(batch);
  p.channels = static_cast<uint32_t>(g.cin);
  p.height = static_cast<uint32_t>(g.h);
  p.width = static_cast<uint32_t>(g.w);
  p.kernel_h = static_cast<uint32_t>(g.kh);
  p.kernel_w = static_cast<uint32_t>(g.kw);
  p.out_h = static_cast<uint32_t>(g.oh);
  p.out_w = static_cast<uint32_t>(g.ow);
  p.stride_h = static_cast<int32_t>(g.sh);
  p.stride_w = static_cast<int32_t>(g.sw);
  p.pad_h = static_cast<int32_t>(g.ph);
  p.pad_w = static_cast<int32_t>(g.pw);
  p.dilation_h = static_cast<int32_t>(g.dh);
  p.dilation_w = static_cast<int32_t>(g.dw);
  for (int d = 0; d < 4; ++d) p.image_strides[d] = static_cast<int32_t>(image.stride(d));
  return p;
}

// columns = im2col(input[n0, n0 + nc)): a grid over (plane, column row,
// image), each dim capped at the dispatch limit (the shader loops).
void im2col(const KernelContext& ctx, const ConvGeometry& g, const Tensor& input, int64_t n0,
            int64_t nc, const Tensor& columns) {
  if (g.cin * g.kh * g.kw == 0 || g.plane() == 0 || nc == 0) return;  // no columns
  const int64_t group_size = vulkan_context_of(ctx).pipelines().workgroup_size();
  const int64_t max_groups = kMaxWorkGroupsPerDim;
  const auto groups_x =
      static_cast<uint32_t>(std::min((g.plane() + group_size - 1) / group_size, max_groups));
  const auto groups_y = static_cast<uint32_t>(std::min(g.cin * g.kh * g.kw, max_groups));
  const auto groups_z = static_cast<uint32_t>(std::min(nc, max_groups));
  launch_groups(ctx, shader_for("im2col", g.dtype), {}, conv_params(g, input, n0, nc, columns, 0),
                groups_x, groups_y, groups_z);
}

// A pointer `elems` elements past t's data (null stays null: dry runs).
const void* at(const Tensor& t, int64_t elems) {
  if (!t.defined()) return nullptr;
  return static_cast<const char*>(t.data_ptr()) + elems * static_cast<int64_t>(t.itemsize());
}

// The GEMMs of one convolution call go through here: in a dry run it only
// checks that every one of them has a variant (so nothing is launched
// before the whole call is known to run natively).
struct GemmRunner {
  const KernelContext& ctx;
  bool dry_run;
  bool ok = true;
  void operator()(const GemmProblem& problem) {
    const GemmVariant variant = choose_gemm_variant(ctx, problem);
    if (variant == GemmVariant::kNone) ok = false;
    if (!dry_run && ok) run_gemm(ctx, problem, variant);
  }
};

// True when t's last two dims flatten to one unit-stride dim (the GEMM
// sees an output plane as one row).
bool plane_is_flat(const Tensor& t) {
  return t.stride(3) == 1 && (t.size(2) <= 1 || t.stride(2) == t.size(3));
}

Tensor empty_of(const ConvGeometry& g, const Shape& sizes, const KernelContext& ctx) {
  return empty(sizes, TensorOptions(g.dtype, ctx.device));
}

// The output of conv2d_forward: a plane-flat [N, Cout, oh * ow] view.
struct OutputView {
  char* data;  // null in a dry run
  int64_t batch_stride, channel_stride;
};

// out = conv(input) + bias, or a dry run of its GEMMs (input and weight
// undefined, out.data null: only sizes and strides are read).
void conv2d_forward(const KernelContext& ctx, GemmRunner& gemm, const ConvGeometry& g,
                    const OutputView& out, const Tensor& input, const Tensor& weight,
                    const Tensor& bias) {
  const int64_t chunk = g.chunk(), plane = g.plane(), rows_g = g.rows_g();
  Tensor columns;
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, g.n - n0);
    if (!gemm.dry_run) {
      if (!columns.defined()) columns = empty_of(g, {g.cin * g.kh * g.kw * chunk * plane}, ctx);
      im2col(ctx, g, input, n0, nc, columns);
    }
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      GemmProblem pr;
      pr.dtype = g.dtype;
      pr.batch = nc;
      pr.m = g.cout_g();
      pr.n = plane;
      pr.k = rows_g;
      pr.a = {at(weight, grp * g.cout_g() * rows_g), 0, rows_g, 1};
      pr.b = {at(columns, grp * rows_g * nc * plane), plane, nc * plane, 1};
      const int64_t c_offset = n0 * out.batch_stride + grp * g.cout_g() * out.channel_stride;
      const int64_t c_bytes = c_offset * static_cast<int64_t>(itemsize(g.dtype));
      pr.c = {out.data ? out.data + c_bytes : nullptr, out.batch_stride, out.channel_stride, 1};
      if (bias.defined()) {
        pr.bias = at(bias, grp * g.cout_g() * bias.stride(0));
        pr.bias_stride = bias.stride(0);
      }
      gemm(pr);
    }
  }
}

void conv2d_kernel(const KernelContext& ctx, Tensor& out, const Tensor& input,
                   const Tensor& weight, const Tensor& bias, const Shape& stride,
                   const Shape& padding, const Shape& dilation, int64_t groups) {
  if (out.numel() == 0) return;
  if (is_reduced_float(out.dtype()) && all_defined_have(out.dtype(), {&input, &weight, &bias})) {
    Tensor y = f32_result(out);
    conv2d_kernel(ctx, y, widened(input), widened(weight), widened(bias), stride, padding,
                  dilation, groups);
    round_into(out, y);
    return;
  }
  ConvGeometry g;
  const auto dtype = shader_dtype(ctx, out, {&input, &weight, &bias});
  bool native = dtype &&
                conv_geometry(*dtype, input, weight, out, stride, padding, dilation, groups, &g) &&
                fits_int32(input) && fits_int32(weight) && fits_int32(out) && fits_int32(bias);
  // The GEMMs write out directly when its planes are flat, else a
  // contiguous temporary copied into it.
  const bool direct = native && plane_is_flat(out);
  if (native) {
    GemmRunner dry{ctx, /*dry_run=*/true};
    const OutputView probe = direct ? OutputView{nullptr, out.stride(0), out.stride(1)}
                                    : OutputView{nullptr, g.cout * g.plane(), g.plane()};
    conv2d_forward(ctx, dry, g, probe, Tensor(), Tensor(), bias);
    native = dry.ok;
  }
  if (!native) {
    run_on_host<kernels::Conv2d>(ctx, out, input, weight, bias, stride, padding, dilation, groups);
    return;
  }
  // The weight as [Cout, Cin/groups * kh * kw] rows.
  const Tensor w = weight.contiguous();
  GemmRunner gemm{ctx, /*dry_run=*/false};
  Tensor y = direct ? out : empty_of(g, out.sizes(), ctx);
  conv2d_forward(ctx, gemm, g,
                 OutputView{static_cast<char*>(y.data_ptr()), y.stride(0), y.stride(1)}, input, w,
                 bias);
  if (!direct) out.copy_(y);
}

// grad_bias[c] = sum of grad_out (contiguous) over n, h, w.
void conv2d_bias_grad(const KernelContext& ctx, Tensor& grad_bias, const Tensor& grad_out) {
  struct {
    uint64_t grad_out, grad_bias;
    uint32_t batch, channels, plane;
    int32_t grad_bias_stride;
  } p{};
  p.grad_out = reinterpret_cast<uint64_t>(grad_out.data_ptr());
  p.grad_bias = reinterpret_cast<uint64_t>(grad_bias.data_ptr());
  p.batch = static_cast<uint32_t>(grad_out.size(0));
  p.channels = static_cast<uint32_t>(grad_out.size(1));
  p.plane = static_cast<uint32_t>(grad_out.size(2) * grad_out.size(3));
  p.grad_bias_stride = static_cast<int32_t>(grad_bias.stride(0));
  launch_groups(ctx, shader_for("conv2d_bias_grad", grad_out.dtype()), {}, p,
                static_cast<uint32_t>(grad_bias.size(0)));
}

// The backward's GEMMs and shader launches (or their dry run). go is
// grad_out contiguous; go_t is grad_out as [Cout, N, oh, ow] contiguous;
// grad_weight is contiguous when defined.
void conv2d_backward_gemms(const KernelContext& ctx, GemmRunner& gemm, const ConvGeometry& g,
                           Tensor& grad_input, Tensor& grad_weight, const Tensor& go,
                           const Tensor& go_t, const Tensor& input, const Tensor& weight,
                           bool want_input, bool want_weight) {
  const int64_t chunk = g.chunk(), plane = g.plane(), rows_g = g.rows_g(), cout_g = g.cout_g();
  const int64_t col_elems = g.cin * g.kh * g.kw * chunk * plane;
  Tensor columns, column_grads;
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, g.n - n0);
    if (want_weight) {
      if (!gemm.dry_run) {
        if (!columns.defined()) columns = empty_of(g, {col_elems}, ctx);
        im2col(ctx, g, input, n0, nc, columns);
      }
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        // grad_weight[g] (+)= go_t[g, n0:n0+nc] [cout_g, nc*plane] @ columns[g]^T.
        GemmProblem pr;
        pr.dtype = g.dtype;
        pr.m = cout_g;
        pr.n = rows_g;
        pr.k = nc * plane;
        pr.a = {at(go_t, grp * cout_g * g.n * plane + n0 * plane), 0, g.n * plane, 1};
        pr.b = {at(columns, grp * rows_g * nc * plane), 0, 1, nc * plane};
        pr.c = {at(grad_weight, grp * cout_g * rows_g), 0, rows_g, 1};
        pr.accumulate = n0 > 0;
        gemm(pr);
      }
    }
    if (want_input) {
      if (!gemm.dry_run && !column_grads.defined()) column_grads = empty_of(g, {col_elems}, ctx);
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        // column_grads[g][n] = weight[g]^T [rows_g, cout_g] @ go[n, g] [cout_g, plane].
        GemmProblem pr;
        pr.dtype = g.dtype;
        pr.batch = nc;
        pr.m = rows_g;
        pr.n = plane;
        pr.k = cout_g;
        pr.a = {at(weight, grp * cout_g * rows_g), 0, 1, rows_g};
        pr.b = {at(go, (n0 * g.cout + grp * cout_g) * plane), g.cout * plane, plane, 1};
        pr.c = {at(column_grads, grp * rows_g * nc * plane), plane, nc * plane, 1};
        gemm(pr);
      }
      if (!gemm.dry_run) {
        const int64_t image_numel = nc * g.cin * g.h * g.w;
        launch(ctx, shader_for("col2im", g.dtype), {},
               conv_params(g, grad_input, n0, nc, column_grads, image_numel), image_numel);
      }
    }
  }
}

void conv2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input, Tensor& grad_weight,
                            Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                            const Tensor& weight, const Shape& stride, const Shape& padding,
                            const Shape& dilation, int64_t groups) {
  if (is_reduced_float(grad_out.dtype()) &&
      all_defined_have(grad_out.dtype(), {&grad_input, &grad_weight, &grad_bias, &input, &weight})) {
    Tensor gi = f32_result(grad_input), gw = f32_result(grad_weight), gb = f32_result(grad_bias);
    conv2d_backward_kernel(ctx, gi, gw, gb, widened(grad_out), widened(input), widened(weight),
                           stride, padding, dilation, groups);
    round_into(grad_input, gi);
    round_into(grad_weight, gw);
    round_into(grad_bias, gb);
    return;
  }
  ConvGeometry g;
  const auto dtype =
      shader_dtype(ctx, grad_out, {&grad_input, &grad_weight, &grad_bias, &input, &weight});
  bool native = dtype &&
                conv_geometry(*dtype, input, weight, grad_out, stride, padding, dilation, groups,
                              &g) &&
                fits_int32(grad_input) && fits_int32(grad_weight) && fits_int32(grad_bias) &&
                fits_int32(grad_out) && fits_int32(input) && fits_int32(weight) &&
                g.cout <= kMaxWorkGroupsPerDim;
  const bool want_input = grad_input.defined() && grad_input.numel() > 0;
  const bool want_weight = grad_weight.defined() && grad_weight.numel() > 0;
  if (native) {
    // Dry run with contiguous strides (every temporary below is contiguous).
    GemmRunner dry{ctx, /*dry_run=*/true};
    Tensor none;
    if (g.n > 0 && g.plane() > 0) {
      conv2d_backward_gemms(ctx, dry, g, none, none, none, none, none, none, want_input,
                            want_weight);
    }
    native = dry.ok;
  }
  if (!native) {
    run_on_host<kernels::Conv2dBackward>(ctx, grad_input, grad_weight, grad_bias, grad_out, input,
                                         weight, stride, padding, dilation, groups);
    return;
  }
  if (g.n == 0 || g.plane() == 0) {  // empty sums: every gradient is 0
    for (Tensor* grad : {&grad_input, &grad_weight, &grad_bias}) {
      if (grad->defined()) grad->zero_();
    }
    return;
  }
  const Tensor go = grad_out.contiguous();
  if (grad_bias.defined() && grad_bias.numel() > 0) conv2d_bias_grad(ctx, grad_bias, go);
  const Tensor go_t = want_weight ? grad_out.transpose(0, 1).contiguous() : Tensor();
  const Tensor w = weight.contiguous();
  Tensor gw = want_weight && !grad_weight.is_contiguous() ? empty_of(g, grad_weight.sizes(), ctx)
                                                          : grad_weight;
  Tensor gi = grad_input;
  GemmRunner gemm{ctx, /*dry_run=*/false};
  conv2d_backward_gemms(ctx, gemm, g, gi, gw, go, go_t, input, w, want_input, want_weight);
  if (want_weight && !grad_weight.is_contiguous()) grad_weight.copy_(gw);
}

}  // namespace

void register_conv2d_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Conv2d>(type, conv2d_kernel);
  registry.register_kernel<kernels::Conv2dBackward>(type, conv2d_backward_kernel);
}

}  // namespace tessera::vulkan
