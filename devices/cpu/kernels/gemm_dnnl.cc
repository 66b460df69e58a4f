// f32 GEMM on oneDNN's dnnl_sgemm (Debian's libdnnl 2.6.3), threaded by
// oneTBB.
//
// Why oneDNN: the Bmm kernel's Eigen path reaches about half of a tuned
// BLAS on this machine (/work/shared/PERF_NOTES.md), while torch.mm calls
// a tuned JIT GEMM. oneDNN's sgemm is one, AVX-512 where the CPU has it
// (picked at run time), and oneDNN also gives the convolution primitive
// that PyTorch's CPU conv2d uses.
//
// Why oneTBB: with its own OpenMP threads (libgomp), oneDNN's team keeps
// spinning after each sgemm (about 4 ms of CPU measured after a 512^3
// call), so the oneTBB op that follows it in a model (GELU, attention,
// layer norm) runs on about one core. Every sgemm call here runs on one
// thread (its OpenMP team size set to 1) inside a oneTBB task, as
// nn_attention.cc's tile GEMMs already did. Each product is cut into
// blocks, one call each: sgemm packs its own rows of op(a) and columns of
// op(b) per call, so the grid is the one that packs the least (row blocks
// when m >= n on 2 threads), with no more blocks than threads and at
// least 2^18 multiply-adds per block; products below 2^21 are one call on
// the calling thread. Batches spread their products over the threads.
// Measured on this 2-core AVX-512 Xeon (shared, so medians of interleaved
// runs; OpenMP sgemm before, oneTBB after):
//   all-MiniLM-L6-v2 (bench/bench_embedded.py's sentences, batch 32, 9
//   rounds): 143 -> 174 sentences/s against sentence-transformers' 159
//   (0.90x -> 1.10x); one sentence 6.9 -> 5.6 ms (theirs 10.0).
//   bench/compare_torch.py, ratio to torch.matmul (5 runs): n=512 1.07 ->
//   1.05, n=1024 0.98 -> 0.99, n=2048 1.03 -> 1.01.
//   Single products, ms: [2048, 384] x [384, 1536] 6.28 -> 5.87; [24, 384]
//   x [384, 1152] 0.087 -> 0.077; 8 x [128, 64] x [64, 128] 0.066 ->
//   0.055; [1, 4096] x [4096, 4096] 1.18 either way. Products near 2^21
//   multiply-adds called back to back lose the task start (128^3: 0.014
//   -> 0.018), which OpenMP's spinning team hides.
//   bench/bench_bridge.py's MLP training step, tessera alone: 153 -> 174
//   steps/s (torch alone 155).
// oneDNN's convolution primitives (conv_forward.cc, conv_backward.cc) keep
// OpenMP, which they parallelize inside: bench_bridge.py's ResNet-18 step
// (tessera alone) ran within its noise with OMP_WAIT_POLICY=PASSIVE
// (373-419 ms spinning, 400-406 ms passive), so their spinning costs the
// oneTBB ops after them little there.
//
// A transposed a ('T': a weight gradient's dY^T X, whose K is the batch
// and whose dY is the wide one) costs oneDNN a repacking of a; when a is
// the larger operand, the transposed problem c^T = b^T a^T repacks the
// smaller b instead, and c comes back through one transpose. Measured
// again with the oneTBB blocks, [2048, 4096]^T-stored a x [4096, 512]:
// 25.6 ms swapped, 31.2 ms as given.
//
// On an AVX2-only machine oneDNN's sgemm runs one layout of a row-major b
// at about half speed (b_layout_is_slow below): those calls take b's first
// 4 columns apart. (An AVX-512 machine with DNNL_MAX_CPU_ISA=AVX2 did not
// show it, so the emulation is no stand-in for a real AVX2 CPU.)
#include "devices/cpu/kernels/gemm_dnnl.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include <oneapi/dnnl/dnnl.h>

#include "devices/cpu/kernels/parallel.h"

namespace tessera::cpu {

namespace {

// Multiply-adds per block at least (a product of less than twice this is
// one call on the calling thread): below, a second thread costs more
// (starting its task, packing b again) than it saves.
constexpr int64_t kMinTaskMacs = int64_t{1} << 18;

// Products below this many multiply-adds are one call, on the calling
// thread, whatever the workers are doing. The choice must depend on the
// shape alone: oneDNN's sgemm sums K in an order that depends on the
// call's m and n on some ISAs, so a product split into blocks and the same
// product in one call can differ in their last bits (on a 2-core AVX2
// EPYC, [64, 512] x [512, 32] and [512, 32] x [32, 64] with a transposed
// b did). Splitting these only while the oneTBB workers were awake, as
// this file once did, made the bits depend on timing there. Measured on
// that machine, unsplit against split: ./dev demo's classifier (products
// of 2^17 to 2^20 multiply-adds) 18.5-19.6 against 18.9-21.1 ms per 20
// steps; bench_embedded's batch-1 sentence 8.7-9.0 against 8.7-11.4 ms.
// (On a 2-core AVX-512 Xeon, splitting back-to-back ones had taken that
// sentence from 9.3-10.6 to 8.1 ms.)
constexpr int64_t kMinSplitMacs = int64_t{1} << 21;
static_assert(kMinSplitMacs >= 2 * kMinTaskMacs);

// Block boundaries fall on multiples of this many rows or columns, and a
// cut block has at least as many: 16 floats are one cache line, so column
// blocks of a c whose rows start on cache lines share none.
constexpr int64_t kBlockAlign = 16;

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

// One sgemm call, row-major: c (m x n, row stride ldc) = op(a) op(b),
// op(x) = x for 'N' and x^T for 'T', ld the stored row stride.
struct Sgemm {
  char ta, tb;
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;

  int64_t macs() const { return m * n * k; }
  // Rows [r0, r1) of c, from the same rows of op(a).
  Sgemm rows(int64_t r0, int64_t r1) const {
    Sgemm p = *this;
    p.m = r1 - r0;
    p.a = ta == 'N' ? a + r0 * lda : a + r0;
    p.c = c + r0 * ldc;
    return p;
  }
  // Columns [c0, c1) of c, from the same columns of op(b).
  Sgemm cols(int64_t c0, int64_t c1) const {
    Sgemm p = *this;
    p.n = c1 - c0;
    p.b = tb == 'N' ? b + c0 : b + c0 * ldb;
    p.c = c + c0;
    return p;
  }
};

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Whether oneDNN runs its AVX2 sgemm kernels here (no AVX-512 ones).
bool dnnl_avx2_kernels() {
  static const bool avx2 = [] {
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return isa == dnnl_cpu_isa_avx2 || isa == dnnl_cpu_isa_avx2_vnni;
  }();
  return avx2;
}

// oneDNN 2.6's AVX2 sgemm is slow on one layout of b: row-major ('N'),
// 32-byte aligned, with a row stride of a multiple of 256 floats, for 32 to
// 256 rows of c. Measured on a 2-core AVX2 EPYC, one thread, k = 1024,
// aligned against b moved by 4 floats: m = 128, n = 1024: 5.94 against
// 3.52 ms; m = 64, n = 3072: 9.32 against 4.88; n = 768: 1.07x; m = 16 or
// 384, and n = 1000: no gain or a loss. There a call for the first 4
// columns takes the misalignment and the rest reads b + 4 (the MLP
// benchmark's dY @ W, [128, 1024] x [1024, 1024]: 3.01 -> 1.7 ms on 2
// threads). The old workaround, always on, cost 4-12% on AVX-512 machines,
// where these kernels do not run.
bool b_layout_is_slow(const Sgemm& p) {
  return p.tb == 'N' && p.m >= 32 && p.m <= 256 && p.n > 64 && p.ldb % 256 == 0 &&
         reinterpret_cast<uintptr_t>(p.b) % 32 == 0 && dnnl_avx2_kernels();
}

// The same slow layout hurts large products whole: on 2 threads a row-major
// b with a row stride that is a multiple of 256 floats ran [512, 512] x
// [512, 512] in 2.78 ms against 1.58 with 16 floats of padding per row,
// [512, 1024] x [1024, 1024] in 13.4 against 7.2, [1024, 512] x [512, 512]
// in 5.0 against 3.2 (the cut above does not help there). Products of at
// least kPadBMinRows rows of c read a copy of b with padded rows: the copy
// is k x n, against m x k x n multiply-adds; with fewer rows it costs
// about what it saves ([128, 1024] x [1024, 1024]: 2.09 ms cut, 1.61 with
// an already padded b, plus about 0.4 for the copy).
constexpr int64_t kPadBMinRows = 384;

bool pad_b_first(const Sgemm& p) {
  return p.tb == 'N' && p.m >= kPadBMinRows && p.n > 64 && p.ldb % 256 == 0 &&
         dnnl_avx2_kernels();
}

// b (k x n, row stride ldb) copied with a row stride that is not a multiple
// of 256 floats, into `storage` (left uninitialized: every value read is
// copied); returns the copy's first element (64-byte aligned) and sets ld.
const float* padded_copy(const float* b, int64_t k, int64_t n, int64_t ldb,
                         std::unique_ptr<float[]>& storage, int64_t& ld) {
  ld = round_up(n, kBlockAlign);
  if (ld % 256 == 0) ld += kBlockAlign;
  storage.reset(new float[static_cast<size_t>(k * ld + kBlockAlign)]);
  float* dst = storage.get();
  dst += (kBlockAlign - reinterpret_cast<uintptr_t>(dst) / sizeof(float) % kBlockAlign) %
         kBlockAlign;
  parallel_for_range(k, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t r = begin; r < end; ++r) {
                         std::copy_n(b + r * ldb, n, dst + r * ld);
                       }
                     });
  return dst;
}

// Runs p on the calling thread alone.
bool run_alone(const Sgemm& p) {
  auto call = [](const Sgemm& q) {
    return tessera::cpu::sgemm_on_this_thread(q.ta, q.tb, q.m, q.n, q.k, q.a, q.lda, q.b, q.ldb,
                                              0.0f, q.c, q.ldc) == dnnl_success;
  };
  if (b_layout_is_slow(p)) return call(p.cols(0, 4)) && call(p.cols(4, p.n));
  return call(p);
}

// A product cut into row_blocks x col_blocks blocks of rows_per x cols_per
// (the last ones in each direction may be shorter).
struct Grid {
  int64_t row_blocks, col_blocks;
  int64_t rows_per, cols_per;
  int64_t blocks() const { return row_blocks * col_blocks; }
};

// The grid of at most `tasks` blocks for an m x n x k product that packs
// the least. Each block's sgemm packs its rows of op(a) and its columns of
// op(b), so p row blocks by q column blocks pack q m k + p k n elements in
// all: on 2 threads, row blocks when m >= n, column blocks otherwise.
Grid choose_grid(int64_t m, int64_t n, int64_t tasks) {
  for (int64_t t = tasks; t > 1; --t) {
    int64_t best_p = 0;
    double best_cost = std::numeric_limits<double>::infinity();
    for (int64_t p = 1; p <= t; ++p) {
      const int64_t q = t / p;
      if (p * q != t || (p > 1 && m < p * kBlockAlign) || (q > 1 && n < q * kBlockAlign)) {
        continue;
      }
      const double cost = static_cast<double>(q) * m + static_cast<double>(p) * n;
      if (cost < best_cost) {
        best_cost = cost;
        best_p = p;
      }
    }
    if (best_p == 0) continue;  // too narrow for t blocks: try fewer
    const int64_t p = best_p, q = t / best_p;
    const int64_t rows_per = p == 1 ? m : round_up((m + p - 1) / p, kBlockAlign);
    const int64_t cols_per = q == 1 ? n : round_up((n + q - 1) / q, kBlockAlign);
    // Rounding up may leave a last block empty: count the ones in use.
    return {(m + rows_per - 1) / rows_per, (n + cols_per - 1) / cols_per, rows_per, cols_per};
  }
  return {1, 1, m, n};
}

// The batch's products (product i is `first` with its operands moved by i
// times the batch strides), as oneTBB tasks of one sgemm call each.
bool run_batch(const Sgemm& first, int64_t batch, int64_t a_bs, int64_t b_bs, int64_t c_bs) {
  auto product = [&](int64_t i) {
    Sgemm s = first;
    s.a += i * a_bs;
    s.b += i * b_bs;
    s.c += i * c_bs;
    return s;
  };
  const int64_t threads = max_threads();
  const int64_t macs = first.macs();
  const int64_t work = batch * macs;
  if (threads <= 1 || work < kMinSplitMacs) {
    bool ok = true;
    for (int64_t i = 0; i < batch && ok; ++i) ok = run_alone(product(i));
    return ok;
  }
  // Products are cut only where whole ones would leave threads idle: fewer
  // products than threads, or a last round that only some threads run (3
  // products on 2 threads run as 6 halves, 3 per thread, not in 2 rounds).
  const int64_t balance = threads / std::gcd(batch, threads);
  const int64_t per_product =
      batch >= 8 * threads ? 1 : std::clamp<int64_t>(macs / kMinTaskMacs, 1, balance);
  const Grid grid = choose_grid(first.m, first.n, per_product);
  std::atomic<bool> ok{true};
  parallel_for_each(batch * grid.blocks(), [&](int64_t task) {
    const int64_t block = task % grid.blocks();
    const int64_t r0 = (block / grid.col_blocks) * grid.rows_per;
    const int64_t c0 = (block % grid.col_blocks) * grid.cols_per;
    const Sgemm s = product(task / grid.blocks())
                        .rows(r0, std::min(first.m, r0 + grid.rows_per))
                        .cols(c0, std::min(first.n, c0 + grid.cols_per));
    if (!run_alone(s)) ok.store(false, std::memory_order_relaxed);
  });
  return ok.load();
}

}  // namespace

DnnlOnThisThread::DnnlOnThisThread() : team_(omp_get_max_threads()) {
  if (team_ != 1) omp_set_num_threads(1);
}

DnnlOnThisThread::~DnnlOnThisThread() {
  if (team_ != 1) omp_set_num_threads(team_);
}

int sgemm_on_this_thread(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                         int64_t ldc) {
  const DnnlOnThisThread one_thread;
  return dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void match_dnnl_threads() {
  const int want = max_threads();
  if (omp_get_max_threads() != want) omp_set_num_threads(want);
}

bool dnnl_sgemm_batched(int64_t batch, int64_t m, int64_t n, int64_t k,
                        MatrixBatch<const float> a, MatrixBatch<const float> b,
                        MatrixBatch<float> c) {
  Sgemm s;
  if (!operand_layout(m, k, a.row_stride, a.col_stride, s.ta, s.lda) ||
      !operand_layout(k, n, b.row_stride, b.col_stride, s.tb, s.ldb)) {
    return false;
  }
  if (!(c.col_stride == 1 || n == 1) || !(m == 1 || c.row_stride >= n)) return false;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = a.data;
  s.b = b.data;
  s.c = c.data;
  s.ldc = std::max(m == 1 ? n : c.row_stride, n);
  // A transposed a, the larger operand (see the header): c^T = b^T a^T
  // into a buffer, then transposed into c.
  if (s.ta == 'T' && s.tb == 'N' && m >= 2 * n && n >= 64 && s.macs() >= (int64_t{1} << 28)) {
    std::vector<float> ct(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < batch; ++i) {
      const Sgemm swapped{'T', 'N', n, m, k, s.b + i * b.batch_stride, s.ldb,
                          s.a + i * a.batch_stride, s.lda, ct.data(), m};
      if (!run_batch(swapped, 1, 0, 0, 0)) return false;
      transpose_into(ct.data(), n, m, s.c + i * c.batch_stride, s.ldc);
    }
    return true;
  }
  if (pad_b_first(s) && (batch == 1 || b.batch_stride == 0)) {  // one b to copy
    std::unique_ptr<float[]> storage;
    s.b = padded_copy(s.b, k, n, s.ldb, storage, s.ldb);
    return run_batch(s, batch, a.batch_stride, 0, c.batch_stride);
  }
  return run_batch(s, batch, a.batch_stride, b.batch_stride, c.batch_stride);
}

}  // namespace tessera::cpu
