// The multi-tensor pointwise kernel (kernels::ForeachPointwise): a list's
// f32 entries run as one dispatch of a foreach_*_f32.comp shader, in the
// manner of PyTorch's multi_tensor_apply, instead of one dispatch per
// tensor. Each entry is cut into chunks of kChunkGroups work groups'
// worth of elements; a table of entries and a table of chunks go to the
// device in one upload, and each work group runs one chunk. The shaders
// take their formulas from the single-tensor shaders' .glsl files, so an
// entry gives the same bits either way.
//
// An entry takes this route when out is contiguous f32 and every input is
// f32 and either contiguous with out's sizes or one element broadcast (a
// Scalar operand, expanded). The others, and ops the shaders lack, run
// entry by entry on this device's single-tensor kernels.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/pointwise_shader_ops.h"
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

struct Chunk {
  uint32_t entry;
  uint32_t first;
};

// Elements per chunk, in work groups: enough work per group that its
// start-up is small, small enough that a 1000-element tensor is one chunk.
constexpr uint32_t kChunkGroups = 8;

// The shader and specialization constants for an op; nullopt where the
// foreach shaders lack it.
struct ShaderChoice {
  const char* shader;
  std::vector<uint32_t> constants;
};

std::optional<ShaderChoice> shader_for(const PointwiseOpCode& code) {
  if (const auto* op = std::get_if<BinaryOp>(&code)) {
    return ShaderChoice{"foreach_binary_f32", {0, static_cast<uint32_t>(*op)}};
  }
  if (const auto* op = std::get_if<PointwiseBinaryOp>(&code)) {
    if (!is_f32_shader_op(*op) && *op != PointwiseBinaryOp::kPow) return std::nullopt;
    return ShaderChoice{"foreach_binary_f32", {1, static_cast<uint32_t>(*op)}};
  }
  if (const auto* op = std::get_if<UnaryOp>(&code)) {
    if (!float_shaders_handle(*op) || kernels::is_predicate(*op)) return std::nullopt;
    return ShaderChoice{"foreach_unary_f32", {static_cast<uint32_t>(*op)}};
  }
  const TernaryOp op = std::get<TernaryOp>(code);
  if (op == TernaryOp::kWhere) return std::nullopt;
  return ShaderChoice{"foreach_ternary_f32", {static_cast<uint32_t>(op)}};
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
  if (t.dtype() != DType::kF32 || t.device() != device) return false;
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
                                         const Device& device) {
  const Tensor& out = e.out;
  if (out.dtype() != DType::kF32 || out.device() != device || !out.is_contiguous() ||
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

// The two tables, uploaded as one device buffer: entries, then chunks.
Tensor upload_tables(const KernelContext& ctx, const std::vector<ForeachEntry>& entries,
                     const std::vector<Chunk>& chunks) {
  const size_t entry_bytes = entries.size() * sizeof(ForeachEntry);
  const size_t nbytes = entry_bytes + chunks.size() * sizeof(Chunk);
  Tensor host = empty({static_cast<int64_t>(nbytes)}, TensorOptions(DType::kU8, host_device()));
  auto* bytes = static_cast<uint8_t*>(host.data_ptr());
  std::memcpy(bytes, entries.data(), entry_bytes);
  std::memcpy(bytes + entry_bytes, chunks.data(), chunks.size() * sizeof(Chunk));
  Tensor tables = empty({static_cast<int64_t>(nbytes)}, TensorOptions(DType::kU8, ctx.device));
  tables.copy_(host);
  return tables;
}

void foreach_pointwise_kernel(const KernelContext& ctx, const PointwiseOpCode& code,
                              std::vector<PointwiseEntry>& entries) {
  const std::optional<ShaderChoice> choice = shader_for(code);
  std::vector<ForeachEntry> fast;
  std::vector<PointwiseEntry*> slow;
  for (PointwiseEntry& e : entries) {
    std::optional<ForeachEntry> f;
    if (choice) f = shader_entry(code, e, ctx.device);
    if (f && f->numel > 0) fast.push_back(*f);
    else if (!f) slow.push_back(&e);
  }
  if (!fast.empty()) {
    const uint32_t chunk_elems =
        kChunkGroups * vulkan_context_of(ctx).pipelines().workgroup_size();
    std::vector<Chunk> chunks;
    for (size_t i = 0; i < fast.size(); ++i) {
      for (uint32_t first = 0; first < fast[i].numel; first += chunk_elems) {
        chunks.push_back({static_cast<uint32_t>(i), first});
        if (fast[i].numel - first <= chunk_elems) break;  // no uint32 overflow past the end
      }
    }
    const Tensor tables = upload_tables(ctx, fast, chunks);
    ForeachParams p{};
    p.entries = reinterpret_cast<uint64_t>(tables.data_ptr());
    p.chunks = p.entries + fast.size() * sizeof(ForeachEntry);
    p.chunk_elems = chunk_elems;
    for (size_t first = 0; first < chunks.size(); first += kMaxWorkGroupsPerDim) {
      p.first_chunk = static_cast<uint32_t>(first);
      const auto groups =
          static_cast<uint32_t>(std::min<size_t>(kMaxWorkGroupsPerDim, chunks.size() - first));
      // Specialization constants as a list: launch_groups takes an
      // initializer_list, so the choice's vector goes through this switch.
      if (choice->constants.size() == 1) {
        launch_groups(ctx, choice->shader, {choice->constants[0]}, p, groups);
      } else {
        launch_groups(ctx, choice->shader, {choice->constants[0], choice->constants[1]}, p,
                      groups);
      }
    }
  }
  for (PointwiseEntry* e : slow) run_pointwise_entry(ctx.device, code, *e);
}

}  // namespace

void register_foreach_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachPointwise>(type, &foreach_pointwise_kernel);
}

}  // namespace tessera::vulkan
