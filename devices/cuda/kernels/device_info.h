// What the kernels need to know about the GPU they launch on.
#pragma once

#include "runtime/ops/kernel_context.h"

namespace tessera::cuda {

// Streaming multiprocessors of ctx's device (launch sizing).
int multiprocessors(const KernelContext& ctx);

}  // namespace tessera::cuda
