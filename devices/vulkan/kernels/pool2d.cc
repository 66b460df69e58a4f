// max_pool2d_with_indices, avg_pool2d and their backward: the forwards and
// avg's backward run one invocation per output element (shaders/
// pool_max.glsl, pool_avg_forward.glsl, pool_avg_backward.glsl, which
// gathers from the windows covering each input element); max's backward
// runs one invocation per (n, c) plane scattering its grad_out in order
// (it gets indices, not windows). No atomics. Each body has shaders per
// compute type (pool_shader): f32; f64 where the device has shaderFloat64;
// int32 and int64 max pooling and int64 avg pooling (integer sums divided
// with truncation, as the CPU). f16 and bf16 run the f32 shaders on
// widened copies (widened_f32.h), and so do max pooling's 8- and 16-bit
// integers, which f32 holds exactly (a maximum and its index do not depend
// on the type then). Other dtypes, outputs that are not contiguous,
// offsets beyond 32 bits, and (for the int64 indices) devices without
// 64-bit shader types stage through the host. Max's backward skips
// out-of-range indices where the CPU raises.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/widened_f32.h"
#include "runtime/ops/signatures/nn.h"

namespace tessera::vulkan {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// True when t is 4-D and every element offset fits in an int32.
bool addressable(const Tensor& t) {
  if (t.dim() != 4 || t.numel() > kInt32Max) return false;
  int64_t last = 0;
  for (int64_t d = 0; d < 4; ++d) {
    if (t.stride(d) < 0 || t.stride(d) > kInt32Max) return false;
    if (t.size(d) > 0) last += (t.size(d) - 1) * t.stride(d);
  }
  return last <= kInt32Max;
}

bool fits_int32(const Shape& s) {
  for (int64_t v : s) {
    if (v < 0 || v > kInt32Max / 4) return false;  // room for the shaders' sums
  }
  return s.size() == 2;
}

// The dtypes max pooling runs on widened f32 copies: f32 holds every value
// exactly, so maxima, NaN propagation and indices come out as in the dtype.
bool max_pool_widens(DType dtype) {
  return is_reduced_float(dtype) || dtype == DType::kU8 || dtype == DType::kI8 || dtype == DType::kI16;
}

// The shader of a pooling body for tensors of dtype on this device:
// "<body>_f32" for f32, "<body>_f64" for f64 where the device has
// shaderFloat64, "<body>_i32" / "<body>_i64" for the integer dtypes the
// body has shaders for (`integers`), else nullopt. The integer and max
// shaders need 64-bit shader types, which f64 devices have and the max
// kernels check.
std::optional<std::string> pool_shader(const KernelContext& ctx, std::string_view body,
                                       DType dtype, std::initializer_list<DType> integers = {}) {
  const VulkanContext& vk = vulkan_context_of(ctx);
  switch (dtype) {
    case DType::kF32: return std::string(body) + "_f32";
    case DType::kF64:
      if (!vk.has_f64_shaders()) return std::nullopt;
      return std::string(body) + "_f64";
    case DType::kI32:
    case DType::kI64:
      if (!vk.has_sized_shader_types() ||
          std::find(integers.begin(), integers.end(), dtype) == integers.end()) {
        return std::nullopt;
      }
      return std::string(body) + (dtype == DType::kI32 ? "_i32" : "_i64");
    default: return std::nullopt;
  }
}

uint64_t address(const Tensor& t) { return reinterpret_cast<uint64_t>(t.data_ptr()); }

void strides_of(const Tensor& t, int32_t* out) {
  for (int d = 0; d < 4; ++d) out[d] = static_cast<int32_t>(t.stride(d));
}

struct MaxPoolParams {
  uint64_t input, out, indices;
  uint32_t numel, channels, height, width, out_h, out_w;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int32_t input_strides[4];
};

void max_pool2d_kernel(const KernelContext& ctx, Tensor& out, Tensor& indices,
                       const Tensor& input, const Shape& kernel, const Shape& stride,
                       const Shape& padding, const Shape& dilation) {
  if (out.numel() == 0) return;
  if (max_pool_widens(input.dtype()) && out.dtype() == input.dtype()) {
    Tensor y = f32_result(out);
    max_pool2d_kernel(ctx, y, indices, widened(input), kernel, stride, padding, dilation);
    round_into(out, y);
    return;
  }
  const auto shader = pool_shader(ctx, "pool_max", input.dtype(), {DType::kI32, DType::kI64});
  const bool native = shader && out.dtype() == input.dtype() && indices.dtype() == DType::kI64 &&
                      vulkan_context_of(ctx).has_sized_shader_types() && addressable(input) &&
                      addressable(out) && addressable(indices) && out.is_contiguous() &&
                      indices.is_contiguous() && fits_int32(kernel) && fits_int32(stride) &&
                      fits_int32(padding) && fits_int32(dilation) && stride[0] > 0 &&
                      stride[1] > 0 && dilation[0] > 0 && dilation[1] > 0;
  if (!native) {
    run_on_host<kernels::MaxPool2d>(ctx, out, indices, input, kernel, stride, padding, dilation);
    return;
  }
  MaxPoolParams p{};
  p.input = address(input);
  p.out = address(out);
  p.indices = address(indices);
  p.numel = static_cast<uint32_t>(out.numel());
  p.channels = static_cast<uint32_t>(input.size(1));
  p.height = static_cast<uint32_t>(input.size(2));
  p.width = static_cast<uint32_t>(input.size(3));
  p.out_h = static_cast<uint32_t>(out.size(2));
  p.out_w = static_cast<uint32_t>(out.size(3));
  p.kernel_h = static_cast<int32_t>(kernel[0]);
  p.kernel_w = static_cast<int32_t>(kernel[1]);
  p.stride_h = static_cast<int32_t>(stride[0]);
  p.stride_w = static_cast<int32_t>(stride[1]);
  p.pad_h = static_cast<int32_t>(padding[0]);
  p.pad_w = static_cast<int32_t>(padding[1]);
  p.dilation_h = static_cast<int32_t>(dilation[0]);
  p.dilation_w = static_cast<int32_t>(dilation[1]);
  strides_of(input, p.input_strides);
  launch(ctx, *shader, {}, p, out.numel());
}

struct MaxPoolBackwardParams {
  uint64_t grad_input, grad_out, indices;
  uint32_t planes, channels, plane_size, out_h, out_w;
  int32_t grad_out_strides[4];
  int32_t indices_strides[4];
};

void max_pool2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input,
                                const Tensor& grad_out, const Tensor& indices) {
  if (grad_input.numel() == 0) return;
  if (is_reduced_float(grad_out.dtype()) && grad_input.dtype() == grad_out.dtype()) {
    Tensor gi = f32_result(grad_input);
    max_pool2d_backward_kernel(ctx, gi, widened(grad_out), indices);
    round_into(grad_input, gi);
    return;
  }
  const auto shader = pool_shader(ctx, "pool_max_backward", grad_out.dtype());
  const bool native = shader && grad_input.dtype() == grad_out.dtype() &&
                      indices.dtype() == DType::kI64 &&
                      vulkan_context_of(ctx).has_sized_shader_types() &&
                      addressable(grad_input) && addressable(grad_out) &&
                      addressable(indices) && grad_input.is_contiguous();
  if (!native) {
    run_on_host<kernels::MaxPool2dBackward>(ctx, grad_input, grad_out, indices);
    return;
  }
  MaxPoolBackwardParams p{};
  p.grad_input = address(grad_input);
  p.grad_out = address(grad_out);
  p.indices = address(indices);
  p.planes = static_cast<uint32_t>(grad_input.size(0) * grad_input.size(1));
  p.channels = static_cast<uint32_t>(grad_input.size(1));
  p.plane_size = static_cast<uint32_t>(grad_input.size(2) * grad_input.size(3));
  p.out_h = static_cast<uint32_t>(grad_out.size(2));
  p.out_w = static_cast<uint32_t>(grad_out.size(3));
  strides_of(grad_out, p.grad_out_strides);
  strides_of(indices, p.indices_strides);
  launch(ctx, *shader, {}, p, p.planes);
}

// Matches pool_avg.glsl.
struct AvgPoolParams {
  uint64_t dst, src;
  uint32_t numel, channels, height, width, out_h, out_w;
  int32_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
  uint32_t count_include_pad;
  int32_t divisor_override;
  int32_t src_strides[4];
};

// The shared parameters of avg_pool2d's forward and backward; false when
// the shaders cannot take them.
bool avg_pool_params(const Tensor& dst, const Tensor& src, const Tensor& input_sized,
                     const Tensor& out_sized, const Shape& kernel, const Shape& stride,
                     const Shape& padding, bool count_include_pad, int64_t divisor_override,
                     AvgPoolParams* p) {
  if (dst.dtype() != src.dtype() || !addressable(dst) ||
      !addressable(src) || !dst.is_contiguous() || !fits_int32(kernel) || !fits_int32(stride) ||
      !fits_int32(padding) || stride[0] < 1 || stride[1] < 1 || divisor_override < INT32_MIN ||
      divisor_override > kInt32Max) {
    return false;
  }
  *p = AvgPoolParams{};
  p->dst = address(dst);
  p->src = address(src);
  p->numel = static_cast<uint32_t>(dst.numel());
  p->channels = static_cast<uint32_t>(input_sized.size(1));
  p->height = static_cast<uint32_t>(input_sized.size(2));
  p->width = static_cast<uint32_t>(input_sized.size(3));
  p->out_h = static_cast<uint32_t>(out_sized.size(2));
  p->out_w = static_cast<uint32_t>(out_sized.size(3));
  p->kernel_h = static_cast<int32_t>(kernel[0]);
  p->kernel_w = static_cast<int32_t>(kernel[1]);
  p->stride_h = static_cast<int32_t>(stride[0]);
  p->stride_w = static_cast<int32_t>(stride[1]);
  p->pad_h = static_cast<int32_t>(padding[0]);
  p->pad_w = static_cast<int32_t>(padding[1]);
  p->count_include_pad = count_include_pad ? 1 : 0;
  p->divisor_override = static_cast<int32_t>(divisor_override);
  strides_of(src, p->src_strides);
  return true;
}

void avg_pool2d_kernel(const KernelContext& ctx, Tensor& out, const Tensor& input,
                       const Shape& kernel, const Shape& stride, const Shape& padding,
                       bool count_include_pad, int64_t divisor_override) {
  if (out.numel() == 0) return;
  if (is_reduced_float(input.dtype()) && out.dtype() == input.dtype()) {
    Tensor y = f32_result(out);
    avg_pool2d_kernel(ctx, y, widened(input), kernel, stride, padding, count_include_pad,
                      divisor_override);
    round_into(out, y);
    return;
  }
  AvgPoolParams p;
  const auto shader = pool_shader(ctx, "pool_avg", input.dtype(), {DType::kI64});
  if (!shader || !avg_pool_params(out, input, input, out, kernel, stride, padding,
                                  count_include_pad, divisor_override, &p)) {
    run_on_host<kernels::AvgPool2d>(ctx, out, input, kernel, stride, padding, count_include_pad,
                                    divisor_override);
    return;
  }
  launch(ctx, *shader, {}, p, out.numel());
}

void avg_pool2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input,
                                const Tensor& grad_out, const Shape& kernel, const Shape& stride,
                                const Shape& padding, bool count_include_pad,
                                int64_t divisor_override) {
  if (grad_input.numel() == 0) return;
  if (is_reduced_float(grad_out.dtype()) && grad_input.dtype() == grad_out.dtype()) {
    Tensor gi = f32_result(grad_input);
    avg_pool2d_backward_kernel(ctx, gi, widened(grad_out), kernel, stride, padding,
                               count_include_pad, divisor_override);
    round_into(grad_input, gi);
    return;
  }
  AvgPoolParams p;
  const auto shader = pool_shader(ctx, "pool_avg_backward", grad_out.dtype());
  if (!shader || !avg_pool_params(grad_input, grad_out, grad_input, grad_out, kernel, stride,
                                  padding, count_include_pad, divisor_override, &p)) {
    run_on_host<kernels::AvgPool2dBackward>(ctx, grad_input, grad_out, kernel, stride, padding,
                                            count_include_pad, divisor_override);
    return;
  }
  launch(ctx, *shader, {}, p, grad_input.numel());
}

}  // namespace

void register_pool2d_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaxPool2d>(type, max_pool2d_kernel);
  registry.register_kernel<kernels::MaxPool2dBackward>(type, max_pool2d_backward_kernel);
  registry.register_kernel<kernels::AvgPool2d>(type, avg_pool2d_kernel);
  registry.register_kernel<kernels::AvgPool2dBackward>(type, avg_pool2d_backward_kernel);
}

}  // namespace tessera::vulkan
