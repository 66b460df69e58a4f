#include "devices/template/kernels/kernels.h"

#include <utility>

#include "devices/template/template_context.h"

namespace tessera::template_device {

// A new kernel is one more line here. Which ops to write first: the
// conformance suite's "native coverage" line and cpu_fallback_counts()
// say which ops still run on the host, and how often.
void register_all_kernels(KernelRegistry& registry, DeviceType type) {
  register_fill_kernel(registry, type);
  register_copy_kernel(registry, type);
  register_binary_kernel(registry, type);
  register_bmm_kernel(registry, type);
}

void launch(const KernelContext& ctx, const char* op, TemplateStream::Task task) {
  context(ctx.device.index, op).stream(ctx.stream, op).enqueue(std::move(task));
}

}  // namespace tessera::template_device
