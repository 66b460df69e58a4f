// The multi-tensor norm kernel on the CPU: the entries of a list run as
// tasks on the thread pool, each on this device's ReduceExt kernel
// (run_norm_entry). clip_grad_norm_ takes the norm of every gradient, most
// of them small (biases, norms' weights); one at a time, each would keep
// one core busy while the others wait.
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

void foreach_norm_kernel(const KernelContext& ctx, kernels::ReduceExtOp op,
                         const std::vector<Tensor>& inputs, std::vector<Tensor>& outs) {
  int64_t total = 0;
  for (const Tensor& t : inputs) total += t.numel();
  parallel_for_each_sized(static_cast<int64_t>(inputs.size()), total, [&](int64_t i) {
    const auto k = static_cast<size_t>(i);
    run_norm_entry(ctx.device, op, outs[k], inputs[k]);
  });
}

}  // namespace

void register_reduction_foreach_norm_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachNorm>(type, &foreach_norm_kernel);
}

}  // namespace tessera::cpu
