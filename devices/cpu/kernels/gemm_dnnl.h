// f32 GEMM through oneDNN's dnnl_sgemm, threaded by oneTBB (see
// gemm_dnnl.cc for why).
#pragma once

#include <cstdint>

namespace tessera::cpu {

// A batch of f32 matrices: element (p, i, j) at
// data + p * batch_stride + i * row_stride + j * col_stride.
template <typename T>
struct MatrixBatch {
  T* data;
  int64_t batch_stride, row_stride, col_stride;
};

// c[p] = a[p] @ b[p] for p in [0, batch): a is m x k, b is k x n, c is
// m x n. Every product runs as single-threaded sgemm calls inside oneTBB
// tasks (the CPU kernels' threads). Returns false when a layout is not one
// sgemm takes (an operand with neither unit row nor unit column stride, or
// c not row-major with unit column stride), computing nothing, or when
// sgemm fails, leaving c partly written; the caller then computes all of
// c on its general path.
bool dnnl_sgemm_batched(int64_t batch, int64_t m, int64_t n, int64_t k,
                        MatrixBatch<const float> a, MatrixBatch<const float> b,
                        MatrixBatch<float> c);

// c [m, n] (row stride ldc) = op(a) op(b) + beta c, row-major operands,
// op(x) = x ('N') or x^T ('T'): one oneDNN sgemm on the calling thread
// alone. sgemm sizes its OpenMP team by the thread's omp_get_max_threads():
// 1 for the call, restored after (the same thread may run a oneDNN
// convolution next, which wants its team). For callers that have already
// spread their work over the oneTBB pool. Returns oneDNN's status
// (dnnl_status_t; 0, dnnl_success, when it succeeded).
int sgemm_on_this_thread(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                          int64_t ldc);

// Within its scope, oneDNN calls on this thread run on an OpenMP team of
// one (the size restored after): for oneDNN work the caller has already
// spread over the oneTBB pool.
class DnnlOnThisThread {
 public:
  DnnlOnThisThread();
  ~DnnlOnThisThread();
  DnnlOnThisThread(const DnnlOnThisThread&) = delete;
  DnnlOnThisThread& operator=(const DnnlOnThisThread&) = delete;

 private:
  int team_;
};

// Sets the calling thread's OpenMP team size (oneDNN's threads) to the
// CPU kernels' thread count, so that TESSERA_NUM_THREADS caps oneDNN's
// primitives (convolution) as it caps oneTBB. Cheap; call before each
// oneDNN primitive.
void match_dnnl_threads();

// Worth sending to sgemm rather than Eigen: products of at least this many
// multiply-adds. Set when sgemm ran on OpenMP, whose fork/join smaller
// products did not repay; single-threaded sgemm may pay below it (not
// re-tuned).
inline constexpr int64_t kDnnlMinMacs = int64_t{1} << 18;

}  // namespace tessera::cpu
