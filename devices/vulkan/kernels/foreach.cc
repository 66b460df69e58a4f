// The multi-tensor pointwise kernel (kernels::ForeachPointwise): a list's
// entries run as one dispatch of shaders/foreach_f32.comp (f32) or
// foreach.comp (f16 and bf16, on devices with 16-bit storage), in the
// manner of PyTorch's multi_tensor_apply, instead of one dispatch per
// tensor. Each entry is cut into chunks of kChunkGroups work groups'
// worth of elements; a table of entries and a table of chunks go to the
// device in one upload, and each work group runs one chunk. The shaders
// take their formulas from the single-tensor shaders' .glsl files, so an
// entry gives the same bits either way.
//
// An entry takes this route when out is contiguous and every input has
// out's dtype and is either contiguous with out's sizes or one element
// broadcast (a Scalar operand, expanded). The others, and ops the shaders
// lack, run entry by entry on this device's single-tensor kernels.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/kernels/element_kind.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/pointwise_shader_ops.h"
#include "devices/vulkan/kernels/table_upload.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

using kernels::BinaryOp;
using kernels::PointwiseBinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;

// Entry in shaders/foreach_f32.glsl.
struct ForeachEntry {
  uint64_t out = 0, a = 0, b = 0, c = 0;
  uint32_t numel = 0;
  uint32_t broadcast = 0;  // bit 0: a, 1: b, 2: c is one element
  float s0 = 0, s1 = 0;
};
static_assert(sizeof(ForeachEntry) == 48, "must match Entry in shaders/foreach_f32.glsl");

struct ForeachParams {
  uint64_t entries;
  uint64_t chunks;
  uint32_t first_chunk;
  uint32_t chunk_elems;
};

// Elements per chunk, in work groups: enough work per group that its
// start-up is small, small enough that a 1000-element tensor is one chunk.
constexpr uint32_t kChunkGroups = 8;

// The shaders' kFamily (shaders/foreach.glsl).
enum class ForeachFamily : uint32_t { kBinary = 0, kPointwiseBinary = 1, kUnary = 2, kTernary = 3 };

// The shaders' family and op for `code`; nullopt where they lack it.
struct ShaderOp {
  ForeachFamily family;
  uint32_t op;
};

std::optional<ShaderOp> shader_op(const PointwiseOpCode& code) {
  if (const auto* op = std::get_if<BinaryOp>(&code)) {
    return ShaderOp{ForeachFamily::kBinary, static_cast<uint32_t>(*op)};
  }
  if (const auto* op = std::get_if<PointwiseBinaryOp>(&code)) {
    if (!is_f32_shader_op(*op) && *op != PointwiseBinaryOp::kPow) return std::nullopt;
    return ShaderOp{ForeachFamily::kPointwiseBinary, static_cast<uint32_t>(*op)};
  }
  if (const auto* op = std::get_if<UnaryOp>(&code)) {
    if (!float_shaders_handle(*op) || kernels::is_predicate(*op)) return std::nullopt;
    return ShaderOp{ForeachFamily::kUnary, static_cast<uint32_t>(*op)};
  }
  const TernaryOp op = std::get<TernaryOp>(code);
  if (op == TernaryOp::kWhere) return std::nullopt;
  return ShaderOp{ForeachFamily::kTernary, static_cast<uint32_t>(op)};
}

// The list dtypes the shaders take on this device: f32 everywhere
// (foreach_f32), f16 and bf16 where the typed shaders run (foreach).
bool shader_dtype(DType t, const KernelContext& ctx) {
  if (t == DType::kF32) return true;
  return is_reduced_float(t) &&
         vulkan_context_of(ctx).has_sized_shader_types();
}

// The scalars the shader reads for an op, as the single-tensor kernels
// convert them (only those the op uses: the others may be any number).
void set_scalars(const PointwiseOpCode& code, const PointwiseEntry& e, ForeachEntry& f) {
  if (const auto* op = std::get_if<UnaryOp>(&code)) {
    const bool clamp = *op == UnaryOp::kClamp || *op == UnaryOp::kClampMin ||
                       *op == UnaryOp::kClampMax;
    if (clamp) f.s0 = e.s0.to<float>();
    if (*op == UnaryOp::kClamp) f.s1 = e.s1.to<float>();
  } else if (const auto* op = std::get_if<PointwiseBinaryOp>(&code)) {
    if (*op == PointwiseBinaryOp::kThresholdBackward) f.s0 = e.s0.to<float>();
  } else if (const auto* op = std::get_if<BinaryOp>(&code)) {
    if (*op == BinaryOp::kAdd || *op == BinaryOp::kSub) f.s0 = e.s0.to<float>();
  } else if (std::get<TernaryOp>(code) != TernaryOp::kLerp) {
    f.s0 = e.s0.to<float>();
  }
}

// An input of an entry as the shader reads it: its address, and whether
// it is one element for all (bit set in broadcast). False when the
// shader cannot read it (dtype, device, strides).
bool add_operand(const Tensor& t, const Tensor& out, const Device& device, int bit,
                 uint64_t& addr, uint32_t& broadcast) {
  if (!t.defined()) return true;
  if (t.dtype() != out.dtype() || t.device() != device) return false;
  if (t.sizes() == out.sizes() && t.is_contiguous()) {
    addr = reinterpret_cast<uint64_t>(t.data_ptr());
    return true;
  }
  for (int64_t s : t.strides()) {
    if (s != 0) return false;
  }
  addr = reinterpret_cast<uint64_t>(t.data_ptr());
  broadcast |= 1u << bit;
  return true;
}

std::optional<ForeachEntry> shader_entry(const PointwiseOpCode& code, const PointwiseEntry& e,
                                         const KernelContext& ctx) {
  const Tensor& out = e.out;
  const Device& device = ctx.device;
  if (!shader_dtype(out.dtype(), ctx) || out.device() != device || !out.is_contiguous() ||
      out.numel() > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  ForeachEntry f;
  f.out = reinterpret_cast<uint64_t>(out.data_ptr());
  f.numel = static_cast<uint32_t>(out.numel());
  if (!add_operand(e.a, out, device, 0, f.a, f.broadcast) ||
      !add_operand(e.b, out, device, 1, f.b, f.broadcast) ||
      !add_operand(e.c, out, device, 2, f.c, f.broadcast)) {
    return std::nullopt;
  }
  set_scalars(code, e, f);
  return f;
}

void foreach_pointwise_kernel(const KernelContext& ctx, const PointwiseOpCode& code,
                              std::vector<PointwiseEntry>& entries) {
  const std::optional<ShaderOp> op = shader_op(code);
  std::vector<ForeachEntry> fast;
  std::vector<PointwiseEntry*> slow;
  for (PointwiseEntry& e : entries) {
    std::optional<ForeachEntry> f;
    if (op) f = shader_entry(code, e, ctx);
    if (f && f->numel > 0) fast.push_back(*f);
    else if (!f) slow.push_back(&e);
  }
  if (!fast.empty()) {
    const uint32_t chunk_elems =
        kChunkGroups * vulkan_context_of(ctx).pipelines().workgroup_size();
    std::vector<Chunk> chunks;
    for (size_t i = 0; i < fast.size(); ++i) {
      append_chunks(chunks, static_cast<uint32_t>(i), fast[i].numel, chunk_elems);
    }
    const DeviceTables tables = upload_tables(ctx, {host_table(fast), host_table(chunks)});
    ForeachParams p{};
    p.entries = tables.addresses[0];
    p.chunks = tables.addresses[1];
    p.chunk_elems = chunk_elems;
    // The list has one dtype (the front end checks): every fast entry's.
    const DType dtype = entries[0].out.dtype();
    const auto family = static_cast<uint32_t>(op->family);
    launch_in_slices(chunks.size(), [&](uint32_t first, uint32_t groups) {
      p.first_chunk = first;
      if (dtype == DType::kF32) {
        launch_groups(ctx, "foreach_f32", {family, op->op}, p, groups);
      } else {
        launch_groups(ctx, "foreach", {family, op->op, kind_constant(*element_kind(dtype))}, p,
                      groups);
      }
    });
  }
  for (PointwiseEntry* e : slow) run_pointwise_entry(ctx.device, code, *e);
}

}  // namespace

void register_foreach_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachPointwise>(type, &foreach_pointwise_kernel);
}

}  // namespace tessera::vulkan
