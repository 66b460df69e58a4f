// The vendor contract: what a device implements so that the allocator,
// streams, op front ends, bindings, bridge, conformance tests and benchmarks
// work on it unchanged. One implementation per device type; `index`
// arguments select one physical device of that type.
//
// Streams and events are opaque handles owned by the device. A null
// NativeStream is never passed: default_stream() gives the device's own.
// All methods may be called from any thread.
#pragma once

#include <cstddef>
#include <string_view>

#include "runtime/device/device_properties.h"

namespace tessera {

class KernelRegistry;

using NativeStream = void*;
using NativeEvent = void*;

enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

class DeviceInterface {
 public:
  virtual ~DeviceInterface() = default;

  // -- Enumeration. A machine without the hardware reports 0, never throws.
  virtual std::string_view type_name() const = 0;
  virtual int device_count() = 0;
  virtual DeviceProperties properties(int index) = 0;
  virtual MemoryInfo memory_info(int index) = 0;

  // -- Raw memory. raw_allocate returns nullptr when the device is out of
  // memory (the caching allocator then frees its cache and retries); other
  // failures throw DeviceError.
  virtual void* raw_allocate(int index, size_t nbytes) = 0;
  virtual void raw_free(int index, void* ptr) = 0;

  // -- Copies, ordered on stream after the work already enqueued there.
  // The host side of a host<->device copy must stay valid until the stream
  // passes the copy; copy_sync() waits for it.
  virtual void copy_async(CopyKind kind, void* dst, const void* src,
                          size_t nbytes, int index, NativeStream stream) = 0;

  // -- Page-locked host memory (optional): host memory the device copies to
  // and from without staging it, for the runtime's pinned host allocator
  // (alloc/pinned_host_allocator.h), which caches it. nullptr means the
  // device has none (the default) or none is left.
  virtual void* raw_allocate_host(size_t /*nbytes*/) { return nullptr; }
  virtual void raw_free_host(void* /*ptr*/) {}

  // -- Copies between two devices of this type (optional), ordered on
  // `stream` of dst_index after the work enqueued there; the caller has
  // completed the work that writes src. Returns false, copying nothing,
  // when the device cannot (the default): the runtime then copies through
  // the host.
  virtual bool copy_peer_async(int /*dst_index*/, void* /*dst*/, int /*src_index*/,
                               const void* /*src*/, size_t /*nbytes*/, NativeStream /*stream*/) {
    return false;
  }

  // -- Streams.
  virtual NativeStream default_stream(int index) = 0;
  virtual NativeStream create_stream(int index) = 0;
  virtual void destroy_stream(int index, NativeStream stream) = 0;
  virtual bool query_stream(int index, NativeStream stream) = 0;  // all done?
  virtual void synchronize_stream(int index, NativeStream stream) = 0;

  // -- Events.
  virtual NativeEvent create_event(int index) = 0;
  virtual void destroy_event(int index, NativeEvent event) = 0;
  virtual void record_event(int index, NativeEvent event, NativeStream stream) = 0;
  virtual void stream_wait_event(int index, NativeStream stream, NativeEvent event) = 0;
  virtual bool query_event(int index, NativeEvent event) = 0;
  virtual void synchronize_event(int index, NativeEvent event) = 0;
  // Milliseconds between two recorded, completed events.
  virtual double elapsed_ms(int index, NativeEvent start, NativeEvent end) = 0;

  virtual void synchronize_device(int index) = 0;

  // -- Kernels: the device adds its kernels to the registry once, when the
  // device type is registered.
  virtual void register_kernels(KernelRegistry& registry) = 0;

  // Convenience: copy_async then synchronize_stream.
  void copy_sync(CopyKind kind, void* dst, const void* src, size_t nbytes,
                 int index, NativeStream stream) {
    copy_async(kind, dst, src, nbytes, index, stream);
    synchronize_stream(index, stream);
  }
};

}  // namespace tessera
