// The template devices this process uses, found once, and each one's
// state: its memory and its streams.
//
// A vendor's context holds what its driver gives per device (a device
// handle, queues, memory heaps). Like the CUDA and Vulkan devices', the
// list is created on first use and never destroyed: the caching allocator
// and tensors in static objects may free device memory during exit, after
// any destructor here would have run.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "devices/template/template_memory.h"
#include "devices/template/template_stream.h"
#include "runtime/device/device_interface.h"

namespace tessera::template_device {

class TemplateContext {
 public:
  // template:<index> is the emulated driver's device <ordinal>.
  TemplateContext(int index, int ordinal, size_t memory_capacity);
  TemplateContext(const TemplateContext&) = delete;
  TemplateContext& operator=(const TemplateContext&) = delete;

  int index() const { return index_; }
  int ordinal() const { return ordinal_; }
  TemplateMemory& memory() { return memory_; }

  // Created on first use, so that a process that only links the device
  // (every bridge process does) starts no thread for it.
  TemplateStream& default_stream();
  TemplateStream* create_stream();
  // Waits (bounded) for the stream's queued work, then stops its worker;
  // a stream whose work does not finish is leaked with a warning instead.
  // The default stream lives as long as the process.
  void destroy_stream(TemplateStream* stream);
  // The stream behind a handle the runtime passes; DeviceError naming `op`
  // when it is not a live stream of this device.
  TemplateStream& stream(NativeStream handle, const char* op);

  // Waits for every stream of the device, raising the first failure.
  void synchronize_all(const char* op);
  // Waits for every stream without raising (raw_free must not throw on
  // someone else's failure); false when one did not drain in time.
  bool wait_all_idle();

 private:
  std::string stream_name(int id) const;
  std::vector<std::shared_ptr<TemplateStream>> created_streams() const;

  const int index_;
  const int ordinal_;
  TemplateMemory memory_;
  std::once_flag default_once_;
  std::unique_ptr<TemplateStream> default_stream_;
  mutable std::mutex streams_mutex_;
  // The created streams by handle. Shared, so that a wait in progress
  // keeps a stream alive while another thread destroys it.
  std::unordered_map<TemplateStream*, std::shared_ptr<TemplateStream>> streams_;
  std::vector<std::shared_ptr<TemplateStream>> hung_streams_;  // never freed
  int next_stream_id_ = 1;
};

// The devices, in runtime index order (TESSERA_TEMPLATE_DEVICE_COUNT and
// TESSERA_TEMPLATE_DEVICES, read on the first call). Never throws.
int device_count();
// template:<index> for `op`: ValueError when it does not exist.
TemplateContext& context(int index, const char* op);

}  // namespace tessera::template_device
