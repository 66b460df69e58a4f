// Registers the CPU kernels of the nn family (defined in the
// conv_*.cc and nn_*.cc files beside this one).
#include "devices/cpu/kernels/kernels.h"

namespace tessera::cpu {

void register_conv_forward_kernels(KernelRegistry& registry, DeviceType type);   // conv_forward.cc
void register_conv_backward_kernels(KernelRegistry& registry, DeviceType type);  // conv_backward.cc
void register_pool_kernels(KernelRegistry& registry, DeviceType type);           // nn_pool.cc
void register_embedding_loss_kernels(KernelRegistry& registry, DeviceType type); // nn_embedding_loss.cc
void register_attention_kernels(KernelRegistry& registry, DeviceType type);      // nn_attention.cc

void register_nn_kernels(KernelRegistry& registry, DeviceType type) {
  register_conv_forward_kernels(registry, type);
  register_conv_backward_kernels(registry, type);
  register_pool_kernels(registry, type);
  register_embedding_loss_kernels(registry, type);
  register_attention_kernels(registry, type);
}

}  // namespace tessera::cpu
