// Runs a few kernels on vulkan:0, writes the pipeline cache and prints
// "path=<file> loaded=<bytes> saved=<bytes>" for
// vulkan_pipeline_cache_test.sh; prints "no-vulkan" without a device.
#include <cstdio>

#include "devices/vulkan/vulkan_device.h"
#include "runtime/tessera.h"

int main() {
  using namespace tessera;
  DeviceInterface* iface = DeviceRegistry::instance().find("vulkan");
  if (iface == nullptr || iface->device_count() == 0) {
    std::printf("no-vulkan\n");
    return 0;
  }
  Device gpu = Device::parse("vulkan:0");
  Tensor a = ones({1000}, TensorOptions(DType::kF32, gpu));
  Tensor b = add(a, a).to(host_device());
  if (static_cast<const float*>(b.data_ptr())[999] != 2.0f) {
    std::printf("wrong result\n");
    return 1;
  }
  vulkan::VulkanPipelineCacheInfo info = vulkan::save_pipeline_cache(0);
  std::printf("path=%s loaded=%zu saved=%zu\n", info.path.c_str(), info.loaded_bytes,
              info.saved_bytes);
  return 0;
}
