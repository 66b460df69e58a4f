// REAL as an integer type, for the pooling bodies (pool_max.glsl,
// pool_avg_forward.glsl) on integer tensors: int with INT_REAL_32 defined,
// else int64_t (which needs 64-bit shader types). Integers have no NaN;
// the lowest value stands for -infinity, and division truncates toward
// zero, as C++'s. Include after buffers.glsl.
#ifndef TESSERA_REAL_GLSL
#define TESSERA_REAL_GLSL

#ifdef INT_REAL_32
#define REAL int
#define Reals Ints
#define REAL_NEG_INF int(0x80000000u)
#else
#define REAL int64_t
#define Reals Int64s
#define REAL_NEG_INF int64_t(0x8000000000000000UL)
#endif
bool real_is_nan(REAL v) { return false; }
#endif  // TESSERA_REAL_GLSL
