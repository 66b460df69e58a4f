// CPU kernels of softmax, log_softmax and their backward, on the [M, N]
// row view with the softmax dim last (reduction_rows.h): over the last dim
// of a contiguous tensor the rows are read and written in place. A row is
// processed in three passes (max, exp and sum, scale) while it sits in L1 /
// L2, rows split across oneTBB tasks. f32 uses the vectorized exp of
// normalization_vec.h; f16 / bf16 compute in f32 through a row buffer; f64
// uses std::exp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/parallel.h"
#include "devices/cpu/kernels/reduction_rows.h"
#include "devices/cpu/kernels/vec_math.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

// Any precision, any values (NaN, inf): the reference-exact slow path.
template <typename C>
void softmax_row_generic(bool log, const C* x, C* y, int64_t n) {
  C m = x[0];
  for (int64_t i = 1; i < n; ++i) {
    if (std::isnan(x[i]) || x[i] > m) m = x[i];
    if (std::isnan(m)) break;
  }
  C s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  if (log) {
    const C lse = m + std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - lse;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m) / s;
  }
}

void softmax_row_f32(bool log, const float* __restrict x, float* __restrict y, int64_t n) {
  bool has_nan = false;
  const float m = vec::max_and_nan(x, n, has_nan);
  if (has_nan || std::isinf(m)) {
    softmax_row_generic<float>(log, x, y, n);
    return;
  }
  vec::f32v part = {};
  int64_t i = 0;
  if (log) {
    for (; i + vec::kVec <= n; i += vec::kVec) part += vec::exp_nonpositive(vec::loadv(x + i) - m);
  } else {
    for (; i + vec::kVec <= n; i += vec::kVec) {
      const vec::f32v e = vec::exp_nonpositive(vec::loadv(x + i) - m);
      vec::storev(y + i, e);
      part += e;
    }
  }
  float s = 0;
  for (; i < n; ++i) {
    const float e = vec::exp_nonpositive(x[i] - m);
    if (!log) y[i] = e;
    s += e;
  }
  s += vec::hsumv(part);
  if (log) {
    const float lse = m + std::log(s);
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - lse;
  } else {
    const float inv = 1.0f / s;
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  }
}

// Rows shorter than two vectors (a classifier's few logits per row, a
// small head's attention rows) a block of rows at a time: the block's
// shifted values x - max(row) lie side by side in one buffer, so the
// exponentials run a full vector at a time instead of one lane per call.
// Rows with a NaN or an infinite max take the generic path.
constexpr int64_t kShortRow = 2 * vec::kVec;
constexpr int64_t kShortBlock = 256;  // elements per block

void softmax_short_rows_f32(bool log, const float* x, float* y, int64_t rows, int64_t n) {
  float shifted[kShortBlock], e[kShortBlock];
  float row_max[kShortBlock];
  bool special[kShortBlock];
  const int64_t block_rows = kShortBlock / n;
  for (int64_t r0 = 0; r0 < rows; r0 += block_rows) {
    const int64_t nr = std::min(block_rows, rows - r0);
    const float* xb = x + r0 * n;
    float* yb = y + r0 * n;
    for (int64_t r = 0; r < nr; ++r) {
      bool has_nan = false;
      float m = xb[r * n];
      for (int64_t i = 0; i < n; ++i) {
        const float v = xb[r * n + i];
        has_nan |= v != v;
        m = v > m ? v : m;
      }
      special[r] = has_nan || std::isinf(m);
      row_max[r] = m;
      for (int64_t i = 0; i < n; ++i) shifted[r * n + i] = special[r] ? 0.0f : xb[r * n + i] - m;
    }
    const int64_t count = nr * n;
    int64_t i = 0;
    for (; i + vec::kVec <= count; i += vec::kVec) {
      vec::storev(e + i, vec::exp_nonpositive(vec::loadv(shifted + i)));
    }
    if (i < count) {
      float tail[vec::kVec] = {};
      for (int64_t j = i; j < count; ++j) tail[j - i] = shifted[j];
      const vec::f32v t = vec::exp_nonpositive(vec::loadv(tail));
      for (int64_t j = i; j < count; ++j) e[j] = t[j - i];
    }
    for (int64_t r = 0; r < nr; ++r) {
      const float* xr = xb + r * n;
      float* yr = yb + r * n;
      if (special[r]) {
        softmax_row_generic<float>(log, xr, yr, n);
        continue;
      }
      float sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += e[r * n + k];
      if (log) {
        const float lse = row_max[r] + std::log(sum);
        for (int64_t k = 0; k < n; ++k) yr[k] = xr[k] - lse;
      } else {
        const float inv = 1.0f / sum;
        for (int64_t k = 0; k < n; ++k) yr[k] = e[r * n + k] * inv;
      }
    }
  }
}

template <typename T>
using softmax_compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

void softmax_kernel(const KernelContext&, bool log, Tensor& out, const Tensor& in, int64_t dim) {
  const RowLayout l = row_layout(in, {dim});
  const Tensor rows = rows_of(in, l);
  RowsOut dst(out, l);
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      using C = softmax_compute_t<T>;
      const T* x = static_cast<const T*>(rows.data_ptr());
      T* y = dst.data<T>();
      const int64_t n = l.n;
      const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
      if constexpr (std::is_same_v<T, float>) {
        if (n > 0 && n < kShortRow) {
          parallel_for_range(l.m, grain, [&](int64_t b, int64_t e) {
            softmax_short_rows_f32(log, x + b * n, y + b * n, e - b, n);
          });
          return;
        }
      }
      parallel_for_range(l.m, grain, [&](int64_t b, int64_t e) {
        std::vector<C> xb, yb;
        if constexpr (!std::is_same_v<T, C>) {
          xb.resize(static_cast<size_t>(n));
          yb.resize(static_cast<size_t>(n));
        }
        for (int64_t r = b; r < e; ++r) {
          const T* xr = x + r * n;
          T* yr = y + r * n;
          if constexpr (std::is_same_v<T, float>) {
            softmax_row_f32(log, xr, yr, n);
          } else if constexpr (std::is_same_v<T, double>) {
            softmax_row_generic<double>(log, xr, yr, n);
          } else {
            for (int64_t i = 0; i < n; ++i) xb[i] = convert<float>(xr[i]);
            softmax_row_f32(log, xb.data(), yb.data(), n);
            for (int64_t i = 0; i < n; ++i) yr[i] = convert<T>(yb[i]);
          }
        }
      });
    }
  });
  dst.finish();
}

// One f32 row of the backward, in vector lanes: a language model's
// [tokens, vocabulary] log_softmax backward ([1024, 8000]) took 13.6 ms
// with a scalar std::exp and a sequential sum, against torch's 10.1.
void softmax_backward_row_f32(bool log, const float* __restrict g, const float* __restrict y,
                              float* __restrict out, int64_t n) {
  using namespace vec;
  int64_t i = 0;
  if (log) {
    // grad_in = g - exp(y) * sum(g)
    const float s = lane_sum(g, n);
    for (; i + kVec <= n; i += kVec) storev(out + i, loadv(g + i) - exp_v(loadv(y + i)) * s);
    for (; i < n; ++i) out[i] = g[i] - std::exp(y[i]) * s;
  } else {
    // grad_in = y * (g - sum(g * y))
    f32v part = {};
    for (; i + kVec <= n; i += kVec) part += loadv(g + i) * loadv(y + i);
    float s = 0;
    for (; i < n; ++i) s += g[i] * y[i];
    s += hsumv(part);
    for (i = 0; i + kVec <= n; i += kVec) storev(out + i, loadv(y + i) * (loadv(g + i) - s));
    for (; i < n; ++i) out[i] = y[i] * (g[i] - s);
  }
}

void softmax_backward_kernel(const KernelContext&, bool log, Tensor& grad_in,
                             const Tensor& grad_out, const Tensor& output, int64_t dim) {
  const RowLayout l = row_layout(output, {dim});
  const Tensor g_rows = rows_of(grad_out, l);
  const Tensor y_rows = rows_of(output, l);
  RowsOut dst(grad_in, l);
  dispatch_dtype(output.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      using C = softmax_compute_t<T>;
      const T* g = static_cast<const T*>(g_rows.data_ptr());
      const T* y = static_cast<const T*>(y_rows.data_ptr());
      T* gi = dst.data<T>();
      const int64_t n = l.n;
      const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
      parallel_for_range(l.m, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const T* gr = g + r * n;
          const T* yr = y + r * n;
          T* out = gi + r * n;
          if constexpr (std::is_same_v<T, float>) {
            softmax_backward_row_f32(log, gr, yr, out, n);
            continue;
          }
          C s = 0;
          if (log) {
            // grad_in = g - exp(y) * sum(g)
            for (int64_t i = 0; i < n; ++i) s += convert<C>(gr[i]);
            for (int64_t i = 0; i < n; ++i) {
              out[i] = convert<T>(convert<C>(gr[i]) - std::exp(convert<C>(yr[i])) * s);
            }
          } else {
            // grad_in = y * (g - sum(g * y))
            for (int64_t i = 0; i < n; ++i) s += convert<C>(gr[i]) * convert<C>(yr[i]);
            for (int64_t i = 0; i < n; ++i) {
              out[i] = convert<T>(convert<C>(yr[i]) * (convert<C>(gr[i]) - s));
            }
          }
        }
      });
    }
  });
  dst.finish();
}

}  // namespace

void register_normalization_softmax_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Softmax>(type, &softmax_kernel);
  registry.register_kernel<kernels::SoftmaxBackward>(type, &softmax_backward_kernel);
}

}  // namespace tessera::cpu
