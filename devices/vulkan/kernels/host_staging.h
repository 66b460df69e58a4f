// For the cases a registered Vulkan kernel does not handle (a dtype its
// shader lacks, a rank beyond its push constants, a device without 8/16/
// 64-bit shader types): runs the op on the host exactly as the runtime's
// CPU fallback would (dispatch.h), counted as a fallback of that op and
// refused with NotImplementedError when the fallback is disabled.
// Registration is per op, not per dtype, so a kernel cannot decline.
#pragma once

#include <tuple>
#include <utility>

#include "runtime/ops/dispatch.h"

namespace tessera::vulkan {

template <typename Op, typename... Args>
void run_on_host(const KernelContext& ctx, Args&&... args) {
  Device host = host_device();
  auto host_fn = KernelRegistry::instance().lookup<Op>(host.type);
  if (!host_fn) detail::throw_no_kernel(Op::name, ctx.device);
  detail::note_cpu_fallback(Op::name, ctx.device);
  auto host_args = std::make_tuple(detail::to_host_arg(args, host)...);
  KernelContext host_ctx{host, current_stream(host).native()};
  std::apply([&](auto&... a) { host_fn(host_ctx, a...); }, host_args);
  using Params = typename detail::kernel_params<typename Op::Fn>::type;
  auto originals = std::forward_as_tuple(args...);
  [&]<size_t... I>(std::index_sequence<I...>) {
    (detail::copy_back<std::tuple_element_t<I, Params>>(std::get<I>(originals),
                                                        std::get<I>(host_args)),
     ...);
  }(std::index_sequence_for<Args...>{});
}

}  // namespace tessera::vulkan
