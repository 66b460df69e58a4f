// Fused attention on the CPU (flash attention's tiling): the scores exist
// only as one [query block, key block] tile at a time, in cache.
//
// Forward, one task per (batch-head, query block): for each key block,
// the tile S = (scale q) k^T by Eigen's GEMM, the bias and the causal mask
// added, then an online softmax: each row keeps its running max m and sum
// l; a new block with a larger max rescales the row's output accumulator
// by exp(m_old - m_new) before P = exp(S - m_new) times the value block is
// added. The output is divided by l at the end, and lse = m + log(l).
//
// Backward, one task per batch-head (its key and value gradients are its
// own, so nothing is shared between tasks): per query block and key block,
// P = exp(S - lse) recomputed from the forward's lse, then
//   dV += P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
//   dQ += scale dS K, dK += dS^T (scale Q).
// A batch-head count below the thread count leaves threads idle in the
// backward (PyTorch's CPU flash kernel has the same split).
//
// The exponentials run 8 lanes at a time on the softmax kernels' vector
// exp. Each tile GEMM runs on the calling thread through oneDNN's sgemm,
// which picks its kernel (AVX-512 where the CPU has it) at run time: with
// the library built for x86-64-v3, Eigen's tile GEMMs lost AVX-512 and the
// bench's causal attention fell from 1.11x to 0.90x torch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

// See bmm.cc: a false positive inside Eigen's AVX-512 packing.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>

#include <oneapi/dnnl/dnnl.h>

#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Rows of a head's [rows, cols] matrix, row stride ld.
using Tile = Eigen::Map<RowMajor, 0, Eigen::OuterStride<>>;

// c [m, n] (row stride ldc) = op(a) op(b) + beta c, row-major operands,
// op(x) = x or x^T, on this thread alone (the tiles are already spread
// over the pool's threads).
void tile_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int status = sgemm_on_this_thread(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, a, lda, b,
                                          ldb, beta, c, ldc);
  TESSERA_CHECK(status == dnnl_success, DeviceError, "attention: oneDNN sgemm failed (status ",
                status, ") on a ", m, " x ", n, " x ", k, " tile");
}

// Query rows and keys per tile: a 64 x 256 float tile is 64 KiB, and
// the query, key and value blocks of head dim 64 beside it fit in L2.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 256;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Geometry {
  int64_t b, h, hk, l, s, e, ev;
  int64_t group() const { return h / hk; }
};

// A [B, heads, rows, cols] operand: rows of cols contiguous, the other
// strides free (row stride ld >= cols), as kernels::AttentionForward
// promises. Hugging Face models pass query, key and value as transposed
// views of one [B, L, heads, E] projection; reading them in place saves
// a copy of each, and writing the output and gradients in the same
// layout saves the copies back.
template <typename P>
struct HeadsView {
  P* data;
  int64_t sb, sh, ld;
  // Row 0 of head `head` of batch `batch`.
  P* at(int64_t batch, int64_t head) const { return data + batch * sb + head * sh; }
};

template <typename P>
HeadsView<P> heads_view(P* data, const Tensor& t) {
  // A single row's stride may be anything; sgemm wants ld >= cols.
  const int64_t ld = t.size(2) == 1 ? std::max<int64_t>(1, t.size(3)) : t.stride(2);
  return {data, t.stride(0), t.stride(1), ld};
}

// Query head bh (batch-major) and the key/value head it reads.
struct HeadIndex {
  int64_t batch, head, kv_head;
};

HeadIndex head_index(const Geometry& g, int64_t bh) {
  return {bh / g.h, bh % g.h, (bh % g.h) / g.group()};
}

Geometry geometry_of(const Tensor& query, const Tensor& key, const Tensor& value) {
  return {query.size(0), query.size(1), key.size(1), query.size(2),
          key.size(2),   query.size(3), value.size(3)};
}

// The bias as strides over [B, H, L, S] (0 where it broadcasts).
struct BiasView {
  const float* data = nullptr;
  int64_t sb = 0, sh = 0, sl = 0, ss = 0;
  // Row r of batch-head bh, from key 0.
  const float* row(const Geometry& g, int64_t bh, int64_t r) const {
    return data + (bh / g.h) * sb + (bh % g.h) * sh + r * sl;
  }
};

BiasView bias_view(const Tensor& bias) {
  if (!bias.defined()) return {};
  return {bias.data<float>(), bias.stride(0), bias.stride(1), bias.stride(2), bias.stride(3)};
}

// The keys a query block [r0, r0 + n) reads: all, or with is_causal those
// up to its last row.
int64_t key_end(const Geometry& g, bool is_causal, int64_t r0, int64_t n) {
  return is_causal ? std::min(g.s, r0 + n) : g.s;
}

// A score tile [n, kb] for query rows r0.. and keys c0..: (scale q) k^T,
// plus the bias, -inf where is_causal hides a key.
void score_tile(float* scores, const float* q_scaled, const float* k, int64_t ldk,
                const Geometry& g, const BiasView& bias, int64_t bh, bool is_causal, int64_t r0,
                int64_t n, int64_t c0, int64_t kb) {
  tile_gemm(false, true, n, kb, g.e, q_scaled, g.e, k + c0 * ldk, ldk, 0.0f, scores, kb);
  for (int64_t i = 0; i < n; ++i) {
    float* row = scores + i * kb;
    if (bias.data != nullptr) {
      const float* brow = bias.row(g, bh, r0 + i) + c0 * bias.ss;
      if (bias.ss == 1) {
        for (int64_t j = 0; j < kb; ++j) row[j] += brow[j];
      } else {
        for (int64_t j = 0; j < kb; ++j) row[j] += brow[j * bias.ss];
      }
    }
    if (is_causal) {
      // Row r0 + i keeps keys j <= r0 + i.
      for (int64_t j = std::max<int64_t>(0, r0 + i + 1 - c0); j < kb; ++j) row[j] = -kInf;
    }
  }
}

// x[j] = exp(x[j] - shift) in place (arguments <= 0 up to rounding; NaN
// stays NaN; -inf gives 0); returns the sum.
float exp_shifted(float* x, int64_t n, float shift) {
  using namespace vec;
  f32v acc = splatv(0.0f);
  int64_t j = 0;
  for (; j + kVec <= n; j += kVec) {
    const f32v d = loadv(x + j) - shift;
    const f32v p = d != d ? d : exp_nonpositive(d);
    storev(x + j, p);
    acc += p;
  }
  float sum = hsumv(acc);
  for (; j < n; ++j) {
    const float d = x[j] - shift;
    x[j] = d != d ? d : exp_nonpositive(d);
    sum += x[j];
  }
  return sum;
}

// Max of x[0..n), or NaN if any element is NaN.
float row_max(const float* x, int64_t n) {
  using namespace vec;
  f32v m = splatv(-kInf);
  i32v nan_seen = {};
  int64_t j = 0;
  for (; j + kVec <= n; j += kVec) {
    const f32v v = loadv(x + j);
    nan_seen |= v != v;
    m = v > m ? v : m;
  }
  float out = -kInf;
  for (int k = 0; k < kVec; ++k) {
    if (nan_seen[k] != 0) return kNaN;
    out = std::max(out, m[k]);
  }
  for (; j < n; ++j) {
    if (x[j] != x[j]) return kNaN;
    out = std::max(out, x[j]);
  }
  return out;
}

// dst [rows, cols] (dense) = scale * src's rows (row stride ld).
void scaled_rows(float* dst, const float* src, int64_t rows, int64_t cols, int64_t ld,
                 float scale) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[i * ld + j] * scale;
  }
}

// One (batch-head, query block) of the forward.
struct ForwardTask {
  const Geometry& g;
  const BiasView& bias;
  HeadsView<const float> q, k, v;
  HeadsView<float> out;
  float* lse;
  bool is_causal;
  float scale;

  void operator()(int64_t bh, int64_t r0) const {
    const int64_t n = std::min(kQueryBlock, g.l - r0);
    const int64_t kend = key_end(g, is_causal, r0, n);
    const HeadIndex hi = head_index(g, bh);
    const float* kh = k.at(hi.batch, hi.kv_head);
    const float* vh = v.at(hi.batch, hi.kv_head);
    std::vector<float> q_scaled(static_cast<size_t>(n * g.e));
    std::vector<float> scores(static_cast<size_t>(n * std::min(kKeyBlock, kend)));
    std::vector<float> m(static_cast<size_t>(n), -kInf), l(static_cast<size_t>(n), 0.0f);
    std::vector<char> nan_row(static_cast<size_t>(n), 0);
    scaled_rows(q_scaled.data(), q.at(hi.batch, hi.head) + r0 * q.ld, n, g.e, q.ld, scale);
    float* o = out.at(hi.batch, hi.head) + r0 * out.ld;
    Tile acc(o, n, g.ev, Eigen::OuterStride<>(out.ld));
    acc.setZero();
    for (int64_t c0 = 0; c0 < kend; c0 += kKeyBlock) {
      const int64_t kb = std::min(kKeyBlock, kend - c0);
      score_tile(scores.data(), q_scaled.data(), kh, k.ld, g, bias, bh, is_causal, r0, n, c0,
                 kb);
      for (int64_t i = 0; i < n; ++i) {
        float* row = scores.data() + i * kb;
        const float block_max = nan_row[i] ? kNaN : row_max(row, kb);
        if (block_max != block_max) nan_row[i] = 1;
        const float m_new = std::max(m[i], block_max);
        if (nan_row[i] || m_new == -kInf) {
          // Nothing to attend yet (or the row is NaN already): no weight.
          std::fill(row, row + kb, 0.0f);
          continue;
        }
        const float rescale = std::exp(m[i] - m_new);  // 0 on the first block
        const float block_sum = exp_shifted(row, kb, m_new);
        if (rescale != 1.0f) acc.row(i) *= rescale;
        l[i] = l[i] * rescale + block_sum;
        m[i] = m_new;
      }
      tile_gemm(false, false, n, g.ev, kb, scores.data(), kb, vh + c0 * v.ld, v.ld, 1.0f, o,
                out.ld);
    }
    for (int64_t i = 0; i < n; ++i) {
      float& row_lse = lse[bh * g.l + r0 + i];
      if (nan_row[i]) {
        acc.row(i).setConstant(kNaN);
        row_lse = kNaN;
      } else if (l[i] == 0.0f) {
        acc.row(i).setZero();  // every key hidden
        row_lse = kInf;
      } else {
        acc.row(i) *= 1.0f / l[i];
        row_lse = m[i] + std::log(l[i]);
      }
    }
  }
};

bool attention_forward_kernel(const KernelContext&, Tensor& out, Tensor& lse,
                              const Tensor& query, const Tensor& key, const Tensor& value,
                              const Tensor& bias, bool is_causal, double scale) {
  const Geometry g = geometry_of(query, key, value);
  const BiasView bv = bias_view(bias);
  const ForwardTask task{g,
                         bv,
                         heads_view<const float>(query.data<float>(), query),
                         heads_view<const float>(key.data<float>(), key),
                         heads_view<const float>(value.data<float>(), value),
                         heads_view<float>(out.data<float>(), out),
                         lse.data<float>(),
                         is_causal,
                         static_cast<float>(scale)};
  const int64_t blocks = (g.l + kQueryBlock - 1) / kQueryBlock;
  parallel_for_each(g.b * g.h * blocks,
                    [&](int64_t t) { task(t / blocks, (t % blocks) * kQueryBlock); });
  return true;
}

// One batch-head of the backward.
struct BackwardTask {
  const Geometry& g;
  const BiasView& bias;
  HeadsView<const float> q, k, v, out, grad_out;
  const float* lse;
  HeadsView<float> grad_q, grad_k, grad_v;
  bool is_causal;
  float scale;

  void operator()(int64_t bh) const {
    const HeadIndex hi = head_index(g, bh);
    const float* kh = k.at(hi.batch, hi.kv_head);
    const float* vh = v.at(hi.batch, hi.kv_head);
    // The key and value gradients per query head (the front end sums
    // each group).
    float* gk = grad_k.at(hi.batch, hi.head);
    float* gv = grad_v.at(hi.batch, hi.head);
    Tile dk(gk, g.s, g.e, Eigen::OuterStride<>(grad_k.ld));
    Tile dv(gv, g.s, g.ev, Eigen::OuterStride<>(grad_v.ld));
    dk.setZero();
    dv.setZero();
    const int64_t rows = std::min(kQueryBlock, g.l);
    const int64_t cols = std::min(kKeyBlock, g.s);
    std::vector<float> q_scaled(static_cast<size_t>(rows * g.e));
    std::vector<float> probs(static_cast<size_t>(rows * cols));
    std::vector<float> grad_scores(static_cast<size_t>(rows * cols));
    std::vector<float> delta(static_cast<size_t>(rows));
    for (int64_t r0 = 0; r0 < g.l; r0 += kQueryBlock) {
      const int64_t n = std::min(kQueryBlock, g.l - r0);
      const int64_t kend = key_end(g, is_causal, r0, n);
      const float* go = grad_out.at(hi.batch, hi.head) + r0 * grad_out.ld;
      const float* o = out.at(hi.batch, hi.head) + r0 * out.ld;
      const float* row_lse = lse + bh * g.l + r0;
      scaled_rows(q_scaled.data(), q.at(hi.batch, hi.head) + r0 * q.ld, n, g.e, q.ld, scale);
      // rowsum(dO * O): the softmax backward's correction, per row.
      for (int64_t i = 0; i < n; ++i) {
        float d = 0.0f;
        for (int64_t j = 0; j < g.ev; ++j) d += go[i * grad_out.ld + j] * o[i * out.ld + j];
        delta[static_cast<size_t>(i)] = d;
      }
      float* gq = grad_q.at(hi.batch, hi.head) + r0 * grad_q.ld;
      Tile dq(gq, n, g.e, Eigen::OuterStride<>(grad_q.ld));
      dq.setZero();
      for (int64_t c0 = 0; c0 < kend; c0 += kKeyBlock) {
        const int64_t kb = std::min(kKeyBlock, kend - c0);
        score_tile(probs.data(), q_scaled.data(), kh, k.ld, g, bias, bh, is_causal, r0, n, c0,
                   kb);
        for (int64_t i = 0; i < n; ++i) {
          // +inf (a row that attends nothing) gives probabilities 0.
          exp_shifted(probs.data() + i * kb, kb, row_lse[i]);
        }
        // dV[c0..] += P^T dO; dS = dO V^T.
        tile_gemm(true, false, kb, g.ev, n, probs.data(), kb, go, grad_out.ld, 1.0f,
                  gv + c0 * grad_v.ld, grad_v.ld);
        tile_gemm(false, true, n, kb, g.ev, go, grad_out.ld, vh + c0 * v.ld, v.ld, 0.0f,
                  grad_scores.data(), kb);
        for (int64_t i = 0; i < n; ++i) {
          float* ds_row = grad_scores.data() + i * kb;
          const float* p_row = probs.data() + i * kb;
          const float d = delta[static_cast<size_t>(i)];
          for (int64_t j = 0; j < kb; ++j) ds_row[j] = p_row[j] * (ds_row[j] - d);
        }
        // dQ += dS K; dK[c0..] += dS^T (scale Q).
        tile_gemm(false, false, n, g.e, kb, grad_scores.data(), kb, kh + c0 * k.ld, k.ld, 1.0f,
                  gq, grad_q.ld);
        tile_gemm(true, false, kb, g.e, n, grad_scores.data(), kb, q_scaled.data(), g.e, 1.0f,
                  gk + c0 * grad_k.ld, grad_k.ld);
      }
      dq *= scale;
    }
  }
};

bool attention_backward_kernel(const KernelContext&, Tensor& grad_query, Tensor& grad_key,
                               Tensor& grad_value, const Tensor& grad_out, const Tensor& query,
                               const Tensor& key, const Tensor& value, const Tensor& bias,
                               const Tensor& out, const Tensor& lse, bool is_causal,
                               double scale) {
  const Geometry g = geometry_of(query, key, value);
  const BiasView bv = bias_view(bias);
  const BackwardTask task{g,
                          bv,
                          heads_view<const float>(query.data<float>(), query),
                          heads_view<const float>(key.data<float>(), key),
                          heads_view<const float>(value.data<float>(), value),
                          heads_view<const float>(out.data<float>(), out),
                          heads_view<const float>(grad_out.data<float>(), grad_out),
                          lse.data<float>(),
                          heads_view<float>(grad_query.data<float>(), grad_query),
                          heads_view<float>(grad_key.data<float>(), grad_key),
                          heads_view<float>(grad_value.data<float>(), grad_value),
                          is_causal,
                          static_cast<float>(scale)};
  parallel_for_each(g.b * g.h, [&](int64_t bh) { task(bh); });
  return true;
}

}  // namespace

void register_attention_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::AttentionForward>(type, &attention_forward_kernel);
  registry.register_kernel<kernels::AttentionBackward>(type, &attention_backward_kernel);
}

}  // namespace tessera::cpu
