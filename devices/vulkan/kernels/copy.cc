// copy: dst = src converted to dst's dtype, any strides. Same-dtype copies
// move raw 1/2/4/8-byte elements (every dtype); conversions run in
// shaders/copy.comp among f32, f16, bf16, i32, i64, u8, i8, i16 and bool,
// and in shaders/copy_f64.comp between f64 and those where the device has
// shaderFloat64 (they stage through the host elsewhere).
#include <limits>
#include <optional>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "runtime/core/environment.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::vulkan {
namespace {

constexpr int kCopyMaxRank = 8;  // kMaxRank in shaders/copy.comp

// The element kinds of shaders/copy.comp.
enum class CopyKind : uint32_t {
  kF32, kF16, kI32, kI64, kBool, kRaw1, kRaw2, kRaw4, kRaw8, kU8, kI8, kI16, kBF16,
  kF64  // copy_f64.comp only
};

struct CopyParams {
  uint64_t dst;
  uint64_t src;
  uint32_t numel;
  uint32_t rank;
  uint32_t sizes[kCopyMaxRank];
  int32_t dst_strides[kCopyMaxRank];
  int32_t src_strides[kCopyMaxRank];
};

// The shader's kind for a converted dtype; false for dtypes it does not
// convert.
bool conversion_kind(DType dtype, CopyKind* kind) {
  switch (dtype) {
    case DType::kF32: *kind = CopyKind::kF32; return true;
    case DType::kF16: *kind = CopyKind::kF16; return true;
    case DType::kI32: *kind = CopyKind::kI32; return true;
    case DType::kI64: *kind = CopyKind::kI64; return true;
    case DType::kBool: *kind = CopyKind::kBool; return true;
    case DType::kU8: *kind = CopyKind::kU8; return true;
    case DType::kI8: *kind = CopyKind::kI8; return true;
    case DType::kI16: *kind = CopyKind::kI16; return true;
    case DType::kBF16: *kind = CopyKind::kBF16; return true;
    case DType::kF64: *kind = CopyKind::kF64; return true;
    default: return false;
  }
}

// Dense same-dtype copies: vkCmdCopyBuffer on software devices (a memcpy
// there), and on GPUs shaders/copy_quads.comp, 16 bytes per invocation:
// NVIDIA's driver ran vkCmdCopyBuffer at 0.29x of torch's copy_ on an H100
// (829 GB/s, where the add shader moved 2578). TESSERA_VULKAN_SHADER_COPIES
// set to 1 or 0 forces one way (the tests take the shader on lavapipe so).
bool shader_copies(const KernelContext& ctx) {
  static const std::optional<bool> forced = env_switch("TESSERA_VULKAN_SHADER_COPIES");
  return forced.value_or(!vulkan_context_of(ctx).properties().software);
}

struct CopyQuadsParams {
  uint64_t dst;
  uint64_t src;
  uint32_t count;
};

void copy_dense(const KernelContext& ctx, void* dst, const void* src, size_t nbytes) {
  const uint64_t d = reinterpret_cast<uint64_t>(dst), s = reinterpret_cast<uint64_t>(src);
  const uint64_t quads = nbytes / 16;
  if (!shader_copies(ctx) || (d % 16) != 0 || (s % 16) != 0 || nbytes % 16 != 0 ||
      quads > std::numeric_limits<uint32_t>::max()) {
    copy_buffer(ctx, dst, src, nbytes);
    return;
  }
  launch(ctx, "copy_quads", {}, CopyQuadsParams{d, s, static_cast<uint32_t>(quads)},
         static_cast<int64_t>(quads));
}

CopyKind raw_kind(size_t itemsize) {
  switch (itemsize) {
    case 1: return CopyKind::kRaw1;
    case 2: return CopyKind::kRaw2;
    case 4: return CopyKind::kRaw4;
    default: return CopyKind::kRaw8;
  }
}

void copy_kernel(const KernelContext& ctx, Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  CopyKind dst_kind, src_kind;
  bool in_shader;
  if (dst.dtype() == src.dtype()) {
    dst_kind = src_kind = raw_kind(dst.itemsize());
    in_shader = true;
  } else {
    in_shader = conversion_kind(dst.dtype(), &dst_kind) && conversion_kind(src.dtype(), &src_kind);
  }
  StridedLayout layout = coalesce(dst.sizes(), {&dst.strides(), &src.strides()});
  const bool dense = layout.rank() == 0 || (layout.rank() == 1 && layout.strides[0][0] == 1 &&
                                            layout.strides[1][0] == 1);
  if (dense && dst.dtype() == src.dtype()) {
    copy_dense(ctx, dst.data_ptr(), src.data_ptr(), dst.nbytes());
    return;
  }
  const bool converts_f64 = in_shader && (dst_kind == CopyKind::kF64 || src_kind == CopyKind::kF64);
  const VulkanContext& device = vulkan_context_of(ctx);
  if (!in_shader || !device.has_sized_shader_types() || (converts_f64 && !device.has_f64_shaders()) ||
      !layout.fits(kCopyMaxRank)) {
    run_on_host<kernels::Copy>(ctx, dst, src);
    return;
  }
  CopyParams p{};
  p.dst = reinterpret_cast<uint64_t>(dst.data_ptr());
  p.src = reinterpret_cast<uint64_t>(src.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.dst_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.src_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
  }
  launch(ctx, converts_f64 ? "copy_f64" : "copy",
         {static_cast<uint32_t>(dst_kind), static_cast<uint32_t>(src_kind)}, p, layout.numel);
}

}  // namespace

void register_copy_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Copy>(type, copy_kernel);
}

}  // namespace tessera::vulkan
