// f32 GEMM on oneDNN's dnnl_sgemm (Debian's libdnnl 2.6.3, OpenMP).
//
// Why: the Bmm kernel's Eigen path reaches about half of a tuned BLAS on
// this machine (see /work/shared/PERF_NOTES.md: Eigen 73-149 GFLOP/s on 2
// threads where a tuned GEMM reaches 130-190), while torch.mm calls a
// tuned JIT GEMM (MKL/oneDNN). oneDNN's sgemm is such a JIT AVX-512
// GEMM with its own packing and 2-thread partitioning. Measured here
// (2 cores shared with other jobs, so noisy; best of 10, 2 threads), same
// run side by side, GFLOP/s dnnl_sgemm vs torch.mm: n=512 172 vs 97, n=1024
// 52 vs 53, n=2048 55 vs 54 (and in a quieter run 92 vs 53 at 2048): on
// par with torch or better. oneDNN also gives the convolution primitive
// that PyTorch's own CPU conv2d uses, so one library serves both.
#include "devices/cpu/kernels/gemm_dnnl.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "devices/cpu/kernels/parallel.h"

namespace tessera::cpu {

namespace {

// How sgemm can read a row-major operand of R x C: 'N' when rows are
// contiguous (ld = row stride), 'T' when columns are (ld = column
// stride); a size-1 dim may take any stride.
bool operand_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, char& trans,
                    int64_t& ld) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) {
    trans = 'N';
    ld = rows == 1 ? cols : rs;
    if (ld < cols) ld = cols;
    return true;
  }
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows)) {
    trans = 'T';
    ld = cols == 1 ? rows : cs;
    if (ld < rows) ld = rows;
    return true;
  }
  return false;
}

// c (m x n, row stride ldc) = the transpose of t (n x m, contiguous), in
// 32 x 32 blocks so that both sides stream through cache lines.
void transpose_into(const float* t, int64_t n, int64_t m, float* c, int64_t ldc) {
  constexpr int64_t kBlock = 32;
  const int64_t row_blocks = (m + kBlock - 1) / kBlock;
  parallel_for_range(row_blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t rb = begin; rb < end; ++rb) {
      const int64_t i0 = rb * kBlock, i1 = std::min(m, i0 + kBlock);
      for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
        const int64_t j1 = std::min(n, j0 + kBlock);
        for (int64_t i = i0; i < i1; ++i) {
          for (int64_t j = j0; j < j1; ++j) c[i * ldc + j] = t[j * m + i];
        }
      }
    }
  });
}

// True when oneDNN's kernels run with AVX-512 on this CPU (they choose at
// run time; the library itself is built for x86-64-v3).
bool sgemm_has_avx512() {
  static const bool yes = dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx512_core;
  return yes;
}

}  // namespace

void match_dnnl_threads() {
  const int want = max_threads();
  if (omp_get_max_threads() != want) omp_set_num_threads(want);
}

bool dnnl_sgemm_strided(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs,
                        int64_t a_cs, const float* b, int64_t b_rs, int64_t b_cs, float* c,
                        int64_t c_rs, int64_t c_cs) {
  char ta, tb;
  int64_t lda, ldb;
  if (!operand_layout(m, k, a_rs, a_cs, ta, lda) || !operand_layout(k, n, b_rs, b_cs, tb, ldb)) {
    return false;
  }
  if (!(c_cs == 1 || n == 1) || !(m == 1 || c_rs >= n)) return false;
  const int64_t ldc = m == 1 ? n : c_rs;
  match_dnnl_threads();
  const int64_t ldc_ = ldc < n ? n : ldc;
  // Workaround, on AVX2 only: when b is row-major ('N') and 32-byte
  // aligned, as every tensor from the caching allocator is, oneDNN 2.6.3's
  // sgemm takes a slower path on an AVX2 machine for mid-size products; a b that is
  // not 32-byte aligned (malloc'd, as in our comparisons) takes the fast
  // one, on par with torch. Measured (2 threads, best of 30 x 10 calls,
  // quiet machine), n=512: aligned b 2.08 ms (129 GFLOP/s), b misaligned
  // by 16 bytes 1.54 ms (174), torch.mm 1.52-1.56 ms; a's and c's
  // alignment make no difference; at n=1024 neither does b's (12.1 ms
  // either way), nor at n=256/384 (0.18/0.61 ms either way). So for
  // products in (2^26, 512^3] multiply-adds, the first 4 columns go in a
  // call of their own and the rest start 16 bytes past b's alignment:
  // n=512 1.62 ms (166 GFLOP/s). Outside that window the split costs more
  // than it saves (n=1024 13.3 vs 12.1 ms; n=256/384 6-9% slower).
  // With AVX-512 the split is what costs: n=512 285 GFLOP/s split against
  // 343 unsplit (torch.mm 341-348), 2-core Xeon, quiet, two runs each.
  // A transposed a ('T': a weight gradient's dY^T X, whose K is the batch
  // and whose dY is the wide one) costs oneDNN a repacking of a; when a is
  // the larger operand, the transposed problem c^T = b^T a^T repacks the
  // smaller b instead, and c comes back through one transpose. Measured,
  // [2048, 4096] x [4096, 512]: 31.6 ms as given, 26.3 ms swapped with
  // the transpose (torch.mm 24.2 ms).
  if (ta == 'T' && tb == 'N' && m >= 2 * n && n >= 64 && m * n * k >= (int64_t{1} << 28)) {
    std::vector<float> ct(static_cast<size_t>(m * n));
    if (dnnl_sgemm('T', 'N', n, m, k, 1.0f, b, ldb, a, lda, 0.0f, ct.data(), m) != dnnl_success) {
      return false;
    }
    transpose_into(ct.data(), n, m, c, ldc_);
    return true;
  }
  constexpr int64_t kSplitCols = 4;
  if (tb == 'N' && n > 8 * kSplitCols && m * n * k > (int64_t{1} << 26) &&
      m * n * k <= (int64_t{1} << 27) &&
      reinterpret_cast<uintptr_t>(b) % 32 == 0 && !sgemm_has_avx512()) {
    return dnnl_sgemm(ta, tb, m, kSplitCols, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc_) ==
               dnnl_success &&
           dnnl_sgemm(ta, tb, m, n - kSplitCols, k, 1.0f, a, lda, b + kSplitCols, ldb, 0.0f,
                      c + kSplitCols, ldc_) == dnnl_success;
  }
  return dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc_) == dnnl_success;
}

}  // namespace tessera::cpu
