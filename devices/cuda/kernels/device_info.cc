#include "devices/cuda/kernels/device_info.h"

#include "devices/cuda/cuda_context.h"

namespace tessera::cuda {

int multiprocessors(const KernelContext& ctx) {
  return context(ctx.device.index, "launch").properties().multiProcessorCount;
}

}  // namespace tessera::cuda
