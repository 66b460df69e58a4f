// For the cases a registered Vulkan kernel does not handle (a dtype its
// shader lacks, a rank beyond its push constants, a device without 8/16/
// 64-bit shader types): runs the op on the host exactly as the runtime's
// CPU fallback would (dispatch.h), counted as a fallback of that op and
// refused with NotImplementedError when the fallback is disabled.
// Registration is per op, not per dtype, so a kernel cannot decline.
#pragma once

#include <utility>

#include "runtime/ops/dispatch.h"

namespace tessera::vulkan {

template <typename Op, typename... Args>
void run_on_host(const KernelContext& ctx, Args&&... args) {
  ::tessera::detail::run_kernel_on_host<Op>(ctx.device, std::forward<Args>(args)...);
}

}  // namespace tessera::vulkan
