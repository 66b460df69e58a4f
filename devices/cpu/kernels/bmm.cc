// Batched matrix product on the CPU: out[b] = a[b] @ b[b].
//
//  - f32/f64: Eigen's GEMM on Eigen::Map views of the operands. An operand
//    whose rows or columns are contiguous maps directly (row-major or
//    column-major with an outer stride; a transposed view costs nothing);
//    any other layout is first packed into a contiguous buffer. Eigen is
//    built without OpenMP, so each product is single-threaded and the
//    threading is ours, on oneTBB: one task per batch item when there are
//    enough of them, otherwise each product is cut into row (or column)
//    blocks, about one per thread, each an independent Eigen GEMM. Small
//    products run inline.
//  - f16/bf16: operands converted to f32, multiplied in f32, converted back
//    (PyTorch's CPU also accumulates them in f32).
//  - integers and bool: a plain loop accumulating in int64 (wrapping), as
//    PyTorch's CPU integer mm; bool gives "any a && b".
#include <algorithm>
#include <vector>

// GCC 12 reports _mm512_undefined_pd() inside Eigen's AVX-512 packing as
// "may be used uninitialized", over 200 lines per build: a false positive
// (the value is undefined by design and fully overwritten).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

// A batch of R x C matrices: element (b, i, j) at data + b*bs + i*rs + j*cs.
template <typename T>
struct Mats {
  T* data;
  int64_t R, C;
  int64_t bs, rs, cs;
  T* at(int64_t b, int64_t i, int64_t j) const { return data + b * bs + i * rs + j * cs; }
};

// Packs src into a contiguous row-major buffer of D, converting.
template <typename D, typename S>
std::vector<D> pack(const Mats<S>& src, int64_t B) {
  std::vector<D> out(static_cast<size_t>(B * src.R * src.C));
  D* o = out.data();
  parallel_for_range(B * src.R, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(src.C, 1)),
                     [&](int64_t r0, int64_t r1) {
                       for (int64_t r = r0; r < r1; ++r) {
                         const int64_t b = r / src.R, i = r % src.R;
                         D* row = o + r * src.C;
                         for (int64_t j = 0; j < src.C; ++j) row[j] = convert<D>(*src.at(b, i, j));
                       }
                     });
  return out;
}

// Writes a contiguous row-major buffer into dst, converting.
template <typename D, typename S>
void unpack(const Mats<D>& dst, const S* src, int64_t B) {
  parallel_for_range(B * dst.R, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(dst.C, 1)),
                     [&](int64_t r0, int64_t r1) {
                       for (int64_t r = r0; r < r1; ++r) {
                         const int64_t b = r / dst.R, i = r % dst.R;
                         const S* row = src + r * dst.C;
                         for (int64_t j = 0; j < dst.C; ++j) *dst.at(b, i, j) = convert<D>(row[j]);
                       }
                     });
}

// How Eigen can see one operand: row-major or column-major with a leading
// dimension, or neither (then it is packed first).
enum class Order { kRow, kCol, kPack };
struct Layout {
  Order order;
  int64_t ld;
};

template <typename T>
Layout classify(const Mats<T>& m) {
  const int64_t R = m.R, C = m.C;
  if ((m.cs == 1 || C == 1) && (R == 1 || m.rs >= std::max<int64_t>(C, 1))) {
    return {Order::kRow, R == 1 ? std::max<int64_t>(C, 1) : m.rs};
  }
  if ((m.rs == 1 || R == 1) && (C == 1 || m.cs >= std::max<int64_t>(R, 1))) {
    return {Order::kCol, C == 1 ? std::max<int64_t>(R, 1) : m.cs};
  }
  return {Order::kPack, 0};
}

template <typename T, int O>
using ConstMap = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, O>, Eigen::Unaligned,
                            Eigen::OuterStride<>>;
template <typename T, int O>
using MutMap =
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, O>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <typename T, int OA, int OB, int OC>
void eigen_gemm(const T* a, int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t m, int64_t n,
                int64_t k) {
  ConstMap<T, OA> A(a, m, k, Eigen::OuterStride<>(lda));
  ConstMap<T, OB> B(b, k, n, Eigen::OuterStride<>(ldb));
  MutMap<T, OC> C(c, m, n, Eigen::OuterStride<>(ldc));
  C.noalias() = A * B;
}

template <typename T, int OA, int OB>
auto pick_c(Order oc) {
  return oc == Order::kRow ? &eigen_gemm<T, OA, OB, Eigen::RowMajor> : &eigen_gemm<T, OA, OB, Eigen::ColMajor>;
}
template <typename T, int OA>
auto pick_b(Order ob, Order oc) {
  return ob == Order::kRow ? pick_c<T, OA, Eigen::RowMajor>(oc) : pick_c<T, OA, Eigen::ColMajor>(oc);
}
template <typename T>
auto pick_gemm(Order oa, Order ob, Order oc) {
  return oa == Order::kRow ? pick_b<T, Eigen::RowMajor>(ob, oc) : pick_b<T, Eigen::ColMajor>(ob, oc);
}

// Below this many multiply-adds a product runs on the calling thread.
inline constexpr int64_t kInlineMacs = int64_t{1} << 18;

// out = a @ b for T = float or double, any layouts.
template <typename T>
void gemm_batched(int64_t B, int64_t M, int64_t N, int64_t K, Mats<T> a, Mats<T> b, Mats<T> c) {
  // f32 products of useful size go to oneDNN's sgemm, which is on par with
  // torch.mm where Eigen reaches about half (figures in gemm_dnnl.cc), on
  // the same oneTBB threads. A layout sgemm declines leaves every item to
  // the Eigen path below.
  if constexpr (std::is_same_v<T, float>) {
    if (M * N * K >= kDnnlMinMacs &&
        dnnl_sgemm_batched(B, M, N, K, {a.data, a.bs, a.rs, a.cs}, {b.data, b.bs, b.rs, b.cs},
                           {c.data, c.bs, c.rs, c.cs})) {
      return;
    }
  }
  std::vector<T> a_buf, b_buf, c_buf;
  Layout la = classify(a), lb = classify(b), lc = classify(c);
  if (la.order == Order::kPack) {
    a_buf = pack<T>(a, B);
    a = Mats<T>{a_buf.data(), M, K, M * K, K, 1};
    la = {Order::kRow, std::max<int64_t>(K, 1)};
  }
  if (lb.order == Order::kPack) {
    b_buf = pack<T>(b, B);
    b = Mats<T>{b_buf.data(), K, N, K * N, N, 1};
    lb = {Order::kRow, std::max<int64_t>(N, 1)};
  }
  Mats<T> c_final = c;
  if (lc.order == Order::kPack) {
    c_buf.resize(static_cast<size_t>(B * M * N));
    c = Mats<T>{c_buf.data(), M, N, M * N, N, 1};
    lc = {Order::kRow, std::max<int64_t>(N, 1)};
  }
  auto gemm = pick_gemm<T>(la.order, lb.order, lc.order);

  // Tasks: (batch, row block, column block).
  const double macs = static_cast<double>(B) * M * N * K;
  const int64_t threads = macs <= kInlineMacs ? 1 : max_threads();
  int64_t row_blocks = 1, col_blocks = 1;
  if (B < threads) {
    // Cut each product into about threads / B blocks, p row blocks times q
    // column blocks, as square as the matrix allows (each task packs its
    // rows of a and columns of b, so squarer blocks pack less), with
    // blocks of at least kMinBlock rows and columns.
    constexpr int64_t kMinBlock = 32;
    const int64_t want = (threads + B - 1) / B;
    double best = -1;
    for (int64_t p = 1; p <= want; ++p) {
      const int64_t q = want / p;
      if (p * q != want) continue;
      if ((p > 1 && M / p < kMinBlock) || (q > 1 && N / q < kMinBlock)) continue;
      // Work per packed element: larger is better.
      const double bm = static_cast<double>(M) / p, bn = static_cast<double>(N) / q;
      const double score = bm * bn / (bm + bn);
      if (score > best) {
        best = score;
        row_blocks = p;
        col_blocks = q;
      }
    }
    if (best < 0) {  // too small to cut evenly: cut the larger side only
      if (M >= N) row_blocks = std::clamp<int64_t>(M / kMinBlock, 1, want);
      else col_blocks = std::clamp<int64_t>(N / kMinBlock, 1, want);
    }
  }
  const int64_t rows_per = (M + row_blocks - 1) / row_blocks;
  const int64_t cols_per = (N + col_blocks - 1) / col_blocks;
  auto task = [&](int64_t t) {
    const int64_t cb = t % col_blocks;
    const int64_t rb = (t / col_blocks) % row_blocks;
    const int64_t bi = t / (col_blocks * row_blocks);
    const int64_t r0 = rb * rows_per, r1 = std::min(M, r0 + rows_per);
    const int64_t c0 = cb * cols_per, c1 = std::min(N, c0 + cols_per);
    if (r0 >= r1 || c0 >= c1) return;
    gemm(a.at(bi, r0, 0), la.ld, b.at(bi, 0, c0), lb.ld, c.at(bi, r0, c0), lc.ld, r1 - r0, c1 - c0, K);
  };
  const int64_t ntasks = B * row_blocks * col_blocks;
  if (threads == 1) {
    for (int64_t t = 0; t < ntasks; ++t) task(t);
  } else {
    parallel_for_each(ntasks, task);
  }
  if (!c_buf.empty()) unpack(c_final, c_buf.data(), B);
}

// Integers and bool: int64 accumulation, wrapping.
template <typename T>
void int_bmm(int64_t B, int64_t M, int64_t N, int64_t K, const Mats<T>& a, const Mats<T>& b,
             const Mats<T>& c) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(N * K, 1));
  parallel_for_range(B * M, grain, [&](int64_t r0, int64_t r1) {
    std::vector<uint64_t> acc(static_cast<size_t>(N));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t bi = r / M, i = r % M;
      std::fill(acc.begin(), acc.end(), uint64_t{0});
      for (int64_t k = 0; k < K; ++k) {
        const uint64_t aik = static_cast<uint64_t>(convert<int64_t>(*a.at(bi, i, k)));
        const T* brow = b.at(bi, k, 0);
        uint64_t* __restrict accp = acc.data();
        if (b.cs == 1) {
          for (int64_t j = 0; j < N; ++j) accp[j] += aik * static_cast<uint64_t>(convert<int64_t>(brow[j]));
        } else {
          for (int64_t j = 0; j < N; ++j) {
            accp[j] += aik * static_cast<uint64_t>(convert<int64_t>(brow[j * b.cs]));
          }
        }
      }
      for (int64_t j = 0; j < N; ++j) *c.at(bi, i, j) = convert<T>(static_cast<int64_t>(acc[j]));
    }
  });
}

template <typename T>
Mats<T> mats(const Tensor& t) {
  return Mats<T>{static_cast<T*>(t.data_ptr()), t.sizes()[1], t.sizes()[2],
                 t.strides()[0],                t.strides()[1], t.strides()[2]};
}

void bmm_kernel(const KernelContext&, Tensor& out, const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.dim() == 3 && b.dim() == 3 && out.dim() == 3, ValueError,
                "bmm: the cpu kernel needs 3-D tensors, got out ", describe(out), ", a ", describe(a), ", b ",
                describe(b));
  const int64_t B = a.sizes()[0], M = a.sizes()[1], K = a.sizes()[2], N = b.sizes()[2];
  TESSERA_CHECK(b.sizes()[0] == B && b.sizes()[1] == K && out.sizes() == Shape({B, M, N}), ValueError,
                "bmm: shapes do not match: out ", describe(out), ", a ", describe(a), ", b ", describe(b));
  TESSERA_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype(), TypeError,
                "bmm: the cpu kernel needs one dtype, got out ", describe(out), ", a ", describe(a), ", b ",
                describe(b));
  if (out.numel() == 0) return;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Mats<T> mc = mats<T>(out);
    if (K == 0) {  // empty sums
      const T zero = convert<T>(0);
      parallel_for_range(B * M, std::max<int64_t>(1, kElementwiseGrain / N), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t j = 0; j < N; ++j) *mc.at(r / M, r % M, j) = zero;
        }
      });
      return;
    }
    const Mats<T> ma = mats<T>(a), mb = mats<T>(b);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      gemm_batched<T>(B, M, N, K, ma, mb, mc);
    } else if constexpr (is_half_v<T>) {
      std::vector<float> fa = pack<float>(ma, B), fb = pack<float>(mb, B);
      std::vector<float> fc(static_cast<size_t>(B * M * N));
      gemm_batched<float>(B, M, N, K, Mats<float>{fa.data(), M, K, M * K, K, 1},
                          Mats<float>{fb.data(), K, N, K * N, N, 1}, Mats<float>{fc.data(), M, N, M * N, N, 1});
      unpack(mc, fc.data(), B);
    } else {
      int_bmm<T>(B, M, N, K, ma, mb, mc);
    }
  });
}

}  // namespace

void register_bmm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Bmm>(type, &bmm_kernel);
}

}  // namespace tessera::cpu
