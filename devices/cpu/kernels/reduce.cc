// Sum and mean on the CPU, over any set of dims, in keepdim layout.
//
// The input's dims split into kept dims K (one output element per index)
// and reduced dims R; size-1 dims drop out, and each set is ordered by
// input stride and coalesced. Then one of two schedules runs:
//  - inner (the innermost input dim is reduced, e.g. sum over the last dim
//    or over everything): each output element is a sum over memory rows.
//    A row is summed with many independent accumulators (vectorized) in
//    blocks combined pairwise, and row sums are combined by a cascade, so
//    the error grows like log(n), not n. Many outputs run in parallel over
//    outputs; few large ones split their rows into fixed chunks whose
//    partial sums are combined in a fixed order.
//  - outer (the innermost input dim is kept, e.g. sum over dim 0 of a
//    row-major matrix): a tile of output columns accumulates whole input
//    rows (a vectorized add of contiguous rows), again through a cascade of
//    per-level accumulators; tasks are (outer output, column tile, row
//    chunk).
// Chunk boundaries depend only on shapes, never on the thread count, so a
// result does not change with the number of threads.
//
// Accumulation (kernel_signatures.h): double when in or out is f64, float
// when either is another floating dtype, else int64 (wrapping). Reducing
// zero elements gives 0 for sum and NaN for mean; one element is a copy.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

using kernels::ReduceOp;

// -- Summing one memory row ------------------------------------------------

// Float rows: kLanes accumulators over blocks of at most kBlock elements,
// blocks combined pairwise.
template <typename A>
inline constexpr int kLanes = sizeof(A) == 4 ? 32 : 16;
inline constexpr int64_t kBlock = 2048;

template <typename A>
A sum_lanes(A* acc, int n) {  // pairwise over the lanes
  for (int w = n / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  }
  return acc[0];
}

template <typename A, typename I>
A sum_block_contig(const I* __restrict p, int64_t n) {
  constexpr int L = kLanes<A>;
  A acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int j = 0; j < L; ++j) acc[j] += convert<A>(p[i + j]);
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += convert<A>(p[i]);
  return sum_lanes(acc, L);
}

template <typename A, typename I>
A sum_contig(const I* p, int64_t n) {
  if constexpr (std::is_integral_v<A>) {
    uint64_t acc = 0;  // wraps like int64
    for (int64_t i = 0; i < n; ++i) acc += static_cast<uint64_t>(convert<int64_t>(p[i]));
    return static_cast<A>(acc);
  } else {
    if (n <= 16) {  // short rows: the lanes would cost more than they save
      A acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += convert<A>(p[i]);
      return acc;
    }
    if (n <= kBlock) return sum_block_contig<A>(p, n);
    // Split at a multiple of the block size so the halves stay aligned.
    const int64_t half = ((n / 2 + kBlock - 1) / kBlock) * kBlock;
    return sum_contig<A>(p, half) + sum_contig<A>(p + half, n - half);
  }
}

template <typename A, typename I>
A sum_strided(const char* p, int64_t n, int64_t stride) {
  if constexpr (std::is_integral_v<A>) {
    uint64_t acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc += static_cast<uint64_t>(convert<int64_t>(at<const I>(const_cast<char*>(p), stride, i)));
    }
    return static_cast<A>(acc);
  } else {
    if (n > kBlock) {
      const int64_t half = ((n / 2 + kBlock - 1) / kBlock) * kBlock;
      return sum_strided<A, I>(p, half, stride) + sum_strided<A, I>(p + half * stride, n - half, stride);
    }
    constexpr int L = 8;
    A acc[L] = {};
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      for (int j = 0; j < L; ++j) acc[j] += convert<A>(at<const I>(const_cast<char*>(p), stride, i + j));
    }
    for (int j = 0; i < n; ++i, ++j) acc[j] += convert<A>(at<const I>(const_cast<char*>(p), stride, i));
    return sum_lanes(acc, L);
  }
}

template <typename A, typename I>
A sum_row(const char* p, int64_t n, int64_t stride_bytes) {
  if (stride_bytes == static_cast<int64_t>(sizeof(I))) return sum_contig<A>(reinterpret_cast<const I*>(p), n);
  if (stride_bytes == 0) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(convert<int64_t>(*reinterpret_cast<const I*>(p))) *
                            static_cast<uint64_t>(n));
    }
  }
  return sum_strided<A, I>(p, n, stride_bytes);
}

// Contiguous float/double rows, the same sums as sum_contig (same lanes,
// blocks and pairwise order, so bit-identical) with explicit vectors: four
// 32-byte accumulators (kLanes lanes) kept in registers, no lane array
// zeroed on the stack, and no per-row dtype dispatch on the store.
template <typename A>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(32), aligned(4)));
  typedef float aligned_type __attribute__((vector_size(32)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(32), aligned(8)));
  typedef double aligned_type __attribute__((vector_size(32)));
};

template <typename A>
A sum_block_fast(const A* __restrict p, int64_t n) {
  using V = typename VecOf<A>::aligned_type;
  using UV = typename VecOf<A>::type;  // unaligned loads
  constexpr int W = static_cast<int>(sizeof(V) / sizeof(A));
  constexpr int L = kLanes<A>;
  static_assert(L == 4 * W);
  V a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const UV* q = reinterpret_cast<const UV*>(p + i);
    a0 += q[0];
    a1 += q[1];
    a2 += q[2];
    a3 += q[3];
  }
  alignas(32) A acc[L];
  *reinterpret_cast<V*>(acc) = a0;
  *reinterpret_cast<V*>(acc + W) = a1;
  *reinterpret_cast<V*>(acc + 2 * W) = a2;
  *reinterpret_cast<V*>(acc + 3 * W) = a3;
  for (int j = 0; i < n; ++i, ++j) acc[j] += p[i];
  return sum_lanes(acc, L);
}

template <typename A>
A sum_contig_fast(const A* p, int64_t n) {
  if (n <= 16) {
    A acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += p[i];
    return acc;
  }
  if (n <= kBlock) return sum_block_fast<A>(p, n);
  const int64_t half = ((n / 2 + kBlock - 1) / kBlock) * kBlock;
  return sum_contig_fast<A>(p, half) + sum_contig_fast<A>(p + half, n - half);
}

// -- Cascades: sums of many values with log-depth error --------------------

// Level l holds the sum of up to kFan sums of level l - 1.
inline constexpr int kFan = 16;
inline constexpr int kLevels = 10;  // kFan^9 values before the top level grows

template <typename A>
class Cascade {
 public:
  void add(A v) {
    if constexpr (std::is_integral_v<A>) {
      level_[0] = static_cast<A>(static_cast<uint64_t>(level_[0]) + static_cast<uint64_t>(v));
    } else {
      level_[0] += v;
      for (int l = 0; l + 1 < kLevels && ++count_[l] == kFan; ++l) {
        level_[l + 1] += level_[l];
        level_[l] = 0;
        count_[l] = 0;
      }
    }
  }
  A total() const {
    if constexpr (std::is_integral_v<A>) {
      return level_[0];
    } else {
      A t = 0;
      for (int l = 0; l < kLevels; ++l) t += level_[l];
      return t;
    }
  }

 private:
  A level_[kLevels] = {};
  int count_[kLevels] = {};
};

// Column accumulators for the outer schedule: `levels` rows of width w.
template <typename A>
class ColumnCascade {
 public:
  ColumnCascade(int64_t w, int64_t rows) : w_(w) {
    levels_ = 1;
    if constexpr (!std::is_integral_v<A>) {
      for (int64_t cap = kFan; cap < rows && levels_ < kLevels; cap *= kFan) ++levels_;
    }
    buf_.assign(static_cast<size_t>(levels_ * w), A(0));
    count_.assign(static_cast<size_t>(levels_), 0);
  }
  A* row0() { return buf_.data(); }
  // Called after each row added to row0().
  void row_done() {
    if constexpr (std::is_integral_v<A>) return;
    for (int l = 0; l + 1 < levels_ && ++count_[l] == kFan; ++l) {
      A* __restrict lo = buf_.data() + l * w_;
      A* __restrict hi = lo + w_;
      for (int64_t j = 0; j < w_; ++j) {
        hi[j] += lo[j];
        lo[j] = 0;
      }
      count_[l] = 0;
    }
  }
  // Totals into out[0..w).
  void totals(A* out) const {
    for (int64_t j = 0; j < w_; ++j) out[j] = 0;
    for (int l = 0; l < levels_; ++l) {
      const A* lv = buf_.data() + l * w_;
      for (int64_t j = 0; j < w_; ++j) out[j] += lv[j];
    }
  }

 private:
  int64_t w_;
  int levels_;
  std::vector<A> buf_;
  std::vector<int> count_;
};

// acc[j] += row[j] for j < w, the row's elements col_in bytes apart.
template <typename A, typename I>
void add_row(A* __restrict acc, const char* row, int64_t col_in, int64_t w) {
  if (col_in == static_cast<int64_t>(sizeof(I))) {
    const I* __restrict x = reinterpret_cast<const I*>(row);
    if constexpr (std::is_integral_v<A>) {
      for (int64_t j = 0; j < w; ++j) {
        acc[j] = static_cast<A>(static_cast<uint64_t>(acc[j]) + static_cast<uint64_t>(convert<int64_t>(x[j])));
      }
    } else {
      for (int64_t j = 0; j < w; ++j) acc[j] += convert<A>(x[j]);
    }
  } else {
    for (int64_t j = 0; j < w; ++j) {
      const A x = convert<A>(at<const I>(const_cast<char*>(row), col_in, j));
      if constexpr (std::is_integral_v<A>) {
        acc[j] = static_cast<A>(static_cast<uint64_t>(acc[j]) + static_cast<uint64_t>(x));
      } else {
        acc[j] += x;
      }
    }
  }
}

// -- Storing results ---------------------------------------------------------

template <typename A>
void store_values(DType dt, char* p, int64_t stride_bytes, const A* v, int64_t n, A scale,
                  bool mean) {
  dispatch_dtype(dt, [&](auto tag) {
    using O = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      A x = v[i];
      if constexpr (!std::is_integral_v<A>) {
        if (mean) x = x / scale;
      }
      at<O>(p, stride_bytes, i) = convert<O>(x);
    }
  });
}

// -- The plan ------------------------------------------------------------------

struct Dims {
  int n = 0;
  int64_t size[kMaxDims];
  int64_t in_stride[kMaxDims];   // elements
  int64_t out_stride[kMaxDims];  // elements (kept dims only)
};

struct ReduceArgs {
  ReduceOp op;
  Tensor* out;
  const Tensor* in;
  Dims kept, red;
  int64_t numel_out = 1, numel_red = 1;
};

inline constexpr int64_t kChunk = 64 * 1024;  // elements per reduction chunk

// Calls f(i) for i in [0, n) in parallel when the total work, n * work
// elements, is worth threads.
template <typename F>
void run_tasks(int64_t n, int64_t work, const F& f) {
  if (n <= 0) return;
  if (n == 1 || n * work <= kElementwiseGrain) {
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    parallel_for_each(n, f);
  }
}

template <typename A, typename I>
void reduce_inner(const ReduceArgs& r) {
  const DType odt = r.out->dtype();
  const int64_t isz = static_cast<int64_t>(sizeof(I));
  const int64_t osz = static_cast<int64_t>(r.out->itemsize());
  const bool mean = r.op == ReduceOp::kMean;
  const A count = static_cast<A>(r.numel_red);
  StridedIter<2> kit(r.kept.n, r.kept.size, {r.kept.out_stride, r.kept.in_stride}, {osz, isz}, true,
                     "reduce");
  StridedIter<1> rit(r.red.n, r.red.size, {r.red.in_stride}, {isz}, true, "reduce");
  const bool one_row = rit.ndim() == 1;
  auto reduce_range = [&](char* in_base, int64_t b, int64_t e) -> A {
    if constexpr (std::is_same_v<A, I> && !std::is_integral_v<A>) {
      if (one_row && rit.stride(0, 0) == isz) {  // same sums as sum_row, in registers
        return sum_contig_fast<A>(reinterpret_cast<const A*>(in_base) + b, e - b);
      }
    }
    if (one_row) return sum_row<A, I>(in_base + b * rit.stride(0, 0), e - b, rit.stride(0, 0));
    Cascade<A> c;
    rit.for_range({in_base}, b, e, [&c](char* const* p, const int64_t* s, int64_t n) {
      c.add(sum_row<A, I>(p[0], n, s[0]));
    });
    return c.total();
  };
  const std::array<char*, 2> base = {static_cast<char*>(r.out->data_ptr()),
                                     static_cast<char*>(r.in->data_ptr())};
  if (r.numel_out >= 64 || r.numel_red <= kChunk) {
    // Parallel over outputs, each summed whole by one thread.
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / r.numel_red);
    if constexpr (std::is_same_v<A, I> && !std::is_integral_v<A>) {
      // Contiguous rows of the accumulation type (sum over the last dim of
      // a row-major f32/f64 tensor): one pass, straight into the output.
      if (one_row && rit.stride(0, 0) == isz && odt == r.in->dtype()) {
        const int64_t n_red = r.numel_red;
        kit.run(base,
                [&](char* const* p, const int64_t* s, int64_t n) {
                  for (int64_t i = 0; i < n; ++i) {
                    A v = sum_contig_fast<A>(reinterpret_cast<const A*>(p[1] + i * s[1]), n_red);
                    if (mean) v = v / count;
                    at<A>(p[0], s[0], i) = v;
                  }
                },
                grain);
        return;
      }
    }
    kit.run(base,
            [&](char* const* p, const int64_t* s, int64_t n) {
              for (int64_t i = 0; i < n; ++i) {
                A v = reduce_range(p[1] + i * s[1], 0, r.numel_red);
                store_values<A>(odt, p[0] + i * s[0], 0, &v, 1, count, mean);
              }
            },
            grain);
    return;
  }
  // Few, large outputs: each output's rows split into fixed chunks.
  const int64_t nchunks = (r.numel_red + kChunk - 1) / kChunk;
  std::vector<A> partial(static_cast<size_t>(nchunks));
  kit.for_range(base, 0, r.numel_out, [&](char* const* p, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      char* in_base = p[1] + i * s[1];
      // About one contiguous range of chunks per thread (a static
      // partition, as the elementwise kernels use): each thread streams
      // through its own part of memory. Dealt out adaptively, the full sum
      // of [4096, 4096] f32 ran at 0.88 of torch's bandwidth.
      parallel_for_range(nchunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          partial[c] = reduce_range(in_base, c * kChunk, std::min(r.numel_red, (c + 1) * kChunk));
        }
      });
      Cascade<A> total;
      for (A v : partial) total.add(v);
      A v = total.total();
      store_values<A>(odt, p[0] + i * s[0], 0, &v, 1, count, mean);
    }
  });
}

template <typename A, typename I>
void reduce_outer(const ReduceArgs& r, int k0) {
  const DType odt = r.out->dtype();
  const int64_t isz = static_cast<int64_t>(sizeof(I));
  const int64_t osz = static_cast<int64_t>(r.out->itemsize());
  const bool mean = r.op == ReduceOp::kMean;
  const A count = static_cast<A>(r.numel_red);

  // Columns: kept dim k0; the other kept dims index "outer outputs".
  const int64_t ncols = r.kept.size[k0];
  const int64_t col_in = r.kept.in_stride[k0] * isz;    // bytes
  const int64_t col_out = r.kept.out_stride[k0] * osz;  // bytes
  Dims outer;
  for (int d = 0; d < r.kept.n; ++d) {
    if (d == k0) continue;
    outer.size[outer.n] = r.kept.size[d];
    outer.in_stride[outer.n] = r.kept.in_stride[d];
    outer.out_stride[outer.n] = r.kept.out_stride[d];
    ++outer.n;
  }
  StridedIter<2> kit(outer.n, outer.size, {outer.out_stride, outer.in_stride}, {osz, isz}, true,
                     "reduce");
  StridedIter<1> rit(r.red.n, r.red.size, {r.red.in_stride}, {isz}, true, "reduce");
  const int64_t nouter = kit.numel();

  constexpr int64_t kTile = 8192;  // columns per task: wide rows stream best
  const int64_t w_max = std::min(kTile, ncols);
  const int64_t ntiles = (ncols + kTile - 1) / kTile;
  // Split the rows too when there are few column tasks for the work.
  int64_t nchunks = 1;
  if (nouter * ntiles < 16) {
    const int64_t rows_per_chunk = std::max<int64_t>(16, 4 * kElementwiseGrain / w_max);
    nchunks = std::clamp<int64_t>((r.numel_red + rows_per_chunk - 1) / rows_per_chunk, 1, 64);
  }
  const int64_t rows_per_chunk = (r.numel_red + nchunks - 1) / nchunks;
  const int64_t ntasks = nouter * ntiles * nchunks;
  std::vector<A> partial;
  if (nchunks > 1) partial.resize(static_cast<size_t>(ntasks * w_max));

  const std::array<char*, 2> base = {static_cast<char*>(r.out->data_ptr()),
                                     static_cast<char*>(r.in->data_ptr())};
  // Output and input addresses of outer output o.
  auto outer_base = [&](int64_t o, char*& out_p, char*& in_p) {
    kit.for_range(base, o, o + 1, [&](char* const* p, const int64_t*, int64_t) {
      out_p = p[0];
      in_p = p[1];
    });
  };

  run_tasks(ntasks, rows_per_chunk * w_max, [&](int64_t t) {
    const int64_t chunk = t % nchunks;
    const int64_t tile = (t / nchunks) % ntiles;
    const int64_t o = t / (nchunks * ntiles);
    char* out_p;
    char* in_p;
    outer_base(o, out_p, in_p);
    const int64_t j0 = tile * kTile;
    const int64_t w = std::min(kTile, ncols - j0);
    in_p += j0 * col_in;
    out_p += j0 * col_out;
    const int64_t rb = chunk * rows_per_chunk, re = std::min(r.numel_red, rb + rows_per_chunk);
    ColumnCascade<A> acc(w, re - rb);
    rit.for_range({in_p}, rb, re, [&](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        add_row<A, I>(acc.row0(), p[0] + i * s[0], col_in, w);
        acc.row_done();
      }
    });
    if (nchunks == 1) {
      std::vector<A> tot(static_cast<size_t>(w));
      acc.totals(tot.data());
      store_values<A>(odt, out_p, col_out, tot.data(), w, count, mean);
    } else {
      acc.totals(partial.data() + t * w_max);
    }
  });
  if (nchunks == 1) return;
  // Combine the chunks of each (outer output, tile) in chunk order.
  run_tasks(nouter * ntiles, nchunks * w_max, [&](int64_t g) {
    const int64_t tile = g % ntiles;
    const int64_t o = g / ntiles;
    char* out_p;
    char* in_p;
    outer_base(o, out_p, in_p);
    const int64_t j0 = tile * kTile;
    const int64_t w = std::min(kTile, ncols - j0);
    std::vector<A> tot(static_cast<size_t>(w), A(0));
    for (int64_t c = 0; c < nchunks; ++c) {
      const A* part = partial.data() + (g * nchunks + c) * w_max;
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (std::is_integral_v<A>) {
          tot[j] = static_cast<A>(static_cast<uint64_t>(tot[j]) + static_cast<uint64_t>(part[j]));
        } else {
          tot[j] += part[j];
        }
      }
    }
    store_values<A>(odt, out_p + j0 * col_out, col_out, tot.data(), w, count, mean);
  });
}

// Fills out with v (sum or mean over zero elements).
void fill_out(Tensor& out, double v) {
  StridedIter<1> it({&out}, "reduce");
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using O = decltype(tag);
    const O x = convert<O>(v);
    it.run({static_cast<char*>(out.data_ptr())}, [x](char* const* p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) at<O>(p[0], s[0], i) = x;
    });
  });
}

void reduce_kernel(const KernelContext&, ReduceOp op, Tensor& out, const Tensor& in,
                   const Shape& dims) {
  const char* name = op == ReduceOp::kSum ? "sum" : "mean";
  const int64_t ndim = in.dim();
  TESSERA_CHECK(out.dim() == ndim, ValueError, name, ": the cpu kernel needs out in keepdim layout, got out ",
                describe(out), " for in ", describe(in));
  TESSERA_CHECK(ndim <= kMaxDims, ValueError, name, ": the cpu kernels support at most ", kMaxDims,
                " dims, got ", describe(in));
  bool reduced[kMaxDims] = {};
  for (size_t i = 0; i < dims.size(); ++i) {
    TESSERA_CHECK(dims[i] >= 0 && dims[i] < ndim && (i == 0 || dims[i] > dims[i - 1]), IndexError, name,
                  ": reduction dims ", shape_to_string(dims), " must be sorted, unique and in [0, ", ndim,
                  ") for ", describe(in));
    reduced[dims[i]] = true;
  }
  for (int64_t d = 0; d < ndim; ++d) {
    TESSERA_CHECK(out.sizes()[d] == (reduced[d] ? 1 : in.sizes()[d]), ValueError, name, ": out ",
                  describe(out), " does not match in ", describe(in), " reduced over ",
                  shape_to_string(dims), " with keepdim");
  }
  TESSERA_CHECK(op != ReduceOp::kMean || is_floating(out.dtype()), TypeError,
                "mean: the cpu kernel needs a floating output dtype, got ", describe(out));

  ReduceArgs r;
  r.op = op;
  r.out = &out;
  r.in = &in;
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t s = in.sizes()[d];
    if (reduced[d]) {
      r.numel_red *= s;
      if (s == 1 || s == 0) continue;
      r.red.size[r.red.n] = s;
      r.red.in_stride[r.red.n] = in.strides()[d];
      ++r.red.n;
    } else {
      r.numel_out *= s;
      if (s == 1 || s == 0) continue;
      r.kept.size[r.kept.n] = s;
      r.kept.in_stride[r.kept.n] = in.strides()[d];
      r.kept.out_stride[r.kept.n] = out.strides()[d];
      ++r.kept.n;
    }
  }
  if (r.numel_out == 0) return;
  if (r.numel_red == 0) {
    fill_out(out, op == ReduceOp::kSum ? 0.0 : std::numeric_limits<double>::quiet_NaN());
    return;
  }
  if (r.numel_red == 1) {  // nothing to add: a conversion
    cpu_copy(out, in);  // all reduced dims have size 1: equal sizes
    return;
  }

  // The kept dim with the smallest input stride, and whether it is inner
  // to every reduced dim (then the outer schedule reads whole rows).
  int k0 = -1;
  for (int d = 0; d < r.kept.n; ++d) {
    if (k0 < 0 || std::abs(r.kept.in_stride[d]) < std::abs(r.kept.in_stride[k0])) k0 = d;
  }
  int64_t min_red = std::numeric_limits<int64_t>::max();
  for (int d = 0; d < r.red.n; ++d) min_red = std::min(min_red, std::abs(r.red.in_stride[d]));
  const bool outer = k0 >= 0 && std::abs(r.kept.in_stride[k0]) < min_red;

  const DType idt = in.dtype(), odt = out.dtype();
  auto run = [&](auto acc_tag) {
    using A = decltype(acc_tag);
    dispatch_dtype(idt, [&](auto in_tag) {
      using I = decltype(in_tag);
      if (outer) {
        reduce_outer<A, I>(r, k0);
      } else {
        reduce_inner<A, I>(r);
      }
    });
  };
  if (idt == DType::kF64 || odt == DType::kF64) {
    run(double{});
  } else if (is_floating(idt) || is_floating(odt)) {
    run(float{});
  } else {
    run(int64_t{});
  }
}

}  // namespace

void register_reduce_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Reduce>(type, &reduce_kernel);
}

}  // namespace tessera::cpu
