#include "devices/cuda/cuda_wait.h"

#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include "devices/cuda/cuda_check.h"
#include "devices/cuda/cuda_context.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"

namespace tessera::cuda {
namespace {

std::chrono::seconds wait_limit() {
  static const std::chrono::seconds limit(
      env_integer("TESSERA_CUDA_WAIT_LIMIT", 300, 1, std::numeric_limits<long>::max()));
  return limit;
}

}  // namespace

void wait_until_done(CudaContext& device, const std::function<cudaError_t()>& query,
                     const char* what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + wait_limit();
  // Short waits (most synchronizations) yield for up to 1 ms; then the
  // thread sleeps 50 us between polls so a long wait costs no core.
  const auto spin_until = start + std::chrono::milliseconds(1);
  while (true) {
    const cudaError_t status = query();
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) throw_cuda_error(status, what, device.index());
    const auto now = Clock::now();
    if (now >= deadline) {
      const std::string cause = "cuda:" + std::to_string(device.index()) + ": timed out after " +
                                std::to_string(wait_limit().count()) + " s waiting for " + what +
                                " (a hung kernel, or a stream waiting on an event never recorded; "
                                "TESSERA_CUDA_WAIT_LIMIT sets the limit)";
      device.mark_failed(cause);
      throw DeviceError(cause);
    }
    if (now < spin_until) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace tessera::cuda
