// TESSERA_HOST_DEVICE marks a function that both host code and CUDA device
// code call: __host__ __device__ under nvcc, nothing for a host compiler.
#pragma once

#if defined(__CUDACC__)
#define TESSERA_HOST_DEVICE __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#endif
