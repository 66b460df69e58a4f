// Calls the kernel registered for an op on a device, or runs the op through
// the CPU fallback: tensor arguments are copied to the host device, the
// host kernel runs, and outputs (the `Tensor&` arguments) are copied back.
// Fallback calls are counted per op; TESSERA_DISABLE_CPU_FALLBACK=1 or
// set_cpu_fallback_enabled(false) turns them into NotImplementedError.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "runtime/core/tensor.h"
#include "runtime/device/fault_injection.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/stream/stream.h"

namespace tessera {

void set_cpu_fallback_enabled(bool enabled);
bool cpu_fallback_enabled();
// op name -> number of calls that ran through the CPU fallback.
std::map<std::string, int64_t> cpu_fallback_counts();
void reset_cpu_fallback_counts();

namespace detail {

// Throws NotImplementedError when the fallback is off, counts the call.
void note_cpu_fallback(const char* op, Device device);
[[noreturn]] void throw_no_kernel(const char* op, Device device);

template <typename T>
decltype(auto) to_host_arg(T&& arg, Device host) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, Tensor>) {
    return arg.defined() ? arg.to(host) : Tensor();
  } else {
    return std::forward<T>(arg);
  }
}

// Copies a host result back when the kernel's parameter is an output.
template <typename Param, typename Orig, typename Host>
void copy_back(Orig& orig, Host& host) {
  if constexpr (std::is_same_v<Param, Tensor&>) {
    if (orig.defined()) orig.copy_(host);
  }
}

template <typename Fn>
struct kernel_params;
template <typename R, typename... P>
struct kernel_params<R (*)(const KernelContext&, P...)> {
  using type = std::tuple<P...>;
};

}  // namespace detail

// For composite ops (written once from primitives): runs the device's own
// kernel for Op when it registered one (a fused override) and returns true;
// returns false otherwise, and the caller runs the composite. Never falls
// back to the CPU.
template <typename Op, typename... Args>
bool try_call_kernel(Device device, Args&&... args) {
  if (auto fn = KernelRegistry::instance().lookup<Op>(device.type)) {
    fault_injection::check_operation(device, Op::name);
    KernelContext ctx{device, current_stream(device).native()};
    if constexpr (std::is_same_v<decltype(fn(ctx, std::forward<Args>(args)...)), bool>) {
      return fn(ctx, std::forward<Args>(args)...);  // a kernel that may decline
    } else {
      fn(ctx, std::forward<Args>(args)...);
      return true;
    }
  }
  return false;
}

namespace detail {

// Runs Op's host kernel for a call on `device` (counted as a CPU fallback,
// NotImplementedError when the fallback is off): copies of every tensor
// argument on the host, the host kernel, then the kernel's outputs (its
// `Tensor&` parameters) copied back. call_kernel uses it for devices
// without a kernel for Op, device kernels for the cases they cannot run.
template <typename Op, typename... Args>
void run_kernel_on_host(Device device, Args&&... args) {
  Device host = host_device();
  auto host_fn = KernelRegistry::instance().lookup<Op>(host.type);
  if (!host_fn) throw_no_kernel(Op::name, device);
  note_cpu_fallback(Op::name, device);
  auto host_args = std::make_tuple(to_host_arg(args, host)...);
  KernelContext ctx{host, current_stream(host).native()};
  std::apply([&](auto&... a) { host_fn(ctx, a...); }, host_args);
  using Params = typename kernel_params<typename Op::Fn>::type;
  auto originals = std::forward_as_tuple(args...);
  [&]<size_t... I>(std::index_sequence<I...>) {
    (copy_back<std::tuple_element_t<I, Params>>(std::get<I>(originals), std::get<I>(host_args)),
     ...);
  }(std::index_sequence_for<Args...>{});
}

}  // namespace detail

template <typename Op, typename... Args>
void call_kernel(Device device, Args&&... args) {
  fault_injection::check_operation(device, Op::name);
  if (auto fn = KernelRegistry::instance().lookup<Op>(device.type)) {
    KernelContext ctx{device, current_stream(device).native()};
    fn(ctx, std::forward<Args>(args)...);
    return;
  }
  detail::run_kernel_on_host<Op>(device, std::forward<Args>(args)...);
}

}  // namespace tessera
