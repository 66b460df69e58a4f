// Registers the CPU kernels of the reduction family (defined in the
// reduction_*.cc and normalization_*.cc files beside this one).
#include "devices/cpu/kernels/kernels.h"

namespace tessera::cpu {

void register_reduction_ext_kernels(KernelRegistry& registry, DeviceType type);
void register_reduction_scan_kernels(KernelRegistry& registry, DeviceType type);
void register_reduction_foreach_norm_kernels(KernelRegistry& registry, DeviceType type);
void register_normalization_softmax_kernels(KernelRegistry& registry, DeviceType type);
void register_normalization_layer_norm_kernels(KernelRegistry& registry, DeviceType type);
void register_normalization_batch_norm_kernels(KernelRegistry& registry, DeviceType type);

void register_reduction_kernels(KernelRegistry& registry, DeviceType type) {
  register_reduction_ext_kernels(registry, type);
  register_reduction_scan_kernels(registry, type);
  register_reduction_foreach_norm_kernels(registry, type);
  register_normalization_softmax_kernels(registry, type);
  register_normalization_layer_norm_kernels(registry, type);
  register_normalization_batch_norm_kernels(registry, type);
}

}  // namespace tessera::cpu
