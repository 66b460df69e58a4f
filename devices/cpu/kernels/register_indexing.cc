// Registers the CPU kernels of the indexing family (defined in the
// indexing_*.cc files beside this one).
#include "devices/cpu/kernels/kernels.h"

namespace tessera::cpu {

void register_indexing_gather_scatter_kernels(KernelRegistry& registry, DeviceType type);
void register_indexing_sort_kernels(KernelRegistry& registry, DeviceType type);
void register_indexing_fill_kernels(KernelRegistry& registry, DeviceType type);

void register_indexing_kernels(KernelRegistry& registry, DeviceType type) {
  register_indexing_gather_scatter_kernels(registry, type);
  register_indexing_sort_kernels(registry, type);
  register_indexing_fill_kernels(registry, type);
}

}  // namespace tessera::cpu
