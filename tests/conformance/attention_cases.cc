// attention_blocked and attention_blocked_backward: op cases against a
// naive double reference over the full [L, S] score matrix (the softmax and
// its exact gradients), and error cases. The samples cover causal masking
// with L == S, L > S and L < S, grouped-query heads, additive biases of
// full and broadcast shape (a row all -inf among them), an explicit scale,
// Ev != E, empty batches and key sets, non-contiguous inputs, and enough
// rows that the runtime splits the queries into several blocks.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Sample layout. inputs: query [B, H, L, E], key [B, Hk, S, E], value
// [B, Hk, S, Ev]; the backward's samples add grad_out, out and logsumexp;
// an attn_bias, if any, comes last. flag: is_causal. scalars: {scale}, or
// none for the default 1/sqrt(E). dims: the backward's output_mask (empty:
// all four).
constexpr size_t kForwardBias = 3, kBackwardBias = 6;

std::optional<double> scale_of(const Sample& s) {
  if (s.scalars.empty()) return std::nullopt;
  return s.scalars[0].to<double>();
}

// logsumexp is float32 for 16-bit inputs, else the inputs' dtype.
DType lse_dtype(DType t) { return t == DType::kF64 ? DType::kF64 : DType::kF32; }

// The problem in double, read off a sample's host inputs.
struct Problem {
  int64_t b, h, hk, l, s, e, ev;
  bool causal;
  double scale;
  std::vector<double> q, k, v;
  std::vector<double> bias;  // expanded to [B, H, L, S]; empty without one
  Shape bias_sizes;          // the bias as given
};

Problem problem_of(const Sample& s, size_t bias_index) {
  const Tensor &q = s.inputs[0], &k = s.inputs[1], &v = s.inputs[2];
  Problem p{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3), v.size(3),
            s.flag, 0.0, values_of(q), values_of(k), values_of(v), {}, {}};
  p.scale = scale_of(s).value_or(1.0 / std::sqrt(static_cast<double>(p.e)));
  if (s.inputs.size() > bias_index) {
    const Tensor& bias = s.inputs[bias_index];
    p.bias_sizes = bias.sizes();
    p.bias = values_of(bias.expand({p.b, p.h, p.l, p.s}));
  }
  return p;
}

// Row-major results: out [B, H, L, Ev], lse [B, H, L]; with a grad_out also
// dq [B, H, L, E], dk [B, Hk, S, E], dv [B, Hk, S, Ev] and, with a bias, the
// scores' gradient [B, H, L, S].
struct Result {
  std::vector<double> out, lse, dq, dk, dv, dscores;
};

// The keys query i may attend: all, or with is_causal those j <= i.
int64_t attended_keys(const Problem& p, int64_t i) { return p.causal ? std::min(p.s, i + 1) : p.s; }

// Query row (b, h, i)'s probabilities over its attended keys and its
// logsumexp; a row with no key to attend gets zeros and +inf.
double row_probs(const Problem& p, int64_t b, int64_t h, int64_t i, std::vector<double>& probs) {
  const int64_t row = (b * p.h + h) * p.l + i, kv = b * p.hk + h / (p.h / p.hk);
  const int64_t attended = attended_keys(p, i);
  double mx = -kInf;
  for (int64_t j = 0; j < attended; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < p.e; ++c) dot += p.q[row * p.e + c] * p.k[(kv * p.s + j) * p.e + c];
    probs[j] = dot * p.scale + (p.bias.empty() ? 0.0 : p.bias[row * p.s + j]);
    mx = std::max(mx, probs[j]);
  }
  if (mx == -kInf) {
    std::fill(probs.begin(), probs.begin() + attended, 0.0);
    return kInf;
  }
  double den = 0;
  for (int64_t j = 0; j < attended; ++j) den += (probs[j] = std::exp(probs[j] - mx));
  for (int64_t j = 0; j < attended; ++j) probs[j] /= den;
  return mx + std::log(den);
}

// softmax(q k^T scale + bias) v, and with grad_out its exact gradients:
// dP = dO v^T, dS = P (dP - rowsum(P dP)), dq = scale dS k, dk = scale dS^T q,
// dv = P^T dO, key/value gradients summed over each head's query group.
Result attention_reference(const Problem& p, const std::vector<double>* grad_out) {
  Result r;
  r.out.assign(static_cast<size_t>(p.b * p.h * p.l * p.ev), 0.0);
  r.lse.assign(static_cast<size_t>(p.b * p.h * p.l), 0.0);
  if (grad_out) {
    r.dq.assign(static_cast<size_t>(p.b * p.h * p.l * p.e), 0.0);
    r.dk.assign(static_cast<size_t>(p.b * p.hk * p.s * p.e), 0.0);
    r.dv.assign(static_cast<size_t>(p.b * p.hk * p.s * p.ev), 0.0);
    if (!p.bias.empty()) r.dscores.assign(static_cast<size_t>(p.b * p.h * p.l * p.s), 0.0);
  }
  std::vector<double> probs(static_cast<size_t>(p.s)), dprobs(static_cast<size_t>(p.s));
  for (int64_t b = 0; b < p.b; ++b)
    for (int64_t h = 0; h < p.h; ++h)
      for (int64_t i = 0; i < p.l; ++i) {
        const int64_t row = (b * p.h + h) * p.l + i, kv = b * p.hk + h / (p.h / p.hk);
        r.lse[row] = row_probs(p, b, h, i, probs);
        const int64_t attended = attended_keys(p, i);
        for (int64_t j = 0; j < attended; ++j)
          for (int64_t c = 0; c < p.ev; ++c)
            r.out[row * p.ev + c] += probs[j] * p.v[(kv * p.s + j) * p.ev + c];
        if (!grad_out) continue;
        const double* go = grad_out->data() + row * p.ev;
        double delta = 0;
        for (int64_t j = 0; j < attended; ++j) {
          double dp = 0;
          for (int64_t c = 0; c < p.ev; ++c) dp += go[c] * p.v[(kv * p.s + j) * p.ev + c];
          dprobs[j] = dp;
          delta += probs[j] * dp;
        }
        for (int64_t j = 0; j < attended; ++j) {
          const double ds = probs[j] * (dprobs[j] - delta);
          if (!r.dscores.empty()) r.dscores[row * p.s + j] = ds;
          for (int64_t c = 0; c < p.e; ++c) {
            r.dq[row * p.e + c] += p.scale * ds * p.k[(kv * p.s + j) * p.e + c];
            r.dk[(kv * p.s + j) * p.e + c] += p.scale * ds * p.q[row * p.e + c];
          }
          for (int64_t c = 0; c < p.ev; ++c) r.dv[(kv * p.s + j) * p.ev + c] += probs[j] * go[c];
        }
      }
  return r;
}

// The scores' gradient [B, H, L, S] summed over the dims the bias was
// broadcast along, in the bias's shape.
std::vector<double> reduce_to_bias(const Problem& p, const std::vector<double>& dscores) {
  const Shape& bs = p.bias_sizes;
  const size_t lead = 4 - bs.size();
  std::vector<double> g(static_cast<size_t>(numel_of(bs)), 0.0);
  size_t flat = 0;
  for_each_coord({p.b, p.h, p.l, p.s}, [&](const Shape& c) {
    int64_t at = 0;
    for (size_t d = 0; d < bs.size(); ++d) at = at * bs[d] + (bs[d] == 1 ? 0 : c[lead + d]);
    g[static_cast<size_t>(at)] += dscores[flat++];
  });
  return g;
}

Expected expected_of(const Shape& sizes, DType dtype, std::vector<double> values) {
  for (double& x : values) x = round_to_dtype(x, dtype);
  return Expected{sizes, dtype, std::move(values)};
}

// A host tensor of dtype holding row-major values.
Tensor host_tensor(const Shape& sizes, const std::vector<double>& values, DType dtype) {
  Tensor t = empty(sizes, TensorOptions(DType::kF64, host_device()));
  std::copy(values.begin(), values.end(), t.data<double>());
  return t.to(dtype);
}

Sample attention_sample(std::string description, std::vector<Tensor> qkv, Tensor bias = {},
                        bool causal = false, std::optional<double> scale = std::nullopt) {
  if (bias.defined()) qkv.push_back(std::move(bias));
  std::vector<Scalar> scalars;
  if (scale) scalars.push_back(*scale);
  return sample_of(std::move(description), std::move(qkv), {}, std::move(scalars), causal);
}

std::vector<Sample> attention_samples(DType t) {
  uint64_t seed = 801;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
  // A bias [2, 3, 5, 7] whose row (0, 1, 2) is all -inf (nothing to
  // attend), with key 3 hidden from every query of (1, 0) besides.
  Tensor masked_bias = make_input({2, 3, 5, 7}, DType::kF64, seed++, -1, 1);
  masked_bias.select(0, 0).select(0, 1).select(0, 2).fill_(-kInf);
  masked_bias.select(0, 1).select(0, 0).select(1, 3).fill_(-kInf);
  std::vector<Sample> out;
  out.push_back(attention_sample("plain [2, 3, 5, 8] x [2, 3, 7, 8]",
                                 {in({2, 3, 5, 8}), in({2, 3, 7, 8}), in({2, 3, 7, 8})}));
  out.push_back(attention_sample("causal, L == S", {in({1, 2, 6, 4}), in({1, 2, 6, 4}), in({1, 2, 6, 5})},
                                 {}, true));
  out.push_back(attention_sample("causal, L > S", {in({2, 2, 9, 4}), in({2, 2, 5, 4}), in({2, 2, 5, 3})},
                                 {}, true));
  out.push_back(attention_sample("causal, L < S", {in({1, 3, 4, 6}), in({1, 3, 9, 6}), in({1, 3, 9, 6})},
                                 {}, true));
  out.push_back(attention_sample("grouped-query H 6, Hk 2",
                                 {in({2, 6, 5, 4}), in({2, 2, 7, 4}), in({2, 2, 7, 3})}));
  out.push_back(attention_sample("multi-query H 6, Hk 1, causal",
                                 {in({1, 6, 7, 4}), in({1, 1, 7, 4}), in({1, 1, 7, 4})}, {}, true));
  out.push_back(attention_sample("bias of full shape [2, 3, 5, 7]",
                                 {in({2, 3, 5, 8}), in({2, 3, 7, 8}), in({2, 3, 7, 8})},
                                 make_input({2, 3, 5, 7}, t, seed++, -2, 2)));
  out.push_back(attention_sample("bias [L, S] broadcast, grouped-query",
                                 {in({2, 6, 5, 4}), in({2, 3, 7, 4}), in({2, 3, 7, 4})},
                                 make_input({5, 7}, t, seed++, -2, 2)));
  out.push_back(attention_sample("bias [1, H, 1, S] broadcast",
                                 {in({2, 3, 5, 4}), in({2, 3, 7, 4}), in({2, 3, 7, 2})},
                                 make_input({1, 3, 1, 7}, t, seed++, -2, 2)));
  out.push_back(attention_sample("bias [L, S] expanded to [B, H, L, S] (stride 0)",
                                 {in({2, 3, 5, 4}), in({2, 3, 7, 4}), in({2, 3, 7, 4})},
                                 make_input({5, 7}, t, seed++, -2, 2).expand({2, 3, 5, 7})));
  out.push_back(attention_sample("bias with a row all -inf and a key hidden by -inf",
                                 {in({2, 3, 5, 4}), in({2, 3, 7, 4}), in({2, 3, 7, 3})},
                                 masked_bias.to(t)));
  out.push_back(attention_sample("explicit scale 1.5, wider values",
                                 {make_input({2, 2, 5, 6}, t, seed++, -2, 2),
                                  make_input({2, 2, 6, 6}, t, seed++, -2, 2), in({2, 2, 6, 6})},
                                 {}, false, 1.5));
  out.push_back(attention_sample("Ev 3 != E 10, explicit scale 0.1",
                                 {in({1, 2, 4, 10}), in({1, 2, 6, 10}), in({1, 2, 6, 3})}, {}, false, 0.1));
  out.push_back(attention_sample("zero-size batch", {in({0, 2, 4, 4}), in({0, 2, 5, 4}), in({0, 2, 5, 3})}));
  out.push_back(attention_sample("no keys (S 0)", {in({1, 2, 3, 4}), in({1, 2, 0, 4}), in({1, 2, 0, 3})}));
  out.push_back(attention_sample("transposed query and key, strided value",
                                 {in({2, 5, 3, 4}).transpose(1, 2), in({2, 6, 3, 4}).transpose(1, 2),
                                  in({2, 3, 6, 6}).slice(3, 0, std::nullopt, 2)}));
  // The runtime's blocks hold about 2^22 scores: rows = 2^22 / (B * H * S),
  // at least 16. With S 32768 and B * H 8 the 40 queries run as blocks of
  // 16, 16 and 8 rows, the causal ones reading keys [0, 16), [0, 32) and
  // [0, 40) (cheap: the keys past the last query are never read).
  if (t == DType::kF32 || t == DType::kF16) {
    out.push_back(attention_sample(
        "blocks of 16 rows, causal, grouped-query [2, 4, 40, 4] x [2, 2, 32768, 4]",
        {in({2, 4, 40, 4}), in({2, 2, 32768, 4}), in({2, 2, 32768, 4})}, {}, true));
    // Fused kernels tile the scores (the CPU's: 64 query rows by 256
    // keys): these cross several tiles both ways, with the causal diagonal
    // inside a tile and on a tile's edge, and a bias over many tiles
    // with a row that attends nothing.
    out.push_back(attention_sample("tiles: causal, L < S [1, 2, 300, 8] x [1, 2, 600, 8]",
                                   {in({1, 2, 300, 8}), in({1, 2, 600, 8}), in({1, 2, 600, 5})},
                                   {}, true));
    out.push_back(attention_sample("tiles: causal, L > S, grouped-query [1, 4, 530, 8] x [1, 2, 257, 8]",
                                   {in({1, 4, 530, 8}), in({1, 2, 257, 8}), in({1, 2, 257, 8})},
                                   {}, true));
    Tensor tile_bias = make_input({260, 520}, DType::kF64, seed++, -2, 2);
    tile_bias.select(0, 200).fill_(-kInf);
    out.push_back(attention_sample("tiles: bias [L, S] with a row all -inf [2, 2, 260, 8] x [2, 2, 520, 8]",
                                   {in({2, 2, 260, 8}), in({2, 2, 520, 8}), in({2, 2, 520, 4})},
                                   tile_bias.to(t)));
    // As Hugging Face models call it: each of query, key and value a
    // [B, L, heads, E] projection viewed as [B, heads, L, E], which the
    // fused kernels read in place (their rows 4 or 2 heads apart), with
    // out and the gradients in the same layout.
    out.push_back(attention_sample("transposed [B, L, H, E] views, tiles, causal [1, 300, 3, 8]",
                                   {in({1, 300, 3, 8}).transpose(1, 2), in({1, 300, 3, 8}).transpose(1, 2),
                                    in({1, 300, 3, 8}).transpose(1, 2)},
                                   {}, true));
    out.push_back(attention_sample("transposed [B, L, H, E] views, tiles, grouped-query [2, 270, 4, 8] x [2, 270, 2, 8]",
                                   {in({2, 270, 4, 8}).transpose(1, 2), in({2, 270, 2, 8}).transpose(1, 2),
                                    in({2, 270, 2, 6}).transpose(1, 2)}));
  }
  return out;
}

// Blocks that read rows of a bias: B * H * S = 14000 makes blocks of 299
// rows and of 1. Without is_causal every block reads all the keys, so two
// blocks take 4.2M scores; the backward alone runs it (it recomputes the
// forward's blocks of scores, then writes the bias gradient's rows).
Sample two_block_bias_sample(DType t) {
  uint64_t seed = 851;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -1, 1); };
  return attention_sample(
      "blocks of 299 rows and 1, bias [L, S], grouped-query [2, 28, 300, 4] x [2, 7, 250, 4]",
      {in({2, 28, 300, 4}), in({2, 7, 250, 4}), in({2, 7, 250, 4})}, make_input({300, 250}, t, seed++, -2, 2));
}

// The forward's sums run over E (the scores) and the keys (the output,
// weighted by probabilities that sum to 1); the backward's key and value
// gradients sum over every query of the head's group, each weighted by
// about 1/S.
Tolerance attention_tolerance(DType t, const Sample& s, bool backward) {
  Tolerance d = default_tolerance(t);
  const Tensor &q = s.inputs[0], &k = s.inputs[1], &v = s.inputs[2];
  double terms = static_cast<double>(q.size(3) + v.size(3));
  if (backward) {
    const int64_t group = q.size(1) / std::max<int64_t>(k.size(1), 1);
    const double rows_per_key =
        static_cast<double>(group * q.size(2)) / static_cast<double>(std::max<int64_t>(k.size(2), 1));
    terms *= 1 + rows_per_key;
  }
  return {d.rtol, d.atol + d.rtol * terms};
}

std::array<bool, 4> output_mask_of(const Sample& s) {
  if (s.dims.empty()) return {true, true, true, true};
  return {s.dims[0] != 0, s.dims[1] != 0, s.dims[2] != 0, s.dims[3] != 0};
}

std::vector<Expected> forward_reference(const Sample& s) {
  const Problem p = problem_of(s, kForwardBias);
  const Result r = attention_reference(p, nullptr);
  const DType t = s.inputs[0].dtype();
  return {expected_of({p.b, p.h, p.l, p.ev}, t, r.out), expected_of({p.b, p.h, p.l}, lse_dtype(t), r.lse)};
}

// The gradients output_mask asks for, grad_attn_bias only with a bias.
std::vector<Expected> backward_reference(const Sample& s) {
  const Problem p = problem_of(s, kBackwardBias);
  const std::vector<double> grad_out = values_of(s.inputs[3]);
  const Result r = attention_reference(p, &grad_out);
  const DType t = s.inputs[0].dtype();
  const std::array<bool, 4> mask = output_mask_of(s);
  std::vector<Expected> e;
  if (mask[0]) e.push_back(expected_of({p.b, p.h, p.l, p.e}, t, r.dq));
  if (mask[1]) e.push_back(expected_of({p.b, p.hk, p.s, p.e}, t, r.dk));
  if (mask[2]) e.push_back(expected_of({p.b, p.hk, p.s, p.ev}, t, r.dv));
  if (mask[3] && !p.bias.empty()) {
    e.push_back(expected_of(p.bias_sizes, t, reduce_to_bias(p, r.dscores)));
  }
  return e;
}

// The backward's samples: each forward sample with a grad_out, and the
// reference's out (in the inputs' dtype) and logsumexp, as the forward
// hands them over; then output_mask variants.
std::vector<Sample> backward_samples(DType t) {
  uint64_t seed = 901;
  std::vector<Sample> forward = attention_samples(t);
  if (t == DType::kF32) forward.push_back(two_block_bias_sample(t));
  std::vector<Sample> out;
  for (Sample s : forward) {
    const Problem p = problem_of(s, kForwardBias);
    const Result r = attention_reference(p, nullptr);
    const Shape out_sizes = {p.b, p.h, p.l, p.ev};
    Tensor grad_out = make_input(out_sizes, t, seed++, -1, 1);
    if (s.description.rfind("transposed", 0) == 0) {  // non-contiguous grad_out too
      grad_out = make_input({p.b, p.l, p.h, p.ev}, t, seed++, -1, 1).transpose(1, 2);
    }
    std::vector<Tensor> inputs = {s.inputs[0], s.inputs[1], s.inputs[2], grad_out,
                                  host_tensor(out_sizes, r.out, t),
                                  host_tensor({p.b, p.h, p.l}, r.lse, lse_dtype(t))};
    if (s.inputs.size() > kForwardBias) inputs.push_back(s.inputs[kForwardBias]);
    s.inputs = std::move(inputs);
    out.push_back(s);
    const bool has_bias = s.inputs.size() > kBackwardBias;
    const bool mask_variants = s.description.rfind("grouped-query H 6", 0) == 0 ||
                               s.description.rfind("bias [L, S] broadcast", 0) == 0;
    if (mask_variants) {
      const std::string base = s.description;
      for (const Shape& mask :
           {Shape{1, 0, 1, 0}, Shape{0, 1, 0, 1}, Shape{0, 0, 0, 1}, Shape{0, 0, 1, 0}}) {
        if (!has_bias && mask == Shape{0, 0, 0, 1}) continue;
        s.dims = mask;
        s.description = base + ", output_mask " + shape_to_string(mask);
        out.push_back(s);
      }
    }
  }
  return out;
}

}  // namespace

TESSERA_CONFORMANCE_OP("attention_blocked") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = attention_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Tensor bias = in.size() > kForwardBias ? in[kForwardBias] : Tensor();
    auto [out, lse] = attention_blocked(in[0], in[1], in[2], bias, s.flag, scale_of(s));
    return std::vector<Tensor>{out, lse};
  };
  c.reference = forward_reference;
  c.tolerance = [](DType t, const Sample& s) { return attention_tolerance(t, s, false); };
  return c;
}

TESSERA_CONFORMANCE_OP("attention_blocked_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = backward_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Tensor bias = in.size() > kBackwardBias ? in[kBackwardBias] : Tensor();
    const std::array<bool, 4> mask = output_mask_of(s);
    auto [gq, gk, gv, gb] = attention_blocked_backward(in[3], in[0], in[1], in[2], bias, in[4], in[5],
                                                       s.flag, scale_of(s), mask);
    // A gradient the mask leaves out (or grad_bias without a bias) must be
    // undefined; the others are checked against the reference.
    const char* names[] = {"grad_query", "grad_key", "grad_value", "grad_attn_bias"};
    const Tensor grads[] = {gq, gk, gv, gb};
    std::vector<Tensor> outs;
    for (size_t i = 0; i < 4; ++i) {
      const bool wanted = mask[i] && (i < 3 || bias.defined());
      if (grads[i].defined() != wanted) {
        throw std::runtime_error(std::string(names[i]) + (wanted ? " is undefined" : " is defined") +
                                 " with output_mask " + shape_to_string(s.dims));
      }
      if (wanted) outs.push_back(grads[i]);
    }
    return outs;
  };
  c.reference = backward_reference;
  c.tolerance = [](DType t, const Sample& s) { return attention_tolerance(t, s, true); };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("attention_blocked") {
  auto f64 = [](Device d) { return TensorOptions(DType::kF64, d); };
  return std::vector<ErrorCase>{
      {"dtype mismatch",
       [f64](Device d) {
         attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 5, 8}, f64(d)), ones({1, 2, 5, 8}, d));
       },
       ErrorKind::kType, {"attention_blocked", "float32[1, 2, 4, 8]", "float64[1, 2, 5, 8]"}},
      {"integer inputs",
       [](Device d) {
         TensorOptions o(DType::kI64, d);
         attention_blocked(ones({1, 1, 2, 2}, o), ones({1, 1, 2, 2}, o), ones({1, 1, 2, 2}, o));
       },
       ErrorKind::kType, {"attention_blocked", "int64[1, 1, 2, 2]"}},
      {"3-D input",
       [](Device d) { attention_blocked(ones({2, 4, 8}, d), ones({2, 5, 8}, d), ones({2, 5, 8}, d)); },
       ErrorKind::kValue, {"attention_blocked", "4-D", "[2, 4, 8]"}},
      {"key heads do not divide query heads",
       [](Device d) { attention_blocked(ones({1, 6, 4, 8}, d), ones({1, 4, 5, 8}, d), ones({1, 4, 5, 8}, d)); },
       ErrorKind::kValue, {"attention_blocked", "[1, 6, 4, 8]", "[1, 4, 5, 8]", "heads"}},
      {"embedding sizes differ",
       [](Device d) { attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 5, 6}, d), ones({1, 2, 5, 8}, d)); },
       ErrorKind::kValue, {"attention_blocked", "query [1, 2, 4, 8]", "key [1, 2, 5, 6]"}},
      {"value length differs from key length",
       [](Device d) { attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 5, 8}, d), ones({1, 2, 6, 8}, d)); },
       ErrorKind::kValue, {"attention_blocked", "key [1, 2, 5, 8]", "value [1, 2, 6, 8]"}},
      {"bias of the wrong dtype",
       [f64](Device d) {
         attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 5, 8}, d), ones({1, 2, 5, 8}, d),
                           ones({4, 5}, f64(d)));
       },
       ErrorKind::kType, {"attention_blocked", "attn_bias", "float64[4, 5]"}},
      {"bias of the wrong shape",
       [](Device d) {
         attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 5, 8}, d), ones({1, 2, 5, 8}, d),
                           ones({3, 5}, d));
       },
       ErrorKind::kValue, {"attention_blocked", "attn_bias [3, 5]", "[1, 2, 4, 5]"}},
      {"causal with a bias",
       [](Device d) {
         attention_blocked(ones({1, 2, 4, 8}, d), ones({1, 2, 4, 8}, d), ones({1, 2, 4, 8}, d), ones({4, 4}, d),
                           true);
       },
       ErrorKind::kValue, {"attention_blocked", "attn_bias", "is_causal"}},
  };
}

TESSERA_CONFORMANCE_ERRORS("attention_blocked_backward") {
  // query [1, 2, 4, 8], key and value [1, 2, 5, 8] (unless given): out
  // [1, 2, 4, 8], logsumexp [1, 2, 4].
  auto backward = [](Device d, const Shape& grad_out, const Shape& lse, const Shape& key = {1, 2, 5, 8},
                     DType key_dtype = DType::kF32, const Tensor& bias = {}) {
    attention_blocked_backward(ones(grad_out, d), ones({1, 2, 4, 8}, d), ones(key, TensorOptions(key_dtype, d)),
                               ones(key, d), bias, ones({1, 2, 4, 8}, d), zeros(lse, d), false, std::nullopt);
  };
  return std::vector<ErrorCase>{
      {"grad_out of the wrong shape", [backward](Device d) { backward(d, {1, 2, 4, 3}, {1, 2, 4}); },
       ErrorKind::kValue, {"attention_blocked_backward", "grad_out", "[1, 2, 4, 8]", "[1, 2, 4, 3]"}},
      {"logsumexp of the wrong shape", [backward](Device d) { backward(d, {1, 2, 4, 8}, {1, 2, 5}); },
       ErrorKind::kValue, {"attention_blocked_backward", "logsumexp", "[1, 2, 4]", "[1, 2, 5]"}},
      {"key heads do not divide query heads",
       [backward](Device d) { backward(d, {1, 2, 4, 8}, {1, 2, 4}, {1, 3, 5, 8}); }, ErrorKind::kValue,
       {"attention_blocked_backward", "[1, 3, 5, 8]", "heads"}},
      {"dtype mismatch",
       [backward](Device d) { backward(d, {1, 2, 4, 8}, {1, 2, 4}, {1, 2, 5, 8}, DType::kF64); },
       ErrorKind::kType, {"attention_blocked_backward", "float64[1, 2, 5, 8]"}},
      {"bias of the wrong shape",
       [backward](Device d) {
         backward(d, {1, 2, 4, 8}, {1, 2, 4}, {1, 2, 5, 8}, DType::kF32, ones({2, 4, 4}, d));
       },
       ErrorKind::kValue, {"attention_blocked_backward", "attn_bias [2, 4, 4]", "[1, 2, 4, 5]"}},
  };
}

}  // namespace tessera::conformance
