// The Vulkan implementation of the device interface (see vulkan_device.h
// for the design). Every call resolves its device index through the
// instance, which creates Vulkan on first use.
#include "devices/vulkan/vulkan_device.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "devices/vulkan/compute_pipelines.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/staging_pool.h"
#include "devices/vulkan/vulkan_context.h"
#include "devices/vulkan/vulkan_event.h"
#include "devices/vulkan/vulkan_instance.h"
#include "runtime/core/error.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::vulkan {
namespace {

// Staged host<->device copies move at most this much per staging buffer.
constexpr size_t kStagingChunkBytes = StagingPool::kMaxPooledBytes;

uint64_t address_of(const void* p) { return reinterpret_cast<uint64_t>(p); }

// Records one copy of nbytes between two buffers on stream, in stream order;
// keep_alive (a staging buffer) lives until the copy has completed.
void record_copy(VulkanStream& stream, VkBuffer from, VkDeviceSize from_offset, VkBuffer to,
                 VkDeviceSize to_offset, size_t nbytes, StagingBuffer keep_alive = StagingBuffer()) {
  stream.record(
      [&](VkCommandBuffer cb) {
        VkBufferCopy region{from_offset, to_offset, nbytes};
        vkCmdCopyBuffer(cb, from, to, 1, &region);
      },
      /*is_dispatch=*/false, std::move(keep_alive));
}

VulkanContext& context_of(int index, const char* op) {
  return VulkanInstance::get().context(index, op);
}

VulkanEvent* as_event(NativeEvent event, const char* op) {
  TESSERA_CHECK(event != nullptr, ValueError, "vulkan ", op, ": null event");
  return static_cast<VulkanEvent*>(event);
}

class VulkanDevice final : public DeviceInterface {
 public:
  std::string_view type_name() const override { return kDeviceTypeName; }
  int device_count() override { return VulkanInstance::get().device_count(); }

  DeviceProperties properties(int index) override {
    return context_of(index, "properties").properties();
  }

  MemoryInfo memory_info(int index) override {
    return context_of(index, "memory_info").memory().memory_info();
  }

  void* raw_allocate(int index, size_t nbytes) override {
    const uint64_t address = context_of(index, "raw_allocate").memory().allocate(nbytes);
    return reinterpret_cast<void*>(address);
  }

  // Like cudaFree, waits for the device first: work still queued may use
  // the buffer, and Vulkan objects must not be freed while in use.
  void raw_free(int index, void* ptr) override {
    if (ptr == nullptr) return;
    VulkanContext& context = context_of(index, "raw_free");
    context.synchronize_all("raw_free of device memory");
    context.memory().free(address_of(ptr));
  }

  // Pinned host memory: device 0's mapped host buffers, which its copies
  // read and write in place (VulkanMemory::allocate_host); none where its
  // memory is unified, or without a device.
  void* raw_allocate_host(size_t nbytes) override {
    if (nbytes == 0 || device_count() == 0) return nullptr;
    return context_of(0, "raw_allocate_host").memory().allocate_host(nbytes);
  }

  void raw_free_host(void* ptr) override {
    if (ptr == nullptr) return;
    context_of(0, "raw_free_host").memory().free_host(ptr);
  }

  void copy_async(CopyKind kind, void* dst, const void* src, size_t nbytes, int index,
                  NativeStream native) override {
    VulkanContext& context = context_of(index, "copy_async");
    VulkanStream& stream = context.stream(native, "copy_async");
    if (nbytes == 0) return;
    TESSERA_CHECK(dst != nullptr && src != nullptr, DeviceError, "vulkan copy_async: null ",
                  dst == nullptr ? "destination" : "source", " pointer for ", nbytes, " bytes");
    VulkanMemory& memory = context.memory();
    switch (kind) {
      case CopyKind::kHostToDevice: {
        BufferRange to = memory.resolve(address_of(dst), nbytes, "copy_async (destination)");
        // Unified memory with nothing queued before the copy: write
        // through the mapping, which is the copy done in stream order.
        if (to.mapped != nullptr && stream.idle()) {
          std::memcpy(to.mapped, src, nbytes);
          return;
        }
        // Pinned host memory of this device: the copy reads it in place.
        if (BufferRange host = memory.resolve_host(src, nbytes); host.buffer != VK_NULL_HANDLE) {
          record_copy(stream, host.buffer, host.offset, to.buffer, to.offset, nbytes);
          return;
        }
        // The host bytes are taken now, so the caller's buffer is free
        // as soon as this returns. Chunks of the staging pool's largest
        // pooled size: a larger copy reuses pooled buffers instead of
        // making and mapping one of its own (a 64 MiB copy ran at 1.3 GB/s
        // on lavapipe's staged path that way, 1.6 on NVIDIA's driver).
        for (size_t off = 0; off < nbytes; off += kStagingChunkBytes) {
          const size_t len = std::min(kStagingChunkBytes, nbytes - off);
          StagingBuffer staging = memory.make_staging(len);
          std::memcpy(staging.mapped(), static_cast<const char*>(src) + off, len);
          const VkBuffer from = staging.buffer();
          record_copy(stream, from, 0, to.buffer, to.offset + off, len, std::move(staging));
        }
        return;
      }
      case CopyKind::kDeviceToHost: {
        // The host needs the bytes: submit and wait for them (except into
        // pinned host memory, below).
        BufferRange from = memory.resolve(address_of(src), nbytes, "copy_async (source)");
        if (from.mapped != nullptr) {
          stream.synchronize("a device-to-host copy");
          std::memcpy(dst, from.mapped, nbytes);
          return;
        }
        // Pinned host memory of this device: the copy writes it in place,
        // in stream order, as cudaMemcpyAsync into pinned memory does (the
        // caller waits for the stream before reading it; copy_sync does).
        if (BufferRange host = memory.resolve_host(dst, nbytes); host.buffer != VK_NULL_HANDLE) {
          record_copy(stream, from.buffer, from.offset, host.buffer, host.offset, nbytes);
          return;
        }
        // In chunks of pooled staging buffers (as host-to-device), all
        // recorded before the one wait.
        std::vector<StagingBuffer> chunks;
        for (size_t off = 0; off < nbytes; off += kStagingChunkBytes) {
          const size_t len = std::min(kStagingChunkBytes, nbytes - off);
          chunks.push_back(memory.make_staging(len));
          record_copy(stream, from.buffer, from.offset + off, chunks.back().buffer(), 0, len);
        }
        stream.synchronize("a device-to-host copy");
        for (size_t i = 0; i < chunks.size(); ++i) {
          const size_t off = i * kStagingChunkBytes;
          std::memcpy(static_cast<char*>(dst) + off, chunks[i].mapped(),
                      std::min(kStagingChunkBytes, nbytes - off));
        }
        return;
      }
      case CopyKind::kDeviceToDevice: {
        BufferRange from = memory.resolve(address_of(src), nbytes, "copy_async (source)");
        BufferRange to = memory.resolve(address_of(dst), nbytes, "copy_async (destination)");
        record_copy(stream, from.buffer, from.offset, to.buffer, to.offset, nbytes);
        return;
      }
    }
  }

  NativeStream default_stream(int index) override {
    return context_of(index, "default_stream").default_stream();
  }
  NativeStream create_stream(int index) override {
    return context_of(index, "create_stream").create_stream();
  }
  void destroy_stream(int index, NativeStream stream) override {
    VulkanContext& context = context_of(index, "destroy_stream");
    context.destroy_stream(&context.stream(stream, "destroy_stream"));
  }
  bool query_stream(int index, NativeStream stream) override {
    VulkanContext& context = context_of(index, "query_stream");
    return context.stream(stream, "query_stream").query();
  }
  void synchronize_stream(int index, NativeStream stream) override {
    VulkanContext& context = context_of(index, "synchronize_stream");
    context.stream(stream, "synchronize_stream").synchronize("a stream");
  }

  NativeEvent create_event(int index) override {
    return new VulkanEvent(context_of(index, "create_event"));
  }
  void destroy_event(int index, NativeEvent event) override {
    context_of(index, "destroy_event");
    delete as_event(event, "destroy_event");
  }
  void record_event(int index, NativeEvent event, NativeStream stream) override {
    VulkanContext& context = context_of(index, "record_event");
    as_event(event, "record_event")->record(context.stream(stream, "record_event"));
  }
  void stream_wait_event(int index, NativeStream stream, NativeEvent event) override {
    VulkanContext& context = context_of(index, "stream_wait_event");
    as_event(event, "stream_wait_event")->block(context.stream(stream, "stream_wait_event"));
  }
  bool query_event(int index, NativeEvent event) override {
    context_of(index, "query_event");
    return as_event(event, "query_event")->query();
  }
  void synchronize_event(int index, NativeEvent event) override {
    context_of(index, "synchronize_event");
    as_event(event, "synchronize_event")->synchronize();
  }
  double elapsed_ms(int index, NativeEvent start, NativeEvent end) override {
    context_of(index, "elapsed_ms");
    return as_event(start, "elapsed_ms")->elapsed_ms(*as_event(end, "elapsed_ms"));
  }

  void synchronize_device(int index) override {
    context_of(index, "synchronize_device").synchronize_all("the device");
  }

  // Called from DeviceRegistry::register_device after the type is added.
  // Touches no Vulkan API: kernels are registered per type, devices come
  // later.
  void register_kernels(KernelRegistry& registry) override {
    register_all_kernels(registry, DeviceType::from_name(kDeviceTypeName));
  }
};

}  // namespace

VulkanDeviceInfo device_info(int index) {
  return VulkanInstance::get().context(index, "device_info").info();
}

VulkanMemoryStats memory_stats(int index) {
  return VulkanInstance::get().context(index, "memory_stats").memory().stats();
}

VulkanPipelineCacheInfo save_pipeline_cache(int index) {
  ComputePipelines& pipelines =
      VulkanInstance::get().context(index, "save_pipeline_cache").pipelines();
  VulkanPipelineCacheInfo info;
  info.saved_bytes = pipelines.save(/*force=*/true);
  info.path = pipelines.cache_file().path();
  info.loaded_bytes = pipelines.cache_file().loaded_bytes();
  return info;
}

void link() {}

}  // namespace tessera::vulkan

TESSERA_REGISTER_DEVICE(std::make_unique<tessera::vulkan::VulkanDevice>());
