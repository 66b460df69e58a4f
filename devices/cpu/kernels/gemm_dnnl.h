// f32 GEMM through oneDNN's dnnl_sgemm (see gemm_dnnl.cc for why).
#pragma once

#include <cstdint>

namespace tessera::cpu {

// c = a @ b for one f32 product, each operand given by its row and column
// strides (elements). Returns false, computing nothing, when a layout is
// not one sgemm takes (an operand with neither unit row nor unit column
// stride, or c not row-major with unit column stride); the caller then
// takes its general path.
bool dnnl_sgemm_strided(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs,
                        int64_t a_cs, const float* b, int64_t b_rs, int64_t b_cs, float* c,
                        int64_t c_rs, int64_t c_cs);

// Sets the calling thread's OpenMP team size (oneDNN's threads) to the
// CPU kernels' thread count, so that TESSERA_NUM_THREADS caps oneDNN as it
// caps oneTBB. Cheap; call before each oneDNN call.
void match_dnnl_threads();

// Worth sending to sgemm: below this many multiply-adds the call overhead
// (OpenMP fork/join) costs more than it saves.
inline constexpr int64_t kDnnlMinMacs = int64_t{1} << 18;

}  // namespace tessera::cpu
