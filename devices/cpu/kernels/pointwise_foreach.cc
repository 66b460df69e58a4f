// The multi-tensor pointwise kernel on the CPU: the entries of a list run
// as tasks on the thread pool, each on this device's own single-tensor
// kernel of its family (run_pointwise_entry). Optimizers update hundreds
// of tensors of mixed sizes; one at a time, a small tensor (below the
// elementwise grain) runs on one thread while the other cores idle. Large
// entries still split across threads inside their kernel (oneTBB nests
// the loops).
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

void foreach_pointwise_kernel(const KernelContext& ctx, const PointwiseOpCode& code,
                              std::vector<PointwiseEntry>& entries) {
  int64_t total = 0;
  for (const PointwiseEntry& e : entries) total += e.out.numel();
  parallel_for_each_sized(static_cast<int64_t>(entries.size()), total, [&](int64_t i) {
    run_pointwise_entry(ctx.device, code, entries[static_cast<size_t>(i)]);
  });
}

}  // namespace

void register_pointwise_foreach_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::ForeachPointwise>(type, &foreach_pointwise_kernel);
}

}  // namespace tessera::cpu
