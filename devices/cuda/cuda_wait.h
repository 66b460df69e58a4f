// Bounded waits for the GPU. cudaStreamSynchronize and friends wait
// forever for a hung kernel; these poll instead (yielding first, for the
// latency of short waits, then sleeping) and raise DeviceError after
// TESSERA_CUDA_WAIT_LIMIT seconds (default 300), marking the device failed.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace tessera::cuda {

class CudaContext;

// Polls `query` (cudaStreamQuery or cudaEventQuery of one object) until it
// returns cudaSuccess. Another error is raised as that call's; the limit
// as a timeout naming `what`.
void wait_until_done(CudaContext& device, const std::function<cudaError_t()>& query,
                     const char* what);

}  // namespace tessera::cuda
