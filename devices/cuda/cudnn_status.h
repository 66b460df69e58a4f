// Whether the CUDA device's convolutions can use cuDNN, and how often they
// have (kernels/conv2d_cudnn.h has the policy; cudnn_library.h loads it).
// For tests and diagnostics: users switch cuDNN on with TESSERA_CUDA_CUDNN=1.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::cuda {

// True when libcudnn.so.9 (or TESSERA_CUDNN_LIBRARY) loads and is cuDNN 9
// or later; loads it on the first call.
bool cudnn_available();
// Why it is not available ("" when it is).
const std::string& cudnn_unavailable_reason();

// cuDNN convolution routines run so far in this process (each forward,
// backward-data and backward-filter call counts one).
int64_t cudnn_convolution_calls();

}  // namespace tessera::cuda
