// scan (cumsum, cumprod) natively for f32, f16, bf16 (double-float
// accumulation, near the CPU's double for f32) and i32, i64 (wrapping
// int64), in shaders/scan.comp, and f64 (double) in shaders/scan_f64.comp
// on devices with shaderFloat64: one work group per long contiguous line
// (runs per invocation, a shared-memory scan of the run totals, then each
// run rescanned from its prefix), one invocation per line otherwise, each
// mode only where its loops stay below llvmpipe's 65535-iteration cap. f64
// without shaderFloat64 and the narrow integer dtypes (the front end promotes those to int64, so
// only an explicit dtype reaches here), more than 6 outer dims after
// coalescing, offsets beyond 32 bits, lines too long for either mode's
// loops (over ~7.6M elements) and devices without 8/16/64-bit shader types
// stage through the host.
#include <limits>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kScanMaxRank = 6;  // kMaxRank in shaders/scan.comp

// Contiguous lines at least this long get a work group each when there are
// fewer lines than this (more lines keep the cores busy one line per
// invocation, which lavapipe runs ~4x faster than the shared-memory scan).
constexpr int64_t kGroupPerLineMinLength = 64;
constexpr int64_t kGroupPerLineMaxLines = 64;
// llvmpipe ends a loop nest after 65535 iterations (a hang guard), with a
// margin.
constexpr int64_t kMaxLoopIterations = 60000;

struct ScanParams {
  uint64_t in;
  uint64_t out;
  uint32_t len;
  uint32_t lines;
  int32_t in_step;
  int32_t out_step;
  uint32_t rank;
  uint32_t sizes[kScanMaxRank];
  int32_t in_strides[kScanMaxRank];
  int32_t out_strides[kScanMaxRank];
};

bool native_dtype(const KernelContext& ctx, DType t) {
  if (t == DType::kF64) return vulkan_context_of(ctx).has_f64_shaders();
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kI32 ||
         t == DType::kI64;
}

// Sizes and strides without dim.
Shape without(const Shape& s, int64_t dim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d != dim) out.push_back(s[d]);
  }
  return out;
}

void scan_kernel(const KernelContext& ctx, kernels::ScanOp op, Tensor& out, const Tensor& in,
                 int64_t dim) {
  if (out.numel() == 0) return;
  const bool scalar = in.dim() == 0;
  const Shape outer_sizes = scalar ? Shape{} : without(in.sizes(), dim);
  const Shape in_outer = scalar ? Shape{} : without(in.strides(), dim);
  const Shape out_outer = scalar ? Shape{} : without(out.strides(), dim);
  const StridedLayout outer = coalesce(outer_sizes, {&in_outer, &out_outer});
  // Every element offset below 2^31 (any rank: only the offsets matter).
  const bool addressable = coalesce(in.sizes(), {&in.strides(), &out.strides()})
                               .fits(std::numeric_limits<int>::max());
  const bool native = native_dtype(ctx, in.dtype()) && in.dtype() == out.dtype() &&
                      vulkan_context_of(ctx).has_sized_shader_types() && addressable &&
                      outer.fits(kScanMaxRank);
  if (!native) {
    run_on_host<kernels::Scan>(ctx, op, out, in, dim);
    return;
  }
  ScanParams p{};
  p.in = reinterpret_cast<uint64_t>(in.data_ptr());
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.len = static_cast<uint32_t>(scalar ? 1 : in.size(dim));
  p.lines = static_cast<uint32_t>(outer.numel);
  p.in_step = scalar ? 0 : static_cast<int32_t>(in.stride(dim));
  p.out_step = scalar ? 0 : static_cast<int32_t>(out.stride(dim));
  p.rank = static_cast<uint32_t>(outer.rank());
  for (int d = 0; d < outer.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(outer.sizes[d]);
    p.in_strides[d] = static_cast<int32_t>(outer.strides[0][d]);
    p.out_strides[d] = static_cast<int32_t>(outer.strides[1][d]);
  }
  // Loop iterations per invocation in each mode, which must stay below
  // llvmpipe's cap of 65535 per loop nest (it silently stops the loop).
  const int64_t group = vulkan_context_of(ctx).pipelines().workgroup_size();
  const int64_t lines = p.lines, line_len = p.len;
  const int64_t per_invocation_groups = std::min<int64_t>((lines + group - 1) / group,
                                                          kMaxWorkGroupsPerDim);
  const int64_t serial_iterations =
      (lines + per_invocation_groups * group - 1) / (per_invocation_groups * group) * line_len;
  const int64_t group_iterations =
      (lines + kMaxWorkGroupsPerDim - 1) / kMaxWorkGroupsPerDim *
      (2 * ((line_len + group - 1) / group) + 64);
  const bool serial_fits = serial_iterations <= kMaxLoopIterations;
  const bool group_fits = group_iterations <= kMaxLoopIterations;
  if (!serial_fits && !group_fits) {
    run_on_host<kernels::Scan>(ctx, op, out, in, dim);
    return;
  }
  // Few long contiguous lines: a work group each; otherwise an invocation.
  const bool group_per_line =
      !serial_fits || (group_fits && p.in_step == 1 && p.len >= kGroupPerLineMinLength &&
                       p.lines < kGroupPerLineMaxLines);
  const std::initializer_list<uint32_t> constants = {
      static_cast<uint32_t>(op), static_cast<uint32_t>(in.dtype()), group_per_line ? 0u : 1u};
  const char* shader = in.dtype() == DType::kF64 ? "scan_f64" : "scan";
  if (group_per_line) {
    launch_groups(ctx, shader, constants, p, std::min<uint32_t>(p.lines, kMaxWorkGroupsPerDim));
  } else {
    launch(ctx, shader, constants, p, p.lines);
  }
}

static_assert(static_cast<int>(kernels::ScanOp::kSum) == 0 &&
              static_cast<int>(kernels::ScanOp::kProd) == 1);

}  // namespace

void register_scan_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Scan>(type, scan_kernel);
}

}  // namespace tessera::vulkan
