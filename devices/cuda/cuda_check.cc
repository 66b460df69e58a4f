#include "devices/cuda/cuda_check.h"

#include <string>

#include "devices/cuda/cuda_context.h"
#include "runtime/core/error.h"

namespace tessera::cuda {

bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t error, const char* call, int index) {
  // A non-sticky error stays as the thread's last error; clear it so the
  // next unrelated check does not report it again.
  cudaGetLastError();
  const std::string message = "cuda:" + std::to_string(index) + ": " + call + " failed: " +
                              cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  if (error == cudaErrorMemoryAllocation) {
    throw OutOfMemoryError(message);
  }
  if (is_sticky(error)) mark_failed(index, message);
  throw DeviceError(message);
}

void check_launch(const char* kernel, int index) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) throw_cuda_error(error, kernel, index);
}

}  // namespace tessera::cuda
