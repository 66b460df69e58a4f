// CPU kernels of layer norm and rms norm (forward and backward) over the
// trailing dims of x, viewed as [M, N] rows. Forward: per row a mean pass,
// a squared-deviation pass (two passes, no E[x^2] - E[x]^2 cancellation)
// and an output pass, while the row sits in L1 / L2; rows split across
// oneTBB tasks. Backward: per row one pass for the two row sums and the
// weight and bias gradients' contributions, one for the input gradient.
// f16 / bf16 compute in f32 through row buffers.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/parallel.h"
#include "devices/cpu/kernels/reduction_rows.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

template <typename T>
using norm_compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Values of an optional N-element parameter in C (empty when undefined).
template <typename C>
std::vector<C> param_values(const Tensor& p) {
  std::vector<C> v;
  if (!p.defined()) return v;
  const Tensor c = rows_of(p, row_layout(p, {}));
  v.resize(static_cast<size_t>(c.numel()));
  dispatch_dtype(c.dtype(), [&](auto tag) {
    using P = decltype(tag);
    const P* d = static_cast<const P*>(c.data_ptr());
    for (size_t i = 0; i < v.size(); ++i) v[i] = convert<C>(d[i]);
  });
  return v;
}

// Writes M statistics (in C) into a stats tensor of any floating dtype.
template <typename C>
void store_stats(Tensor& t, const RowLayout& l, const std::vector<C>& v) {
  if (!t.defined()) return;
  RowsOut dst(t, l);
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using S = decltype(tag);
    S* d = dst.data<S>();
    for (size_t i = 0; i < v.size(); ++i) d[i] = convert<S>(v[i]);
  });
  dst.finish();
}

template <typename C>
std::vector<C> load_stats(const Tensor& t, const RowLayout& l) {
  std::vector<C> v;
  if (!t.defined()) return v;
  const Tensor c = rows_of(t, l);
  v.resize(static_cast<size_t>(c.numel()));
  dispatch_dtype(c.dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* d = static_cast<const S*>(c.data_ptr());
    for (size_t i = 0; i < v.size(); ++i) v[i] = convert<C>(d[i]);
  });
  return v;
}

// One row: y = (x - mean) * rstd * w + b (rms: y = x * rstd * w).
template <typename C>
void norm_row(bool rms, const C* __restrict x, C* __restrict y, const C* w, const C* b,
              int64_t n, C eps, C& mean_out, C& rstd_out) {
  C mean = 0, var;
  if (rms) {
    var = vec::lane_sum_sq_dev<C>(x, n, C(0)) / static_cast<C>(n);
  } else {
    mean = vec::lane_sum<C>(x, n) / static_cast<C>(n);
    var = vec::lane_sum_sq_dev<C>(x, n, mean) / static_cast<C>(n);
  }
  const C rstd = C(1) / std::sqrt(var + eps);
  mean_out = mean;
  rstd_out = rstd;
  if (w && b) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i] + b[i];
  } else if (w) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * w[i];
  } else if (b) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd;
  }
}

RowLayout norm_layout(const Tensor& x, int64_t norm_dims) {
  Shape rdims;
  for (int64_t d = x.dim() - norm_dims; d < x.dim(); ++d) rdims.push_back(d);
  return row_layout(x, rdims);
}

void layer_norm_kernel(const KernelContext&, bool rms, Tensor& out, Tensor& mean, Tensor& rstd,
                       const Tensor& x, const Tensor& weight, const Tensor& bias,
                       int64_t norm_dims, double eps) {
  const RowLayout l = norm_layout(x, norm_dims);
  const Tensor rows = rows_of(x, l);
  RowsOut dst(out, l);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      using C = norm_compute_t<T>;
      const std::vector<C> w = param_values<C>(weight), b = param_values<C>(rms ? Tensor() : bias);
      const C* wp = w.empty() ? nullptr : w.data();
      const C* bp = b.empty() ? nullptr : b.data();
      std::vector<C> means(static_cast<size_t>(l.m)), rstds(static_cast<size_t>(l.m));
      const T* xs = static_cast<const T*>(rows.data_ptr());
      T* ys = dst.data<T>();
      const int64_t n = l.n;
      const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
      parallel_for_range(l.m, grain, [&](int64_t rb, int64_t re) {
        std::vector<C> xb, yb;
        if constexpr (!std::is_same_v<T, C>) {
          xb.resize(static_cast<size_t>(n));
          yb.resize(static_cast<size_t>(n));
        }
        for (int64_t r = rb; r < re; ++r) {
          if constexpr (std::is_same_v<T, C>) {
            norm_row<C>(rms, xs + r * n, ys + r * n, wp, bp, n, static_cast<C>(eps), means[r],
                        rstds[r]);
          } else {
            for (int64_t i = 0; i < n; ++i) xb[i] = convert<C>(xs[r * n + i]);
            norm_row<C>(rms, xb.data(), yb.data(), wp, bp, n, static_cast<C>(eps), means[r],
                        rstds[r]);
            for (int64_t i = 0; i < n; ++i) ys[r * n + i] = convert<T>(yb[i]);
          }
        }
      });
      store_stats<C>(mean, l, means);
      store_stats<C>(rstd, l, rstds);
    }
  });
  dst.finish();
}

// The backward's first pass over a row, with xh = (x - mu) rs and
// gw = g w (w all ones when the norm has no weight): returns s1 = sum gw
// and s2 = sum gw xh, and adds g xh and g to the weight and bias block
// sums sw and sb. One read of x, g and w; float rows run in vector lanes.
template <typename C>
void backward_row_sums(const C* __restrict x, const C* __restrict g, const C* __restrict w, C mu,
                       C rs, int64_t n, C* __restrict sw, C* __restrict sb, C& s1, C& s2) {
  int64_t i = 0;
  C t1 = 0, t2 = 0;
  if constexpr (std::is_same_v<C, float>) {
    vec::f32v p1 = {}, p2 = {};
    for (; i + vec::kVec <= n; i += vec::kVec) {
      const vec::f32v gv = vec::loadv(g + i);
      const vec::f32v xh = (vec::loadv(x + i) - mu) * rs;
      const vec::f32v gw = gv * vec::loadv(w + i);
      p1 += gw;
      p2 += gw * xh;
      vec::storev(sw + i, vec::loadv(sw + i) + gv * xh);
      vec::storev(sb + i, vec::loadv(sb + i) + gv);
    }
    t1 = vec::hsumv(p1);
    t2 = vec::hsumv(p2);
  }
  for (; i < n; ++i) {
    const C xh = (x[i] - mu) * rs, gw = g[i] * w[i];
    t1 += gw;
    t2 += gw * xh;
    sw[i] += g[i] * xh;
    sb[i] += g[i];
  }
  s1 = t1;
  s2 = t2;
}

// The input gradient of one row: rs (gw - mean(gw) - xh mean(gw xh)), rms
// without the mean(gw) term (a = 0). A plain map: it vectorizes.
template <typename C>
void backward_row_input(const C* __restrict x, const C* __restrict g, const C* __restrict w, C mu,
                        C rs, C a, C b, int64_t n, C* __restrict gi) {
  for (int64_t i = 0; i < n; ++i) gi[i] = rs * (g[i] * w[i] - a - (x[i] - mu) * rs * b);
}

// Rows whose weight and bias gradients add up in C (float for every dtype
// but f64) before the block sums join the chunk's double sums: float
// carries at most this many terms (relative error about 1e-6 at worst),
// double the rest, so a column sum over many rows stays exact to double's
// rounding of each block, and no element pays a conversion to double.
inline constexpr int64_t kRowsPerBlockSum = 32;

void layer_norm_backward_kernel(const KernelContext&, bool rms, Tensor& grad_input,
                                Tensor& grad_weight, Tensor& grad_bias, const Tensor& grad_out,
                                const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                const Tensor& weight, int64_t norm_dims) {
  const RowLayout l = norm_layout(x, norm_dims);
  const Tensor xr = rows_of(x, l);
  const Tensor gr = rows_of(grad_out, l);
  const int64_t m = l.m, n = l.n;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      using C = norm_compute_t<T>;
      std::vector<C> w = param_values<C>(weight);
      if (w.empty()) w.assign(static_cast<size_t>(n), C(1));
      const std::vector<C> means = rms ? std::vector<C>(static_cast<size_t>(m), C(0))
                                       : load_stats<C>(mean, l);
      const std::vector<C> rstds = load_stats<C>(rstd, l);
      const T* xs = static_cast<const T*>(xr.data_ptr());
      const T* gs = static_cast<const T*>(gr.data_ptr());
      std::optional<RowsOut> gi_dst;
      if (grad_input.defined()) gi_dst.emplace(grad_input, l);
      T* gis = gi_dst ? gi_dst->data<T>() : nullptr;
      // Fixed chunks of rows (independent of the thread count), each with
      // its own weight and bias partial sums, combined in chunk order:
      // deterministic results whatever the thread count.
      const int64_t nchunks = std::clamp<int64_t>(m, 1, 16);
      const int64_t per = (m + nchunks - 1) / nchunks;
      const auto un = static_cast<size_t>(n);
      std::vector<double> pw(static_cast<size_t>(nchunks) * un, 0.0);
      std::vector<double> pb(static_cast<size_t>(nchunks) * un, 0.0);
      const auto chunk = [&](int64_t c) {
        std::vector<C> sw(un, C(0)), sb(un, C(0)), xb, gb, ib;
        if constexpr (!std::is_same_v<T, C>) {  // 16-bit rows through C buffers
          xb.resize(un);
          gb.resize(un);
          ib.resize(un);
        }
        double* cw = &pw[static_cast<size_t>(c) * un];
        double* cb = &pb[static_cast<size_t>(c) * un];
        const int64_t first = c * per, last = std::min(m, (c + 1) * per);
        const C inv_n = C(1) / static_cast<C>(std::max<int64_t>(n, 1));
        for (int64_t r = first; r < last; ++r) {
          const C* xc;
          const C* gc;
          C* gi = nullptr;
          if constexpr (std::is_same_v<T, C>) {
            xc = xs + r * n;
            gc = gs + r * n;
            if (gis) gi = gis + r * n;
          } else {
            for (int64_t i = 0; i < n; ++i) {
              xb[i] = convert<C>(xs[r * n + i]);
              gb[i] = convert<C>(gs[r * n + i]);
            }
            xc = xb.data();
            gc = gb.data();
            if (gis) gi = ib.data();
          }
          C s1, s2;
          backward_row_sums<C>(xc, gc, w.data(), means[r], rstds[r], n, sw.data(), sb.data(), s1,
                               s2);
          if (gi) {
            backward_row_input<C>(xc, gc, w.data(), means[r], rstds[r], rms ? C(0) : s1 * inv_n,
                                  s2 * inv_n, n, gi);
            if constexpr (!std::is_same_v<T, C>) {
              for (int64_t i = 0; i < n; ++i) gis[r * n + i] = convert<T>(ib[i]);
            }
          }
          if ((r - first + 1) % kRowsPerBlockSum == 0 || r + 1 == last) {
            for (size_t i = 0; i < un; ++i) {
              cw[i] += static_cast<double>(sw[i]);
              cb[i] += static_cast<double>(sb[i]);
              sw[i] = C(0);
              sb[i] = C(0);
            }
          }
        }
      };
      parallel_for_each_sized(nchunks, m * n, chunk);
      if (gi_dst) gi_dst->finish();
      for (Tensor* t : {&grad_weight, &grad_bias}) {
        if (!t->defined()) continue;
        const std::vector<double>& part = t == &grad_weight ? pw : pb;
        std::vector<double> total(static_cast<size_t>(n), 0.0);
        for (int64_t c = 0; c < nchunks; ++c) {
          for (int64_t i = 0; i < n; ++i) total[i] += part[c * n + i];
        }
        store_stats<double>(*t, row_layout(*t, {}), total);
      }
    }
  });
}

}  // namespace

void register_normalization_layer_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::LayerNorm>(type, &layer_norm_kernel);
  registry.register_kernel<kernels::LayerNormBackward>(type, &layer_norm_backward_kernel);
}

}  // namespace tessera::cpu
