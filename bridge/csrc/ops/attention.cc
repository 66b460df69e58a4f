// scaled_dot_product_attention on tessera through PyTorch's front door for
// device kernels: _fused_sdp_choice (a dispatch stub for PrivateUse1)
// picks the "overrideable" backend whenever the runtime's blocked
// attention supports the call (runtime/ops/nn_attention_blocked.cc: memory
// that grows with the sequence, not its square; masks, causal, grouped
// query heads, every floating dtype), and PyTorch's math path otherwise
// (dropout, inputs other than [batch, heads, sequence, dim]). aten then
// calls _scaled_dot_product_fused_attention_overrideable, and autograd its
// backward, both registered here. Boolean masks arrive converted to
// additive ones (aten's convert_boolean_attn_mask).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/SDPBackend.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

bool supported_dtype(const at::Tensor& t) {
  const auto s = t.scalar_type();
  return s == at::kFloat || s == at::kDouble || s == at::kHalf || s == at::kBFloat16;
}

// Whether the blocked attention serves the call; otherwise the math path
// runs it (and raises PyTorch's own errors for malformed calls).
bool blocked_attention_serves(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              const std::optional<at::Tensor>& mask, double dropout_p,
                              bool is_causal, bool enable_gqa) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (q.is_nested() || k.is_nested() || v.is_nested()) return false;
  if (!supported_dtype(q) || k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type()) {
    return false;
  }
  if (dropout_p != 0.0) return false;  // the math path draws the dropout mask
  if (mask.has_value() && mask->defined()) {
    if (is_causal) return false;
    if (mask->scalar_type() != at::kBool && mask->scalar_type() != q.scalar_type()) return false;
  }
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(3) != q.size(3) ||
      v.size(1) != k.size(1) || v.size(2) != k.size(2) || k.size(1) == 0) {
    return false;
  }
  if (k.size(1) != q.size(1)) return enable_gqa && q.size(1) % k.size(1) == 0;
  return true;
}

int64_t fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                         const std::optional<at::Tensor>& attn_mask, double dropout_p,
                         bool is_causal, std::optional<double> /*scale*/, bool enable_gqa) {
  auto& ctx = at::globalContext();
  if (ctx.userEnabledOverrideableSDP() &&
      blocked_attention_serves(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)) {
    return static_cast<int64_t>(at::SDPBackend::overrideable);
  }
  return static_cast<int64_t>(ctx.userEnabledMathSDP() ? at::SDPBackend::math
                                                        : at::SDPBackend::error);
}

// The strides of a dense tensor of `sizes` laid out as `like` (its dims
// in the same stride order): the layouts PyTorch's meta kernels promise
// for these ops, which compiled graphs rely on.
std::vector<int64_t> strides_in_layout_of(const at::Tensor& like, at::IntArrayRef sizes) {
  std::vector<int64_t> order(static_cast<size_t>(like.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  std::vector<int64_t> strides(order.size());
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = stride;
    stride *= sizes[static_cast<size_t>(*it)];
  }
  return strides;
}

// `value` in the layout of `like`: itself where the runtime wrote it so
// (it lays out the fused kernels' results as its inputs), else a copy.
at::Tensor in_layout_of(const at::Tensor& like, const at::Tensor& value) {
  if (!value.defined()) return value;
  const std::vector<int64_t> strides = strides_in_layout_of(like, value.sizes());
  if (value.strides() == at::IntArrayRef(strides)) return value;
  return at::empty_strided(value.sizes(), strides, like.options()).copy_(value);
}

using FusedAttention = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, c10::SymInt,
                                  c10::SymInt, at::Tensor, at::Tensor, at::Tensor>;

FusedAttention fused_attention(const at::Tensor& query, const at::Tensor& key,
                               const at::Tensor& value, const std::optional<at::Tensor>& attn_bias,
                               double dropout_p, bool is_causal, bool return_debug_mask,
                               std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable";
  OpScope scope(query, key, value);
  TORCH_CHECK(dropout_p == 0.0, op, ": tessera's blocked attention has no dropout, got dropout_p=",
              dropout_p, " (scaled_dot_product_attention sends such calls to the math path)");
  TORCH_CHECK(!return_debug_mask, op, ": no debug attention mask on tessera");
  auto [out, lse] = call_runtime([&] {
    return tessera::attention_blocked(to_runtime(query, op), to_runtime(key, op),
                                      to_runtime(value, op),
                                      present(attn_bias) ? to_runtime(*attn_bias, op)
                                                         : tessera::Tensor(),
                                      is_causal, scale);
  });
  // As PyTorch's meta kernel: the output in query's layout, the
  // logsumexp in float32, 0-d seed and offset (no dropout: unused).
  const at::Tensor output = in_layout_of(query, to_torch(out));
  const at::Tensor no_seed = at::empty({}, query.options().dtype(at::kLong));
  return {output, to_torch(lse).to(at::kFloat), at::Tensor(), at::Tensor(),
          c10::SymInt(query.size(2)), c10::SymInt(key.size(2)), no_seed, no_seed, at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_attention_backward(
    const at::Tensor& grad_out, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const at::Tensor& attn_bias, std::array<bool, 4> grad_input_mask,
    const at::Tensor& out, const at::Tensor& logsumexp, const at::Tensor& /*cum_seq_q*/,
    const at::Tensor& /*cum_seq_k*/, c10::SymInt /*max_q*/, c10::SymInt /*max_k*/,
    double dropout_p, bool is_causal, const at::Tensor& /*philox_seed*/,
    const at::Tensor& /*philox_offset*/, std::optional<double> scale) {
  constexpr const char* op = "_scaled_dot_product_fused_attention_overrideable_backward";
  OpScope scope(grad_out, query);
  TORCH_CHECK(dropout_p == 0.0, op, ": tessera's blocked attention has no dropout, got dropout_p=",
              dropout_p);
  auto [gq, gk, gv, gb] = call_runtime([&] {
    return tessera::attention_blocked_backward(
        to_runtime(grad_out, op), to_runtime(query, op), to_runtime(key, op),
        to_runtime(value, op), attn_bias.defined() ? to_runtime(attn_bias, op) : tessera::Tensor(),
        to_runtime(out, op), to_runtime(logsumexp, op), is_causal, scale, grad_input_mask);
  });
  // Each gradient in its input's layout, as PyTorch's meta kernel.
  return {in_layout_of(query, to_torch(gq)), in_layout_of(key, to_torch(gk)),
          in_layout_of(value, to_torch(gv)),
          attn_bias.defined() ? in_layout_of(attn_bias, to_torch(gb)) : at::Tensor()};
}

TESSERA_ATEN_KERNELS(m) {
  // The operator form of the stub's question (torch._fused_sdp_choice).
  m.impl("_fused_sdp_choice", TORCH_FN(fused_sdp_choice));
  m.impl("_scaled_dot_product_fused_attention_overrideable", TORCH_FN(fused_attention));
  m.impl("_scaled_dot_product_fused_attention_overrideable_backward",
         TORCH_FN(fused_attention_backward));
}

}  // namespace
}  // namespace torch_tessera

// aten's scaled_dot_product_attention asks this stub (keyed on the device
// type, not an operator) which backend to run.
namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_tessera::fused_sdp_choice)
}  // namespace at::native
