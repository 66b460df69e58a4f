// CUDA runtime errors as the runtime's DeviceError (or OutOfMemoryError),
// naming the call and the device. A sticky error (one after which the CUDA
// context is unusable: an illegal address, a failed launch) also marks the
// device failed, so that later ops on it fail at once with the cause.
#pragma once

#include <cuda_runtime_api.h>

namespace tessera::cuda {

// True for the errors that corrupt the device's CUDA context.
bool is_sticky(cudaError_t error);

// Throws DeviceError "cuda:<index>: <call> failed: <name>: <description>".
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, int index);

// Raises the error a kernel launch left (a bad configuration at once, a
// fault inside the kernel at a later call).
void check_launch(const char* kernel, int index);

}  // namespace tessera::cuda

// Checks a CUDA runtime call made for device `index` (a runtime index,
// cuda:<index>).
#define TESSERA_CUDA_CHECK(call, index)                                    \
  do {                                                                     \
    const cudaError_t tessera_cuda_error_ = (call);                        \
    if (tessera_cuda_error_ != cudaSuccess) {                              \
      ::tessera::cuda::throw_cuda_error(tessera_cuda_error_, #call, index); \
    }                                                                      \
  } while (0)
