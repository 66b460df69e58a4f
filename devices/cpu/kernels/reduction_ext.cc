// CPU kernels of the reductions other than sum and mean: prod, amax, amin,
// all, any, the vector norms and logsumexp (ReduceExt), max/min with
// indices (ArgReduce), and var/std (VarStd). Each works on the [M, N] row
// view of reduction_rows.h, rows split across oneTBB tasks (and a long row
// across them too when there are fewer rows than threads).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/vec_activation.h"
#include "devices/cpu/kernels/parallel.h"
#include "devices/cpu/kernels/reduction_rows.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

using kernels::ReduceExtOp;

// The accumulator of storage type I: double for f64, float for the other
// floats, int64 for integers and bool.
template <typename I>
using acc_t = std::conditional_t<std::is_same_v<I, double>, double,
                                 std::conditional_t<is_float_v<I>, float, int64_t>>;

// Rows in parallel; grain so that a task has about kElementwiseGrain elements.
template <typename F>
void for_rows(int64_t m, int64_t n, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
  parallel_for_range(m, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

template <typename A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
  return false;
}

// A wrapping product for integers (int64 overflow wraps, as PyTorch).
template <typename A>
A mul_acc(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// Floating rows reduce in kLanes independent accumulators, which the
// compiler keeps in vector registers: a sequential max or product waits on
// each step's latency (amax of 4M floats took 2.3 ms on one core against
// torch's 0.1 on two). Rows longer than kSplitRow elements, when there are
// fewer rows than threads (a whole-tensor amax, prod or var), are cut into
// pieces reduced in parallel and combined.
constexpr int kLanes = 16;
constexpr int64_t kSplitRow = 4 * kElementwiseGrain;

// max (or min, or max |x|) of x[0..n), n >= 1, NaN if any element is NaN.
template <bool kMax, bool kAbs, typename I, typename A>
A extreme_of(const I* x, int64_t n) {
  auto value = [&](int64_t i) {
    const A v = convert<A>(x[i]);
    return kAbs ? std::abs(v) : v;
  };
  A best[kLanes];
  int32_t nan[kLanes] = {};
  for (int j = 0; j < kLanes; ++j) best[j] = value(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const A v = value(i + j);
      nan[j] |= v != v;
      best[j] = (kMax ? v > best[j] : v < best[j]) ? v : best[j];
    }
  }
  A r = best[0];
  int32_t any_nan = 0;
  for (; i < n; ++i) {
    const A v = value(i);
    any_nan |= v != v;
    r = (kMax ? v > r : v < r) ? v : r;
  }
  for (int j = 0; j < kLanes; ++j) {
    any_nan |= nan[j];
    r = (kMax ? best[j] > r : best[j] < r) ? best[j] : r;
  }
  return any_nan ? std::numeric_limits<A>::quiet_NaN() : r;
}

// extreme_of for float rows on vector types: GCC leaves extreme_of's lane
// loop scalar ("unsupported use"), these compile to compares and blends.
template <bool kMax, bool kAbs>
float extreme_of_f32(const float* x, int64_t n) {
  using namespace vec;
  auto value = [](f32v v) { return kAbs ? absv(v) : v; };
  auto pick = [](f32v v, f32v best) { return (kMax ? v > best : v < best) ? v : best; };
  f32v b0 = value(splatv(x[0])), b1 = b0;
  i32v nan = {};
  int64_t i = 0;
  for (; i + 2 * kVec <= n; i += 2 * kVec) {
    const f32v v0 = value(loadv(x + i)), v1 = value(loadv(x + i + kVec));
    nan |= (v0 != v0) | (v1 != v1);
    b0 = pick(v0, b0);
    b1 = pick(v1, b1);
  }
  b0 = pick(b1, b0);
  float r = b0[0];
  bool any_nan = any_lane(nan);
  for (int j = 0; j < kVec; ++j) r = (kMax ? b0[j] > r : b0[j] < r) ? b0[j] : r;
  for (; i < n; ++i) {
    const float v = kAbs ? std::abs(x[i]) : x[i];
    any_nan |= v != v;
    r = (kMax ? v > r : v < r) ? v : r;
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

template <typename I, typename A>
A product_of(const I* x, int64_t n) {
  A part[kLanes];
  for (int j = 0; j < kLanes; ++j) part[j] = 1;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) part[j] = mul_acc(part[j], convert<A>(x[i + j]));
  }
  A acc = 1;
  for (; i < n; ++i) acc = mul_acc(acc, convert<A>(x[i]));
  for (int j = 0; j < kLanes; ++j) acc = mul_acc(acc, part[j]);
  return acc;
}

// sum of f(x[i]) in double lanes.
template <typename I, typename F>
double lane_sum(const I* x, int64_t n, const F& f) {
  double part[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) part[j] += f(convert<double>(x[i + j]));
  }
  double acc = 0;
  for (; i < n; ++i) acc += f(convert<double>(x[i]));
  for (int j = 0; j < kLanes; ++j) acc += part[j];
  return acc;
}

// combine(partial(begin, end) over pieces of [0, n)): in parallel pieces
// when the row is long and there are fewer rows than threads, else one.
template <typename T, typename Partial, typename Combine>
T split_row(int64_t m, int64_t n, const Partial& partial, const Combine& combine) {
  if (n < kSplitRow) return partial(int64_t{0}, n);  // before max_threads(): once per short row
  const int threads = max_threads();
  if (m >= threads || threads <= 1) return partial(int64_t{0}, n);
  const int64_t pieces = std::min<int64_t>(threads, n / kElementwiseGrain);
  std::vector<T> parts(static_cast<size_t>(pieces));
  parallel_for_each(pieces, [&](int64_t p) {
    parts[static_cast<size_t>(p)] = partial(n * p / pieces, n * (p + 1) / pieces);
  });
  T acc = parts[0];
  for (int64_t p = 1; p < pieces; ++p) acc = combine(acc, parts[static_cast<size_t>(p)]);
  return acc;
}

// logsumexp of a float row on the softmax kernels' vector exp (attention
// and log-likelihoods call it on long rows): the max, then the shifted
// exponentials summed in vector lanes, flushed to double every few
// thousand terms so that a whole tensor's sum keeps f32 resolution.
float logsumexp_f32(const float* x, int64_t n) {
  if (n == 0) return -std::numeric_limits<float>::infinity();
  bool has_nan = false;
  const float m = vec::max_and_nan(x, n, has_nan);
  if (has_nan) return std::numeric_limits<float>::quiet_NaN();
  if (std::isinf(m)) return m;  // +inf wins; all -inf gives -inf
  const vec::f32v shift = vec::splatv(m);
  constexpr int64_t kFlush = 4096;
  double total = 0;
  int64_t i = 0;
  while (i + vec::kVec <= n) {
    vec::f32v acc = {};
    const int64_t end = std::min(n - vec::kVec + 1, i + kFlush);
    for (; i < end; i += vec::kVec) acc += vec::exp_nonpositive(vec::loadv(x + i) - shift);
    total += vec::hsumv(acc);
  }
  for (; i < n; ++i) total += vec::exp_nonpositive(x[i] - m);
  return static_cast<float>(std::log(total)) + m;
}

template <typename I, typename A = acc_t<I>>
A reduce_row(ReduceExtOp op, const I* x, int64_t n, int64_t m) {
  auto extreme = [&](auto is_max, auto is_abs) -> A {
    if (n == 0) return 0;
    constexpr bool kMax = decltype(is_max)::value, kAbs = decltype(is_abs)::value;
    if constexpr (std::is_floating_point_v<A>) {
      return split_row<A>(
          m, n,
          [&](int64_t b, int64_t e) {
            if constexpr (std::is_same_v<I, float>) return extreme_of_f32<kMax, kAbs>(x + b, e - b);
            return extreme_of<kMax, kAbs, I, A>(x + b, e - b);
          },
          [](A a, A b) {
            if (a != a || b != b) return std::numeric_limits<A>::quiet_NaN();
            return (kMax ? b > a : b < a) ? b : a;
          });
    } else {
      A best = 0;
      for (int64_t i = 0; i < n; ++i) {
        A v = convert<A>(x[i]);
        if (kAbs) v = v < 0 ? -v : v;
        if (i == 0 || (kMax ? v > best : v < best)) best = v;
      }
      return best;
    }
  };
  switch (op) {
    case ReduceExtOp::kProd:
      return split_row<A>(m, n, [&](int64_t b, int64_t e) { return product_of<I, A>(x + b, e - b); },
                          [](A a, A b) { return mul_acc(a, b); });
    case ReduceExtOp::kAmax:
      return extreme(std::true_type{}, std::false_type{});
    case ReduceExtOp::kAmin:
      return extreme(std::false_type{}, std::false_type{});
    case ReduceExtOp::kNormInf:
      return extreme(std::true_type{}, std::true_type{});
    case ReduceExtOp::kAll: {
      for (int64_t i = 0; i < n; ++i) {
        if (!convert<bool>(x[i])) return 0;
      }
      return 1;
    }
    case ReduceExtOp::kAny: {
      for (int64_t i = 0; i < n; ++i) {
        if (convert<bool>(x[i])) return 1;
      }
      return 0;
    }
    case ReduceExtOp::kNorm1:
    case ReduceExtOp::kNorm2: {
      if constexpr (std::is_floating_point_v<A>) {
        // Double lanes: vectorizes, and a norm of a large tensor keeps f32
        // resolution.
        const bool one = op == ReduceExtOp::kNorm1;
        const double acc = split_row<double>(
            m, n,
            [&](int64_t b, int64_t e) {
              return one ? lane_sum(x + b, e - b, [](double v) { return std::abs(v); })
                         : lane_sum(x + b, e - b, [](double v) { return v * v; });
            },
            [](double a, double b) { return a + b; });
        return static_cast<A>(one ? acc : std::sqrt(acc));
      }
      return 0;  // floating only (the front end checks)
    }
    case ReduceExtOp::kLogSumExp: {
      if constexpr (std::is_same_v<I, float>) {
        return logsumexp_f32(x, n);
      } else if constexpr (std::is_floating_point_v<A>) {
        if (n == 0) return -std::numeric_limits<A>::infinity();
        A m = convert<A>(x[0]);
        for (int64_t i = 1; i < n && !std::isnan(m); ++i) {
          const A v = convert<A>(x[i]);
          if (std::isnan(v) || v > m) m = v;
        }
        if (std::isnan(m)) return m;
        // Shift by the max for range; an infinite max has nothing to shift.
        const A shift = std::isinf(m) ? A(0) : m;
        // The sum of many terms accumulates in double: logsumexp over a whole
        // large tensor is otherwise off by far more than f32 resolution.
        double s = 0;
        for (int64_t i = 0; i < n; ++i) s += static_cast<double>(std::exp(convert<A>(x[i]) - shift));
        return static_cast<A>(std::log(s)) + shift;
      }
      return 0;
    }
  }
  return 0;
}

// Reductions of a contiguous float input over its leading dims ([R, C],
// one result per column, as amax(dim=0) or a norm over the batch): the
// row view would transpose the whole input first (amax over dim 0 of a
// [4096, 1024] tensor took 4 ms, torch 0.6). Each task reduces a block
// of columns, row after row, elementwise across the block.
bool reduce_leading_dims_f32(ReduceExtOp op, Tensor& out, const Tensor& in, const Shape& dims) {
  const bool supported = op == ReduceExtOp::kAmax || op == ReduceExtOp::kAmin ||
                         op == ReduceExtOp::kNormInf || op == ReduceExtOp::kProd ||
                         op == ReduceExtOp::kNorm1 || op == ReduceExtOp::kNorm2;
  if (!supported || in.dtype() != DType::kF32 || out.dtype() != DType::kF32 ||
      !in.is_contiguous() || !out.is_contiguous() || dims.empty() ||
      static_cast<int64_t>(dims.size()) >= in.dim()) {
    return false;
  }
  Shape sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < in.dim(); ++d) {
    const bool reduced = d < static_cast<int64_t>(sorted.size());
    if (reduced && sorted[static_cast<size_t>(d)] != d) return false;  // not the leading dims
    (reduced ? rows : cols) *= in.sizes()[d];
  }
  constexpr int64_t kVec = vec::kVec;
  if (rows < 2 || cols < kVec) return false;
  const float* x = static_cast<const float*>(in.data_ptr());
  float* y = static_cast<float*>(out.data_ptr());
  constexpr int64_t kBlock = 1024;  // columns a task keeps in its accumulators
  const int64_t per_thread = (cols + max_threads() - 1) / max_threads();
  const int64_t width = std::clamp<int64_t>((per_thread + kVec - 1) / kVec * kVec, kVec, kBlock);
  const int64_t blocks = (cols + width - 1) / width;
  auto block = [&](int64_t b) {
    const int64_t c0 = b * width, w = std::min(width, cols - c0);
    if (op == ReduceExtOp::kNorm1 || op == ReduceExtOp::kNorm2) {
      double acc[kBlock] = {};
      const bool one = op == ReduceExtOp::kNorm1;
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = x + r * cols + c0;
        if (one) {
          for (int64_t c = 0; c < w; ++c) acc[c] += std::abs(static_cast<double>(row[c]));
        } else {
          for (int64_t c = 0; c < w; ++c) acc[c] += static_cast<double>(row[c]) * row[c];
        }
      }
      for (int64_t c = 0; c < w; ++c) y[c0 + c] = static_cast<float>(one ? acc[c] : std::sqrt(acc[c]));
      return;
    }
    float acc[kBlock];
    const float* first = x + c0;
    const bool abs = op == ReduceExtOp::kNormInf;
    for (int64_t c = 0; c < w; ++c) {
      acc[c] = op == ReduceExtOp::kProd ? first[c] : abs ? std::abs(first[c]) : first[c];
    }
    for (int64_t r = 1; r < rows; ++r) {
      const float* row = x + r * cols + c0;
      switch (op) {
        case ReduceExtOp::kProd:
          for (int64_t c = 0; c < w; ++c) acc[c] *= row[c];
          break;
        case ReduceExtOp::kAmin:  // a NaN, once taken, stays: NaN < v is false
          for (int64_t c = 0; c < w; ++c) acc[c] = (row[c] < acc[c]) | (row[c] != row[c]) ? row[c] : acc[c];
          break;
        default:  // kAmax, kNormInf
          for (int64_t c = 0; c < w; ++c) {
            const float v = abs ? std::abs(row[c]) : row[c];
            acc[c] = (v > acc[c]) | (v != v) ? v : acc[c];
          }
          break;
      }
    }
    for (int64_t c = 0; c < w; ++c) y[c0 + c] = acc[c];
  };
  if (rows * cols <= kElementwiseGrain) {
    for (int64_t b = 0; b < blocks; ++b) block(b);
  } else {
    parallel_for_each(blocks, block);
  }
  return true;
}

void reduce_ext_kernel(const KernelContext&, ReduceExtOp op, Tensor& out, const Tensor& in,
                       const Shape& dims) {
  if (reduce_leading_dims_f32(op, out, in, dims)) return;
  const RowLayout l = row_layout(in, dims);
  const Tensor rows = rows_of(in, l);
  RowsOut dst(out, l);
  dispatch_dtype(in.dtype(), [&](auto in_tag) {
    using I = decltype(in_tag);
    using A = acc_t<I>;
    const I* x = static_cast<const I*>(rows.data_ptr());
    dispatch_dtype(out.dtype(), [&](auto out_tag) {
      using O = decltype(out_tag);
      O* y = dst.data<O>();
      for_rows(l.m, l.n,
               [&](int64_t r) { y[r] = convert<O>(reduce_row<I, A>(op, x + r * l.n, l.n, l.m)); });
    });
  });
  dst.finish();
}

void arg_reduce_kernel(const KernelContext&, bool is_max, Tensor& values, Tensor& indices,
                       const Tensor& in, int64_t dim) {
  const Shape rdims = in.dim() == 0 ? Shape{} : Shape{dim};
  const RowLayout l = row_layout(in, rdims);
  TESSERA_CHECK(l.n > 0, IndexError, is_max ? "max" : "min",
                ": the cpu kernel needs a non-empty reduction dim, got ", describe(in));
  const Tensor rows = rows_of(in, l);
  RowsOut idx_dst(indices, l);
  std::optional<RowsOut> val_dst;
  if (values.defined()) val_dst.emplace(values, l);
  dispatch_dtype(in.dtype(), [&](auto in_tag) {
    using I = decltype(in_tag);
    using C = std::conditional_t<is_half_v<I>, float, I>;
    const I* x = static_cast<const I*>(rows.data_ptr());
    int64_t* yi = idx_dst.data<int64_t>();
    I* yv = val_dst ? val_dst->data<I>() : nullptr;
    for_rows(l.m, l.n, [&](int64_t r) {
      const I* row = x + r * l.n;
      C best = convert<C>(row[0]);
      int64_t at = 0;
      if (!is_nan(best)) {
        for (int64_t i = 1; i < l.n; ++i) {
          const C v = convert<C>(row[i]);
          if (is_nan(v)) {  // the first NaN wins
            best = v;
            at = i;
            break;
          }
          if (is_max ? v > best : v < best) {
            best = v;
            at = i;
          }
        }
      }
      yi[r] = at;
      if (yv) yv[r] = row[at];
    });
  });
  idx_dst.finish();
  if (val_dst) val_dst->finish();
}

void var_std_kernel(const KernelContext&, bool take_sqrt, Tensor& out, const Tensor& in,
                    const Shape& dims, double correction) {
  const RowLayout l = row_layout(in, dims);
  const Tensor rows = rows_of(in, l);
  RowsOut dst(out, l);
  const double divisor = std::max(0.0, static_cast<double>(l.n) - correction);
  dispatch_dtype(in.dtype(), [&](auto in_tag) {
    using I = decltype(in_tag);
    if constexpr (is_float_v<I>) {
      const I* x = static_cast<const I*>(rows.data_ptr());
      I* y = dst.data<I>();
      // Two passes in double lanes: the mean, then the squared deviations
      // (no cancellation as in E[x^2] - E[x]^2).
      auto plus = [](double a, double b) { return a + b; };
      for_rows(l.m, l.n, [&](int64_t r) {
        const I* row = x + r * l.n;
        const double s = split_row<double>(
            l.m, l.n,
            [&](int64_t b, int64_t e) { return lane_sum(row + b, e - b, [](double v) { return v; }); },
            plus);
        const double mean = s / static_cast<double>(l.n);
        const double q = split_row<double>(
            l.m, l.n,
            [&](int64_t b, int64_t e) {
              return lane_sum(row + b, e - b, [mean](double v) { return (v - mean) * (v - mean); });
            },
            plus);
        double v = q / divisor;
        if (l.n == 0) v = std::numeric_limits<double>::quiet_NaN();
        if (take_sqrt) v = std::sqrt(v);
        y[r] = convert<I>(v);
      });
    }
  });
  dst.finish();
}

}  // namespace

void register_reduction_ext_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ReduceExt>(type, &reduce_ext_kernel);
  registry.register_kernel<kernels::ArgReduce>(type, &arg_reduce_kernel);
  registry.register_kernel<kernels::VarStd>(type, &var_std_kernel);
}

}  // namespace tessera::cpu
