// vec_rows.h built for AVX-512 (16 floats a vector; see BUILD for
// the flags). Everything here is called only after cpu_isa.h's
// cpu_has_avx512() said yes, and every symbol it emits carries "avx512" in
// its name (tools/check_isa.py allows AVX-512 code only in such functions).
#include "devices/cpu/kernels/avx512/vec_rows_avx512.h"

#include "devices/cpu/kernels/vec_rows.h"

#if !defined(TESSERA_CPU_VEC_512)
#error "vec_rows_avx512.cc must be built with TESSERA_CPU_VEC_512 (devices/cpu/BUILD)"
#endif

namespace tessera::cpu {

void unary_row_avx512(kernels::UnaryOp op, const float* x, float* y, int64_t n) {
  vec::unary_row(op, x, y, n);
}

void gradient_row_avx512(kernels::PointwiseBinaryOp op, const float* g, const float* x, float* y,
                         int64_t n) {
  vec::gradient_row(op, g, x, y, n);
}

}  // namespace tessera::cpu
