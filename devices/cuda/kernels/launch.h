// Launch geometry and checks shared by the kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "devices/cuda/cuda_check.h"
#include "runtime/ops/kernel_context.h"

namespace tessera::cuda {

inline cudaStream_t stream_of(const KernelContext& ctx) {
  return static_cast<cudaStream_t>(ctx.stream);
}

inline constexpr int kBlockSize = 256;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for `work` items of `per_block` each, for grid-stride loops:
// enough to fill the GPU several times over, never more than the work.
inline unsigned grid_for(int64_t work, int64_t per_block = kBlockSize) {
  constexpr int64_t kMaxBlocks = int64_t{1} << 20;
  return static_cast<unsigned>(std::clamp<int64_t>(ceil_div(work, per_block), 1, kMaxBlocks));
}

// Checks the launch that just happened (configuration errors now, faults
// inside the kernel at the next synchronizing call).
inline void after_launch(const KernelContext& ctx, const char* kernel) {
  check_launch(kernel, ctx.device.index);
}

}  // namespace tessera::cuda
