// Attention over blocks of queries, forward and backward: softmax(q k^T *
// scale + bias) v without ever holding the [L, S] score matrix. Each block
// of rows holds [block, S] scores (the block sized to a fixed budget), so
// memory grows with the sequence, not its square; the forward keeps each
// row's logsumexp, from which the backward recomputes the block's
// probabilities (as flash attention does). It recomputes them with the
// softmax kernel rather than as exp(S - lse): the bridge hands PyTorch the
// logsumexp in float32 whatever the dtype (its meta kernel says so), so
// for float64 the saved value is too coarse; the logsumexp only marks the
// rows that attend no key.
//   P = softmax(S), dV += P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
//   dQ = scale dS K, dK += scale dS^T Q.
// With is_causal, query i attends keys j <= i, so a block of rows reads
// only the keys up to its last row. Key and value heads may be fewer than
// the query heads (grouped-query attention): query head h reads head
// h / (H / Hk), and their gradients sum over the group. 16-bit floats
// compute in float32. Composed of bmm, logsumexp, exp and pointwise ops,
// so every device runs it natively; a device with the fused kernels
// (AttentionForward/AttentionBackward: one pass over each score tile, in
// cache) runs those instead for float32 compute, unless the bias's own
// gradient is asked for.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// Scores per block: rows * keys * batch-heads stays near this many.
constexpr int64_t kBlockScores = int64_t{1} << 22;

struct AttentionShape {
  int64_t b, h, hk, l, s, e, ev;
};

AttentionShape check_shapes(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& bias) {
  nn_detail::check_same_device(op, q, k);
  nn_detail::check_same_device(op, q, v);
  TESSERA_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype() && is_floating(q.dtype()),
                TypeError, op, ": expected floating query, key and value of one dtype, got ",
                describe(q), ", ", describe(k), " and ", describe(v));
  TESSERA_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, ValueError, op,
                ": expected 4-D query, key and value [batch, heads, sequence, dim], got ",
                describe(q), ", ", describe(k), " and ", describe(v));
  const AttentionShape a{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3),
                         v.size(3)};
  TESSERA_CHECK(k.size(0) == a.b && v.size(0) == a.b && v.size(1) == a.hk && v.size(2) == a.s &&
                    k.size(3) == a.e && a.hk > 0 && a.h % a.hk == 0,
                ValueError, op, ": shapes do not match: query ", shape_to_string(q.sizes()),
                ", key ", shape_to_string(k.sizes()), ", value ", shape_to_string(v.sizes()),
                " (key and value heads must divide the query heads)");
  if (bias.defined()) {
    nn_detail::check_same_device(op, q, bias);
    TESSERA_CHECK(bias.dtype() == q.dtype(), TypeError, op,
                  ": expected an additive attn_bias of query's dtype, got ", describe(bias),
                  " and ", describe(q));
    TESSERA_CHECK(nn_detail::broadcasts_to(bias.sizes(), {a.b, a.h, a.l, a.s}), ValueError, op,
                  ": attn_bias ", shape_to_string(bias.sizes()),
                  " cannot be broadcast to the scores [", a.b, ", ", a.h, ", ", a.l, ", ", a.s,
                  "]");
  }
  checked_numel(Shape{a.b, a.h, a.l, std::max(a.e, a.ev)}, op);
  return a;
}

using nn_detail::compute_dtype;
using nn_detail::in_dtype;

// [B, Hk, S, D] as [B * H, S, D], each key/value head repeated for its
// query heads.
Tensor per_query_head(const Tensor& t, const AttentionShape& a, DType dtype) {
  const Tensor x = in_dtype(t, dtype);
  const int64_t group = a.h / a.hk;
  if (group == 1) return x.reshape({a.b * a.h, x.size(2), x.size(3)});
  return x.unsqueeze(2)
      .expand({a.b, a.hk, group, x.size(2), x.size(3)})
      .reshape({a.b * a.h, x.size(2), x.size(3)});
}

// [B * H, S, D] gradients summed back over each key/value head's group.
Tensor per_kv_head(const Tensor& g, const AttentionShape& a) {
  const int64_t group = a.h / a.hk;
  const Tensor x = g.view({a.b, a.hk, group, g.size(1), g.size(2)});
  return group == 1 ? x.view({a.b, a.hk, g.size(1), g.size(2)}) : sum(x, {2});
}

// An operand as the fused kernels take it (row-strided, see
// kernels::AttentionForward): itself where it is one, else a contiguous
// copy.
Tensor row_strided(const Tensor& t) {
  const bool rows_contiguous = t.size(3) <= 1 || t.stride(3) == 1;
  const bool rows_apart = t.size(2) <= 1 || t.stride(2) >= t.size(3);
  return rows_contiguous && rows_apart ? t : t.contiguous();
}

// An uninitialized 4-D tensor of `sizes` laid out as `like` (its dims in
// like's stride order, dense), as PyTorch lays out attention's output and
// gradients; contiguous where that order would not keep the last dim
// innermost. A model's [B, L, H, E] projection viewed as [B, H, L, E]
// then gets an output whose transpose back is contiguous, with no copy.
Tensor empty_in_layout_of(const Tensor& like, const Shape& sizes, TensorOptions options) {
  std::array<int64_t, 4> order{0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return like.stride(x) > like.stride(y); });
  if (order[3] != 3) return empty(sizes, options);
  Shape strides(4);
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = stride;
    stride *= sizes[static_cast<size_t>(*it)];
  }
  return empty_strided(sizes, strides, options);
}

int64_t block_rows(const AttentionShape& a) {
  const int64_t per_row = std::max<int64_t>(1, a.b * a.h * a.s);
  return std::clamp<int64_t>(kBlockScores / per_row, 16, std::max<int64_t>(a.l, 1));
}

// The keys block [r0, r0 + n) reads: all, or with is_causal those up to
// its last row.
int64_t key_end(const AttentionShape& a, bool is_causal, int64_t r0, int64_t n) {
  return is_causal ? std::min(a.s, r0 + n) : a.s;
}

// The block's scores [B * H, n, kend] in the compute dtype: q k^T (q
// comes scaled), plus the bias, with -inf where is_causal hides a key.
Tensor block_scores(const Tensor& q_scaled, const Tensor& k, const Tensor& bias,
                    const AttentionShape& a, bool is_causal, int64_t r0, int64_t n,
                    int64_t kend) {
  Tensor scores = bmm(q_scaled.narrow(1, r0, n), k.narrow(1, 0, kend).transpose(1, 2));
  if (bias.defined()) {
    const Tensor b = bias.expand({a.b, a.h, a.l, a.s})
                         .narrow(2, r0, n)
                         .narrow(3, 0, kend)
                         .reshape({a.b * a.h, n, kend});
    scores = add(scores, in_dtype(b, scores.dtype()));
  }
  if (is_causal && r0 + 1 < kend) {
    // Row r0 + i keeps keys j <= r0 + i: only columns [r0 + 1, kend) hide
    // any, above the diagonal of that square.
    const int64_t width = kend - r0 - 1;
    const Tensor hidden = triu(ones({n, width}, TensorOptions(DType::kBool, scores.device())));
    Tensor corner = scores.narrow(2, r0 + 1, width);
    masked_fill_(corner, hidden, Scalar(-std::numeric_limits<double>::infinity()));
  }
  return scores;
}

// The block's probabilities from its scores (the softmax kernel), with
// the rows that attend no key (safe logsumexp +inf) zero rather than NaN.
Tensor block_probs(const Tensor& scores, const Tensor& row_lse, bool may_hide_rows) {
  Tensor probs = softmax(scores, 2);
  if (may_hide_rows) probs = masked_fill(probs, isposinf(row_lse).unsqueeze(2), Scalar(0.0));
  return probs;
}

// A row with no key to attend (every score -inf) has logsumexp -inf; +inf
// in its place makes its probabilities exp(-inf - inf) = 0, so its output
// and gradients are zeros (PyTorch's math path gives zeros too).
Tensor safe_lse(const Tensor& lse) {
  return where(isneginf(lse), Scalar(std::numeric_limits<double>::infinity()), lse);
}

// The bias as the fused kernels take it: in the compute dtype (converted
// before it is broadcast, so no [B, H, L, S] copy), viewed as
// [B, H, L, S].
Tensor fused_bias(const Tensor& bias, const AttentionShape& a, DType dtype) {
  if (!bias.defined()) return {};
  return in_dtype(bias, dtype).expand({a.b, a.h, a.l, a.s});
}

}  // namespace

std::tuple<Tensor, Tensor> attention_blocked(const Tensor& query, const Tensor& key,
                                             const Tensor& value, const Tensor& attn_bias,
                                             bool is_causal, std::optional<double> scale) {
  const char* op = "attention_blocked";
  const AttentionShape a = check_shapes(op, query, key, value, attn_bias);
  TESSERA_CHECK(!(is_causal && attn_bias.defined()), ValueError, op,
                ": explicit attn_bias should not be set when is_causal=True");
  const DType cdt = compute_dtype(query.dtype());
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(a.e)));
  TensorOptions opts(cdt, query.device());
  if (cdt == DType::kF32 && a.b * a.h > 0 && a.l > 0 && a.s > 0) {
    Tensor out = empty_in_layout_of(query, {a.b, a.h, a.l, a.ev}, opts);
    Tensor lse = empty({a.b, a.h, a.l}, opts);
    if (try_call_kernel<kernels::AttentionForward>(
            query.device(), out, lse, row_strided(in_dtype(query, cdt)),
            row_strided(in_dtype(key, cdt)), row_strided(in_dtype(value, cdt)),
            fused_bias(attn_bias, a, cdt), is_causal, s)) {
      return {in_dtype(out, query.dtype()), lse};
    }
  }
  Tensor out = zeros({a.b * a.h, a.l, a.ev}, opts);
  Tensor lse = empty({a.b * a.h, a.l}, opts);
  if (a.l > 0 && a.s == 0) lse.fill_(Scalar(std::numeric_limits<double>::infinity()));
  if (a.b * a.h > 0 && a.l > 0 && a.s > 0) {
    const Tensor q = mul(in_dtype(query, cdt).reshape({a.b * a.h, a.l, a.e}), Scalar(s));
    const Tensor k = per_query_head(key, a, cdt), v = per_query_head(value, a, cdt);
    const int64_t rows = block_rows(a);
    for (int64_t r0 = 0; r0 < a.l; r0 += rows) {
      const int64_t n = std::min(rows, a.l - r0), kend = key_end(a, is_causal, r0, n);
      const Tensor scores = block_scores(q, k, attn_bias, a, is_causal, r0, n, kend);
      const Tensor row_lse = safe_lse(logsumexp(scores, {2}));
      const Tensor probs = block_probs(scores, row_lse, attn_bias.defined());
      Tensor out_rows = out.narrow(1, r0, n);
      out_rows.copy_(bmm(probs, v.narrow(1, 0, kend)));
      Tensor lse_rows = lse.narrow(1, r0, n);
      lse_rows.copy_(row_lse);
    }
  }
  return {in_dtype(out.view({a.b, a.h, a.l, a.ev}), query.dtype()), lse.view({a.b, a.h, a.l})};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> attention_blocked_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& attn_bias, const Tensor& out, const Tensor& logsumexp_rows, bool is_causal,
    std::optional<double> scale, std::array<bool, 4> output_mask) {
  const char* op = "attention_blocked_backward";
  const AttentionShape a = check_shapes(op, query, key, value, attn_bias);
  TESSERA_CHECK(!(is_causal && attn_bias.defined()), ValueError, op,
                ": explicit attn_bias should not be set when is_causal=True");
  const Shape out_sizes = {a.b, a.h, a.l, a.ev};
  TESSERA_CHECK(grad_out.sizes() == out_sizes && out.sizes() == out_sizes, ValueError, op,
                ": expected grad_out and out of size ", shape_to_string(out_sizes), ", got ",
                shape_to_string(grad_out.sizes()), " and ", shape_to_string(out.sizes()));
  TESSERA_CHECK(logsumexp_rows.sizes() == Shape({a.b, a.h, a.l}), ValueError, op,
                ": expected logsumexp of size [", a.b, ", ", a.h, ", ", a.l, "], got ",
                describe(logsumexp_rows));
  for (const Tensor* t : {&grad_out, &out, &logsumexp_rows}) {
    nn_detail::check_same_device(op, query, *t);
  }
  TESSERA_CHECK(grad_out.dtype() == query.dtype() && out.dtype() == query.dtype(), TypeError, op,
                ": expected grad_out and out of query's dtype, got ", describe(grad_out), ", ",
                describe(out), " for query ", describe(query));
  TESSERA_CHECK(is_floating(logsumexp_rows.dtype()), TypeError, op,
                ": expected a floating logsumexp, got ", describe(logsumexp_rows));
  const DType cdt = compute_dtype(query.dtype());
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(a.e)));
  TensorOptions opts(cdt, query.device());
  const int64_t bh = a.b * a.h;
  Tensor dq = zeros({bh, a.l, a.e}, opts);
  Tensor dk = zeros({bh, a.s, a.e}, opts);
  Tensor dv = zeros({bh, a.s, a.ev}, opts);
  const bool bias_grad = output_mask[3] && attn_bias.defined();
  // The bias's gradient in its own (broadcast) shape, padded to 4 dims:
  // each block's dS, summed over the dims the bias broadcasts along, adds
  // into it, so memory stays that of the bias.
  Shape bias4(4, 1);
  Shape bias_reduced_dims;
  Tensor dbias;
  if (bias_grad) {
    const Shape& bs = attn_bias.sizes();
    const size_t lead = 4 - bs.size();
    for (size_t d = 0; d < bs.size(); ++d) bias4[lead + d] = bs[d];
    for (int64_t d = 0; d < 4; ++d) {
      if (bias4[static_cast<size_t>(d)] == 1) bias_reduced_dims.push_back(d);
    }
    dbias = zeros(bias4, opts);
  }
  if (cdt == DType::kF32 && !bias_grad && bh > 0 && a.l > 0 && a.s > 0) {
    // Each gradient in its input's layout (per query head, when heads are
    // grouped, and summed below into a new tensor).
    const bool grouped = a.h != a.hk;
    Tensor gq = empty_in_layout_of(query, {a.b, a.h, a.l, a.e}, opts);
    Tensor gk = grouped ? empty({a.b, a.h, a.s, a.e}, opts)
                        : empty_in_layout_of(key, {a.b, a.h, a.s, a.e}, opts);
    Tensor gv = grouped ? empty({a.b, a.h, a.s, a.ev}, opts)
                        : empty_in_layout_of(value, {a.b, a.h, a.s, a.ev}, opts);
    if (try_call_kernel<kernels::AttentionBackward>(
            query.device(), gq, gk, gv, row_strided(in_dtype(grad_out, cdt)),
            row_strided(in_dtype(query, cdt)), row_strided(in_dtype(key, cdt)),
            row_strided(in_dtype(value, cdt)), fused_bias(attn_bias, a, cdt),
            row_strided(in_dtype(out, cdt)), in_dtype(logsumexp_rows, cdt).contiguous(),
            is_causal, s)) {
      Tensor grad_q, grad_k, grad_v;
      if (output_mask[0]) grad_q = in_dtype(gq, query.dtype());
      if (output_mask[1]) {
        grad_k = in_dtype(grouped ? per_kv_head(gk.view({bh, a.s, a.e}), a) : gk, key.dtype());
      }
      if (output_mask[2]) {
        grad_v = in_dtype(grouped ? per_kv_head(gv.view({bh, a.s, a.ev}), a) : gv, value.dtype());
      }
      return {grad_q, grad_k, grad_v, Tensor()};
    }
  }
  if (bh > 0 && a.l > 0 && a.s > 0) {
    const Tensor q = mul(in_dtype(query, cdt).reshape({bh, a.l, a.e}), Scalar(s));
    const Tensor k = per_query_head(key, a, cdt), v = per_query_head(value, a, cdt);
    const Tensor k_scaled = mul(k, Scalar(s));  // dQ = scale dS K
    const Tensor go = in_dtype(grad_out, cdt).reshape({bh, a.l, a.ev});
    const Tensor lse = in_dtype(logsumexp_rows, cdt).reshape({bh, a.l});
    // rowsum(dO * O): the softmax backward's correction, per row.
    const Tensor delta = sum(mul(go, in_dtype(out, cdt).reshape({bh, a.l, a.ev})), {2});
    const int64_t rows = block_rows(a);
    for (int64_t r0 = 0; r0 < a.l; r0 += rows) {
      const int64_t n = std::min(rows, a.l - r0), kend = key_end(a, is_causal, r0, n);
      const Tensor scores = block_scores(q, k, attn_bias, a, is_causal, r0, n, kend);
      const Tensor probs = block_probs(scores, lse.narrow(1, r0, n), attn_bias.defined());
      const Tensor go_rows = go.narrow(1, r0, n);
      Tensor dv_used = dv.narrow(1, 0, kend);
      add_out(dv_used, dv_used, bmm(probs.transpose(1, 2), go_rows));
      // dS = P (dP - delta), in place in the fresh dP.
      Tensor ds = bmm(go_rows, v.narrow(1, 0, kend).transpose(1, 2));
      ds.add_(delta.narrow(1, r0, n).unsqueeze(2), Scalar(-1));
      ds.mul_(probs);
      Tensor dq_rows = dq.narrow(1, r0, n);
      dq_rows.copy_(bmm(ds, k_scaled.narrow(1, 0, kend)));
      Tensor dk_used = dk.narrow(1, 0, kend);
      // q comes scaled: ds^T (q scale) = scale ds^T q.
      add_out(dk_used, dk_used, bmm(ds.transpose(1, 2), q.narrow(1, r0, n)));
      if (bias_grad) {
        Tensor block = ds.view({a.b, a.h, n, kend});
        if (!bias_reduced_dims.empty()) block = sum(block, bias_reduced_dims, /*keepdim=*/true);
        Tensor target = dbias;
        if (bias4[2] != 1) target = target.narrow(2, r0, n);
        if (bias4[3] != 1) target = target.narrow(3, 0, kend);
        add_out(target, target, block);
      }
    }
  }
  Tensor grad_q, grad_k, grad_v, grad_bias;
  if (output_mask[0]) grad_q = in_dtype(dq.view({a.b, a.h, a.l, a.e}), query.dtype());
  if (output_mask[1]) grad_k = in_dtype(per_kv_head(dk, a), key.dtype());
  if (output_mask[2]) grad_v = in_dtype(per_kv_head(dv, a), value.dtype());
  if (bias_grad) grad_bias = in_dtype(dbias.reshape(attn_bias.sizes()), attn_bias.dtype());
  return {grad_q, grad_k, grad_v, grad_bias};
}

}  // namespace tessera
