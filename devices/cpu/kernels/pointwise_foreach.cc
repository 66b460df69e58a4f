// The multi-tensor pointwise kernel on the CPU: the entries of a list run
// as tasks on the thread pool, each on this device's own single-tensor
// kernel of its family. Optimizers update hundreds of tensors of mixed
// sizes; one at a time, a small tensor (below the elementwise grain) runs
// on one thread while the other cores idle. Large entries still split
// across threads inside their kernel (oneTBB nests the loops).
#include <type_traits>
#include <variant>

#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

// The family's kernel as registered for this device type.
template <typename Kernel>
typename Kernel::Fn own(const KernelContext& ctx) {
  auto fn = KernelRegistry::instance().lookup<Kernel>(ctx.device.type);
  TESSERA_CHECK(fn != nullptr, NotImplementedError, "foreach_pointwise: the ", Kernel::name,
                " kernel is not registered for ", ctx.device.to_string());
  return fn;
}

void foreach_pointwise_kernel(const KernelContext& ctx, const PointwiseOpCode& code,
                              std::vector<PointwiseEntry>& entries) {
  std::visit(
      [&](auto op) {
        using Op = decltype(op);
        const auto n = static_cast<int64_t>(entries.size());
        if constexpr (std::is_same_v<Op, kernels::BinaryOp>) {
          const auto fn = own<kernels::Binary>(ctx);
          parallel_for_each(n, [&](int64_t i) {
            PointwiseEntry& e = entries[static_cast<size_t>(i)];
            fn(ctx, op, e.out, e.a, e.b, e.s0);
          });
        } else if constexpr (std::is_same_v<Op, kernels::UnaryOp>) {
          const auto fn = own<kernels::Unary>(ctx);
          parallel_for_each(n, [&](int64_t i) {
            PointwiseEntry& e = entries[static_cast<size_t>(i)];
            fn(ctx, op, e.out, e.a, e.s0, e.s1);
          });
        } else if constexpr (std::is_same_v<Op, kernels::PointwiseBinaryOp>) {
          const auto fn = own<kernels::PointwiseBinary>(ctx);
          parallel_for_each(n, [&](int64_t i) {
            PointwiseEntry& e = entries[static_cast<size_t>(i)];
            fn(ctx, op, e.out, e.a, e.b, e.s0);
          });
        } else {
          const auto fn = own<kernels::Ternary>(ctx);
          parallel_for_each(n, [&](int64_t i) {
            PointwiseEntry& e = entries[static_cast<size_t>(i)];
            fn(ctx, op, e.out, e.a, e.b, e.c, e.s0);
          });
        }
      },
      code);
}

}  // namespace

void register_pointwise_foreach_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachPointwise>(type, &foreach_pointwise_kernel);
}

}  // namespace tessera::cpu
