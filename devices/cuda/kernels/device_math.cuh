// Math on the compute types (float, double) under one name each, so that
// functors written once for C = float or double call the right CUDA
// function (expf or exp, ...). Accuracy is CUDA's (at most 2 ulp for the
// float transcendentals), well inside the conformance tolerances.
#pragma once

#include <cuda_runtime.h>

namespace tessera::cuda::dm {

#define TESSERA_DM_UNARY(name, f32, f64)                                   \
  __device__ __forceinline__ float name(float x) { return f32(x); }       \
  __device__ __forceinline__ double name(double x) { return f64(x); }

TESSERA_DM_UNARY(exp, expf, ::exp)
TESSERA_DM_UNARY(expm1, expm1f, ::expm1)
TESSERA_DM_UNARY(log, logf, ::log)
TESSERA_DM_UNARY(log1p, log1pf, ::log1p)
TESSERA_DM_UNARY(log2, log2f, ::log2)
TESSERA_DM_UNARY(sqrt, sqrtf, ::sqrt)
TESSERA_DM_UNARY(sin, sinf, ::sin)
TESSERA_DM_UNARY(cos, cosf, ::cos)
TESSERA_DM_UNARY(tan, tanf, ::tan)
TESSERA_DM_UNARY(tanh, tanhf, ::tanh)
TESSERA_DM_UNARY(erf, erff, ::erf)
TESSERA_DM_UNARY(floor, floorf, ::floor)
TESSERA_DM_UNARY(ceil, ceilf, ::ceil)
TESSERA_DM_UNARY(rint, rintf, ::rint)  // half to even, as std::nearbyint
TESSERA_DM_UNARY(trunc, truncf, ::trunc)
TESSERA_DM_UNARY(fabs, fabsf, ::fabs)
TESSERA_DM_UNARY(log10, log10f, ::log10)
TESSERA_DM_UNARY(sinh, sinhf, ::sinh)
TESSERA_DM_UNARY(cosh, coshf, ::cosh)
TESSERA_DM_UNARY(asin, asinf, ::asin)
TESSERA_DM_UNARY(acos, acosf, ::acos)
TESSERA_DM_UNARY(atan, atanf, ::atan)
TESSERA_DM_UNARY(asinh, asinhf, ::asinh)
TESSERA_DM_UNARY(acosh, acoshf, ::acosh)
TESSERA_DM_UNARY(atanh, atanhf, ::atanh)
TESSERA_DM_UNARY(exp2, exp2f, ::exp2)
#undef TESSERA_DM_UNARY

#define TESSERA_DM_BINARY(name, f32, f64)                                          \
  __device__ __forceinline__ float name(float x, float y) { return f32(x, y); }   \
  __device__ __forceinline__ double name(double x, double y) { return f64(x, y); }

TESSERA_DM_BINARY(pow, powf, ::pow)
TESSERA_DM_BINARY(atan2, atan2f, ::atan2)
TESSERA_DM_BINARY(fmod, fmodf, ::fmod)
TESSERA_DM_BINARY(copysign, copysignf, ::copysign)
#undef TESSERA_DM_BINARY

__device__ __forceinline__ float fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fma(double a, double b, double c) { return ::fma(a, b, c); }

template <typename C>
__device__ __forceinline__ bool isnan(C x) {
  return x != x;
}
__device__ __forceinline__ bool isinf(float x) { return ::isinf(x); }
__device__ __forceinline__ bool isinf(double x) { return ::isinf(x); }
__device__ __forceinline__ bool isfinite(float x) { return ::isfinite(x); }
__device__ __forceinline__ bool isfinite(double x) { return ::isfinite(x); }

// NaN-propagating maximum and minimum (torch.maximum / clamp semantics).
template <typename C>
__device__ __forceinline__ C nan_max(C a, C b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? b : a;
}
template <typename C>
__device__ __forceinline__ C nan_min(C a, C b) {
  if (a != a) return a;
  if (b != b) return b;
  return b < a ? b : a;
}

}  // namespace tessera::cuda::dm
