// Registers the CPU kernels of the pointwise family (defined in the
// pointwise_*.cc files beside this one).
#include "devices/cpu/kernels/kernels.h"

namespace tessera::cpu {

void register_pointwise_unary_kernels(KernelRegistry& registry, DeviceType type);
void register_pointwise_binary_kernels(KernelRegistry& registry, DeviceType type);
void register_pointwise_ternary_kernels(KernelRegistry& registry, DeviceType type);
void register_pointwise_foreach_kernels(KernelRegistry& registry, DeviceType type);
void register_special_function_kernels(KernelRegistry& registry, DeviceType type);

void register_pointwise_kernels(KernelRegistry& registry, DeviceType type) {
  register_pointwise_unary_kernels(registry, type);
  register_pointwise_binary_kernels(registry, type);
  register_pointwise_ternary_kernels(registry, type);
  register_pointwise_foreach_kernels(registry, type);
  register_special_function_kernels(registry, type);
}

}  // namespace tessera::cpu
