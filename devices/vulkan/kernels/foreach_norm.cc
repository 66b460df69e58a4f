// The multi-tensor norm kernel (kernels::ForeachNorm): a list's f32, f16
// and bf16 entries in two dispatches of shaders/foreach_norm.comp,
// whatever their number, instead of one reduction (and its partial
// results) per tensor. Each entry is cut into chunks of kChunkGroups work
// groups' worth of elements; the first dispatch folds each chunk into a
// float partial, the second each entry's partials into its norm.
//
// An entry takes this route when its input is contiguous, of one of those
// dtypes and below 2^31 elements; the others (f64, strided views) run on
// this device's ReduceExt kernel one by one. Each invocation loops over at
// most kChunkGroups elements in pass 0 and its share of an entry's chunks
// in pass 1, far below lavapipe's loop bound (rows_common.h).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "devices/vulkan/kernels/table_upload.h"
#include "runtime/core/error.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

using kernels::ReduceExtOp;

// Entry in shaders/foreach_norm.comp.
struct NormEntry {
  uint64_t in = 0, out = 0;
  uint32_t numel = 0;
  uint32_t dtype = 0;  // the runtime DType's value
  uint32_t first_chunk = 0;
  uint32_t chunks = 0;
};
static_assert(sizeof(NormEntry) == 32, "must match Entry in shaders/foreach_norm.comp");

struct NormParams {
  uint64_t entries;
  uint64_t chunks;
  uint64_t partials;
  uint32_t first_group;
  uint32_t chunk_elems;
};

// The shader's kOrder.
enum class NormOrder : uint32_t { kAbsSum = 0, kSquareSum = 1, kAbsMax = 2 };

NormOrder order_of(ReduceExtOp op) {
  switch (op) {
    case ReduceExtOp::kNorm1: return NormOrder::kAbsSum;
    case ReduceExtOp::kNorm2: return NormOrder::kSquareSum;
    case ReduceExtOp::kNormInf: return NormOrder::kAbsMax;
    default: break;
  }
  throw ValueError(detail::concat("foreach_norm: reduce op ", static_cast<int>(op),
                                  " is not a norm (kernels::ForeachNorm takes kNorm1, kNorm2 "
                                  "or kNormInf)"));
}

// Elements per chunk, in work groups: each invocation folds this many
// elements before the group's tree, so a chunk's fixed cost is small.
constexpr uint32_t kChunkGroups = 16;

// Whether the shader takes an entry: its dtype and layout, and few enough
// chunks that pass 1's loop over them stays within lavapipe's loop bound
// (rows::kMaxLoopIterations; never near it with 256-wide work groups).
bool shader_reads(const Tensor& in, const Tensor& out, const KernelContext& ctx,
                  uint32_t chunk_elems) {
  const DType t = in.dtype();
  const uint32_t wg = vulkan_context_of(ctx).pipelines().workgroup_size();
  return (t == DType::kF32 || t == DType::kF16 || t == DType::kBF16) &&
         in.device() == ctx.device && out.device() == ctx.device && out.dtype() == t &&
         in.is_contiguous() && in.numel() <= std::numeric_limits<int32_t>::max() &&
         rows::ceil_div(rows::ceil_div(in.numel(), chunk_elems), wg) < rows::kMaxLoopIterations;
}

// Dispatches `count` work groups of `pass` in slices the grid allows.
void launch_pass(const KernelContext& ctx, NormOrder order, uint32_t pass, NormParams p,
                 size_t count) {
  launch_in_slices(count, [&](uint32_t first, uint32_t groups) {
    p.first_group = first;
    launch_groups(ctx, "foreach_norm", {static_cast<uint32_t>(order), pass}, p, groups);
  });
}

void foreach_norm_kernel(const KernelContext& ctx, ReduceExtOp op,
                         const std::vector<Tensor>& inputs, std::vector<Tensor>& outs) {
  const NormOrder order = order_of(op);
  const uint32_t chunk_elems = kChunkGroups * vulkan_context_of(ctx).pipelines().workgroup_size();
  std::vector<NormEntry> entries;
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    if (!shader_reads(in, outs[i], ctx, chunk_elems)) {
      run_norm_entry(ctx.device, op, outs[i], in);
      continue;
    }
    NormEntry e;
    e.in = reinterpret_cast<uint64_t>(in.data_ptr());
    e.out = reinterpret_cast<uint64_t>(outs[i].data_ptr());
    e.numel = static_cast<uint32_t>(in.numel());
    e.dtype = static_cast<uint32_t>(in.dtype());
    e.first_chunk = static_cast<uint32_t>(chunks.size());
    append_chunks(chunks, static_cast<uint32_t>(entries.size()), e.numel, chunk_elems);
    e.chunks = static_cast<uint32_t>(chunks.size()) - e.first_chunk;
    entries.push_back(e);
  }
  if (entries.empty()) return;
  const DeviceTables tables = upload_tables(ctx, {host_table(entries), host_table(chunks)});
  const Tensor partials = empty({static_cast<int64_t>(chunks.size())},
                                TensorOptions(DType::kF32, ctx.device));
  NormParams p{};
  p.entries = tables.addresses[0];
  p.chunks = tables.addresses[1];
  p.partials = reinterpret_cast<uint64_t>(partials.data_ptr());
  p.chunk_elems = chunk_elems;
  launch_pass(ctx, order, 0, p, chunks.size());
  launch_pass(ctx, order, 1, p, entries.size());
}

}  // namespace

void register_foreach_norm_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachNorm>(type, &foreach_norm_kernel);
}

}  // namespace tessera::vulkan
