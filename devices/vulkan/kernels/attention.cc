// Fused attention (kernels::AttentionForward / AttentionBackward) for
// float32: shaders/attention.comp, flash attention's tiling with a work
// group per block of 16 query rows (forward, and dQ) or 16 key rows (dK
// and dV), walking the other side 16 at a time. Memory stays O(sequence):
// no score matrix is stored, only each row's logsumexp and, in the
// backward, its delta = dO.O.
//
// The kernels decline (the runtime's blocked composite of GEMM and softmax
// shaders runs instead) what the shader cannot take: a device without
// 8/16-bit storage (buffers.glsl needs it) or with work groups under 256
// invocations (a 16 x 16 tile), a tensor of 2^31 elements or more (32-bit
// offsets), and, on lavapipe, blocks whose loops would pass its loop bound
// (rows::kMaxLoopIterations: about 5000 keys at head dim 64 for the
// forward, 3000 queries for the backward). On CPU drivers (lavapipe) they
// decline everything unless TESSERA_VULKAN_FUSED_ATTENTION=1: there each
// barrier of a 256-wide work group is a switch between coroutines, and
// causal attention [1, 8, 1024, 64] forward and backward took 10.8 s
// fused against 0.9 s through the composite. TESSERA_VULKAN_FUSED_ATTENTION=0
// declines on every device.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/rows_common.h"
#include "runtime/core/environment.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

using rows::ceil_div;

// kMode in the shader.
enum class AttentionMode : uint32_t { kForward = 0, kBackwardQuery = 1, kBackwardKey = 2 };

// Params in shaders/attention.comp.
struct AttentionParams {
  uint64_t q = 0, k = 0, v = 0, bias = 0, result = 0, lse = 0, grad_out = 0, delta = 0, aux = 0;
  uint32_t blocks = 0, h = 0, group = 0, l = 0, s = 0, e = 0, ev = 0;
  uint32_t bias_strides[4] = {0, 0, 0, 0};
  float scale = 1.0f;
};
static_assert(sizeof(AttentionParams) == 120, "must match Params in shaders/attention.comp");

// kTile and kChunk in the shader.
constexpr int64_t kTile = 16;
constexpr int64_t kChunk = 32;

struct Geometry {
  int64_t b, h, hk, l, s, e, ev;
};

Geometry geometry_of(const Tensor& query, const Tensor& key, const Tensor& value) {
  return {query.size(0), query.size(1), key.size(1), query.size(2),
          key.size(2),   query.size(3), value.size(3)};
}

// The largest element offset the bias view reaches (its strides are
// never negative), or -1 without a bias.
int64_t bias_reach(const Tensor& bias) {
  if (!bias.defined()) return -1;
  int64_t reach = 0;
  for (int64_t d = 0; d < bias.dim(); ++d) reach += (bias.size(d) - 1) * bias.stride(d);
  return reach;
}

// Whether the shader can index every tensor, and count its rows and
// blocks, with 32-bit offsets (the rows bound the blocks even where a
// head dim is 0).
bool fits_offsets(const Geometry& g, const Tensor& bias) {
  const int64_t bh = g.b * g.h;
  for (int64_t extent : {bh * g.l, bh * g.s, bh * g.l * g.e, bh * g.l * g.ev, bh * g.s * g.e,
                         bh * g.s * g.ev, bias_reach(bias) + 1}) {
    if (!rows::fits_offsets(extent)) return false;
  }
  return true;
}

AttentionParams params_of(const Geometry& g, const Tensor& query, const Tensor& key,
                          const Tensor& value, const Tensor& bias, double scale) {
  AttentionParams p;
  p.q = rows::address(query);
  p.k = rows::address(key);
  p.v = rows::address(value);
  p.bias = rows::address(bias);
  p.h = static_cast<uint32_t>(g.h);
  p.group = static_cast<uint32_t>(g.h / g.hk);
  p.l = static_cast<uint32_t>(g.l);
  p.s = static_cast<uint32_t>(g.s);
  p.e = static_cast<uint32_t>(g.e);
  p.ev = static_cast<uint32_t>(g.ev);
  if (bias.defined()) {
    for (int d = 0; d < 4; ++d) p.bias_strides[d] = static_cast<uint32_t>(bias.stride(d));
  }
  p.scale = static_cast<float>(scale);
  return p;
}

// The side a mode's work groups take in blocks of kTile rows: the
// queries, or the keys for kBackwardKey.
int64_t blocks_of(AttentionMode mode, const Geometry& g) {
  return g.b * g.h * ceil_div(mode == AttentionMode::kBackwardKey ? g.s : g.l, kTile);
}

// One lane's loop iterations for one block (the shader's loops; a
// staged chunk is 2 iterations, its products kChunk and the tile's rows).
int64_t block_cost(AttentionMode mode, const Geometry& g, bool is_causal) {
  // A causal query block reads the keys up to its last row.
  const int64_t keys = is_causal ? std::min(g.s, g.l + kTile) : g.s;
  auto chunked = [](int64_t width) { return ceil_div(width, kChunk) * (kChunk + 6); };
  const int64_t e_share = ceil_div(g.e, kTile), ev_share = ceil_div(g.ev, kTile);
  switch (mode) {
    case AttentionMode::kForward:
      return ceil_div(keys, kTile) * (chunked(g.e) + chunked(g.ev) + 2 * kTile + 1) +
             2 * ev_share;
    case AttentionMode::kBackwardQuery:
      return ev_share + kTile + 2 * e_share +
             ceil_div(keys, kTile) * (2 * chunked(g.e) + chunked(g.ev) + 1);
    case AttentionMode::kBackwardKey:
      return 2 * e_share + ev_share +
             ceil_div(g.l, kTile) * (2 * chunked(g.e) + 2 * chunked(g.ev) + 1);
  }
  return std::numeric_limits<int64_t>::max();
}

uint32_t groups_of(AttentionMode mode, const Geometry& g) {
  return static_cast<uint32_t>(
      std::clamp<int64_t>(blocks_of(mode, g), 1, kMaxWorkGroupsPerDim));
}

// Whether a mode's dispatch stays within the device's loop bound (only
// lavapipe has one).
bool within_loop_bound(const KernelContext& ctx, AttentionMode mode, const Geometry& g,
                       bool is_causal) {
  if (vulkan_context_of(ctx).info().driver != "llvmpipe") return true;
  const int64_t per_group = ceil_div(blocks_of(mode, g), groups_of(mode, g));
  return per_group * (block_cost(mode, g, is_causal) + 1) <= rows::kMaxLoopIterations;
}

void launch_mode(const KernelContext& ctx, AttentionMode mode, AttentionParams p,
                 const Geometry& g, bool is_causal) {
  p.blocks = static_cast<uint32_t>(blocks_of(mode, g));
  launch_groups(ctx, "attention", {static_cast<uint32_t>(mode), is_causal ? 1u : 0u}, p,
                groups_of(mode, g));
}

// Whether the fused kernels run on this device: TESSERA_VULKAN_FUSED_ATTENTION
// = 1 always, 0 never, unset on every device but a CPU driver.
bool fused_wanted(const KernelContext& ctx) {
  const std::optional<bool> forced = env_switch("TESSERA_VULKAN_FUSED_ATTENTION");
  if (forced) return *forced;
  return vulkan_context_of(ctx).info().driver != "llvmpipe";
}

bool shader_takes(const KernelContext& ctx, const Geometry& g, const Tensor& bias) {
  VulkanContext& context = vulkan_context_of(ctx);
  return fused_wanted(ctx) && context.has_sized_shader_types() &&
         context.pipelines().workgroup_size() == 256 && fits_offsets(g, bias) &&
         (!bias.defined() || bias.dim() == 4);
}

// The shader indexes dense [B, H, rows, cols] tensors; the front end
// passes row-strided ones (kernels::AttentionForward), such as a model's
// transposed views, which go through contiguous copies on the device.
Tensor dense(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

// Where the shader writes `out`: out itself, or a dense stand-in that
// finish_dense copies back.
Tensor dense_target(const Tensor& out) {
  return out.is_contiguous() ? out : empty(out.sizes(), TensorOptions(out.dtype(), out.device()));
}

void finish_dense(Tensor& out, const Tensor& written) {
  if (!written.is_same(out)) out.copy_(written);
}

bool attention_forward_kernel(const KernelContext& ctx, Tensor& out, Tensor& lse,
                              const Tensor& query, const Tensor& key, const Tensor& value,
                              const Tensor& bias, bool is_causal, double scale) {
  const Geometry g = geometry_of(query, key, value);
  if (!shader_takes(ctx, g, bias) ||
      !within_loop_bound(ctx, AttentionMode::kForward, g, is_causal)) {
    return false;
  }
  const Tensor q = dense(query), k = dense(key), v = dense(value);
  const Tensor result = dense_target(out);
  AttentionParams p = params_of(g, q, k, v, bias, scale);
  p.result = rows::address(result);
  p.lse = rows::address(lse);
  launch_mode(ctx, AttentionMode::kForward, p, g, is_causal);
  finish_dense(out, result);
  return true;
}

bool attention_backward_kernel(const KernelContext& ctx, Tensor& grad_query, Tensor& grad_key,
                               Tensor& grad_value, const Tensor& grad_out, const Tensor& query,
                               const Tensor& key, const Tensor& value, const Tensor& bias,
                               const Tensor& out, const Tensor& lse, bool is_causal,
                               double scale) {
  const Geometry g = geometry_of(query, key, value);
  if (!shader_takes(ctx, g, bias) ||
      !within_loop_bound(ctx, AttentionMode::kBackwardQuery, g, is_causal) ||
      !within_loop_bound(ctx, AttentionMode::kBackwardKey, g, is_causal)) {
    return false;
  }
  const Tensor delta = empty({g.b, g.h, g.l}, TensorOptions(DType::kF32, query.device()));
  const Tensor q = dense(query), k = dense(key), v = dense(value);
  const Tensor go = dense(grad_out), o = dense(out);
  const Tensor gq = dense_target(grad_query), gk = dense_target(grad_key),
               gv = dense_target(grad_value);
  AttentionParams p = params_of(g, q, k, v, bias, scale);
  p.lse = rows::address(lse);
  p.grad_out = rows::address(go);
  p.delta = rows::address(delta);
  p.result = rows::address(gq);
  p.aux = rows::address(o);
  launch_mode(ctx, AttentionMode::kBackwardQuery, p, g, is_causal);
  p.result = rows::address(gk);
  p.aux = rows::address(gv);
  launch_mode(ctx, AttentionMode::kBackwardKey, p, g, is_causal);
  finish_dense(grad_query, gq);
  finish_dense(grad_key, gk);
  finish_dense(grad_value, gv);
  return true;
}

}  // namespace

void register_attention_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AttentionForward>(type, &attention_forward_kernel);
  registry.register_kernel<kernels::AttentionBackward>(type, &attention_backward_kernel);
}

}  // namespace tessera::vulkan
