// nll_loss and nll_loss_backward in shaders/nll_loss.glsl (per-position
// loss plus fixed-shape tree sums in two passes: deterministic) and
// shaders/nll_loss_backward.glsl (one invocation per grad_input element):
// f32, f16 and bf16 computed in f32 (the .comp shaders, on devices with
// 8/16/64-bit shader types), f64 in double (the _f64 ones, on devices with
// shaderFloat64). Targets are range-checked on the device first
// (index_bounds.comp skipping ignore_index, a 16-byte read-back) and raise
// the CPU kernel's IndexError. Other devices, and offsets beyond 32 bits,
// stage through the host.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/index_elements.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

using kernels::Reduction;

struct NllLossParams {
  uint64_t input;
  uint64_t target;
  uint64_t weight;
  uint64_t out;
  uint64_t partials;
  uint64_t total_weight;
  int64_t ignore_index;
  uint32_t count;
  uint32_t spatial;
  int32_t input_strides[3];
  int32_t target_strides[2];
  int32_t weight_stride;
  int32_t out_strides[2];
};

struct NllLossBackwardParams {
  uint64_t grad_input;
  uint64_t grad_out;
  uint64_t target;
  uint64_t weight;
  uint64_t total_weight;
  int64_t ignore_index;
  uint32_t numel;
  uint32_t classes;
  uint32_t spatial;
  int32_t grad_input_strides[3];
  int32_t grad_out_strides[2];
  int32_t target_strides[2];
  int32_t weight_stride;
};

// Positions each invocation of the first pass sums before another work
// group is worth it, and the most work groups (partials) it uses.
constexpr int64_t kPositionsPerInvocation = 16;
constexpr int64_t kMaxPartialGroups = 256;

// Whether the shaders can address every tensor (undefined ones pass).
bool all_fit(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined() && !reach_fits_int32(*t)) return false;
  }
  return true;
}

// Range-checks the targets on the device (ignore_index passes); the
// IndexError is the CPU kernel's, naming the first bad target in row-major
// order. False when the bounds shader cannot address target.
bool check_targets(const KernelContext& ctx, const Tensor& target, int64_t classes,
                   int64_t ignore_index) {
  if (target.numel() == 0) return true;
  const auto bounds = read_index_bounds(ctx, target, &ignore_index);
  if (!bounds) return false;
  const bool none_counted = bounds->first > bounds->second;  // every target ignored
  if (!none_counted && (bounds->first < 0 || bounds->second >= classes)) {
    const int64_t bad = first_bad_index(target, classes, &ignore_index);
    TESSERA_CHECK(false, IndexError, "nll_loss: target ", bad, " is out of bounds for ", classes,
                  " classes");
  }
  return true;
}

void nll_loss_kernel(const KernelContext& ctx, Tensor& out, Tensor& total_weight,
                     const Tensor& input, const Tensor& target, const Tensor& weight,
                     Reduction reduction, int64_t ignore_index) {
  VulkanContext& vk = vulkan_context_of(ctx);
  const int64_t classes = input.size(1), spatial = input.size(2);
  const int64_t positions = target.numel();
  const auto shader = float_shader(ctx, "nll_loss", input.dtype());
  if (!shader || !all_fit({&input, &target, &weight, &out}) ||
      !check_targets(ctx, target, classes, ignore_index)) {
    run_on_host<kernels::NllLoss>(ctx, out, total_weight, input, target, weight, reduction,
                                  ignore_index);
    return;
  }
  const int64_t per_group =
      static_cast<int64_t>(vk.pipelines().workgroup_size()) * kPositionsPerInvocation;
  const int64_t groups =
      std::clamp<int64_t>((positions + per_group - 1) / per_group, 1, kMaxPartialGroups);
  Tensor partials = empty({2 * groups}, TensorOptions(shader->compute_dtype, ctx.device));

  NllLossParams p{};
  p.input = reinterpret_cast<uint64_t>(input.data_ptr());
  p.target = reinterpret_cast<uint64_t>(target.data_ptr());
  p.weight = weight.defined() ? reinterpret_cast<uint64_t>(weight.data_ptr()) : 0;
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.partials = reinterpret_cast<uint64_t>(partials.data_ptr());
  p.total_weight = reinterpret_cast<uint64_t>(total_weight.data_ptr());
  p.ignore_index = ignore_index;
  p.count = static_cast<uint32_t>(positions);
  p.spatial = static_cast<uint32_t>(std::max<int64_t>(spatial, 1));
  for (int d = 0; d < 3; ++d) p.input_strides[d] = static_cast<int32_t>(input.stride(d));
  p.target_strides[0] = static_cast<int32_t>(target.stride(0));
  p.target_strides[1] = static_cast<int32_t>(target.stride(1));
  p.weight_stride = weight.defined() ? static_cast<int32_t>(weight.stride(0)) : 0;
  if (reduction == Reduction::kNone) {
    p.out_strides[0] = static_cast<int32_t>(out.stride(0));
    p.out_strides[1] = static_cast<int32_t>(out.stride(1));
  }
  const uint32_t has_weight = weight.defined() ? 1u : 0u;
  const auto r = static_cast<uint32_t>(reduction);
  launch_groups(ctx, shader->name, {static_cast<uint32_t>(shader->kind), has_weight, r, 0u}, p,
                static_cast<uint32_t>(groups));
  p.count = static_cast<uint32_t>(groups);
  launch_groups(ctx, shader->name, {static_cast<uint32_t>(shader->kind), has_weight, r, 1u}, p, 1);
}

void nll_loss_backward_kernel(const KernelContext& ctx, Tensor& grad_input,
                              const Tensor& grad_out, const Tensor& target, const Tensor& weight,
                              Reduction reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  const int64_t classes = grad_input.size(1), spatial = grad_input.size(2);
  const auto shader = float_shader(ctx, "nll_loss_backward", grad_input.dtype());
  if (!shader || !all_fit({&grad_input, &grad_out, &target, &weight}) ||
      !check_targets(ctx, target, classes, ignore_index)) {
    run_on_host<kernels::NllLossBackward>(ctx, grad_input, grad_out, target, weight, reduction,
                                          ignore_index, total_weight);
    return;
  }
  if (grad_input.numel() == 0) return;
  NllLossBackwardParams p{};
  p.grad_input = reinterpret_cast<uint64_t>(grad_input.data_ptr());
  p.grad_out = reinterpret_cast<uint64_t>(grad_out.data_ptr());
  p.target = reinterpret_cast<uint64_t>(target.data_ptr());
  p.weight = weight.defined() ? reinterpret_cast<uint64_t>(weight.data_ptr()) : 0;
  p.total_weight = reinterpret_cast<uint64_t>(total_weight.data_ptr());
  p.ignore_index = ignore_index;
  p.numel = static_cast<uint32_t>(grad_input.numel());
  p.classes = static_cast<uint32_t>(classes);
  p.spatial = static_cast<uint32_t>(spatial);
  for (int d = 0; d < 3; ++d) p.grad_input_strides[d] = static_cast<int32_t>(grad_input.stride(d));
  if (reduction == Reduction::kNone) {
    p.grad_out_strides[0] = static_cast<int32_t>(grad_out.stride(0));
    p.grad_out_strides[1] = static_cast<int32_t>(grad_out.stride(1));
  }
  p.target_strides[0] = static_cast<int32_t>(target.stride(0));
  p.target_strides[1] = static_cast<int32_t>(target.stride(1));
  p.weight_stride = weight.defined() ? static_cast<int32_t>(weight.stride(0)) : 0;
  launch(ctx, shader->name,
         {static_cast<uint32_t>(shader->kind), weight.defined() ? 1u : 0u, static_cast<uint32_t>(reduction)}, p,
         grad_input.numel());
}

}  // namespace

void register_nll_loss_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::NllLoss>(type, nll_loss_kernel);
  registry.register_kernel<kernels::NllLossBackward>(type, nll_loss_backward_kernel);
}

}  // namespace tessera::vulkan
