// A fake device for allocator and stream tests, registered as "fake_alloc".
//
// Memory is host memory with a configurable capacity: raw_allocate returns
// nullptr past it, as a real device does when it is full, so out-of-memory
// and the memory fraction can be tested. Streams do no work by themselves:
// a test "submits" work to a stream and later "completes" it, so events
// (which capture how much work was submitted when recorded) finish exactly
// when the test says. Raw allocate/free calls are counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/device/device_interface.h"
#include "runtime/stream/stream.h"

namespace tessera::testing {

class FakeDevice : public DeviceInterface {
 public:
  static constexpr size_t kDefaultCapacity = size_t{4} << 30;

  FakeDevice();
  ~FakeDevice() override;

  // -- Test controls.
  void set_capacity(size_t bytes);
  size_t capacity() const;
  size_t used_bytes() const;           // bytes currently raw-allocated
  int64_t live_allocations() const;    // raw allocations not yet freed
  int64_t raw_allocs() const;          // raw_allocate calls that succeeded
  int64_t raw_frees() const;
  void reset_counters();               // raw_allocs/raw_frees back to 0
  // Page-locked host memory: off (raw_allocate_host gives nullptr, as on a
  // device without it) until a test turns it on. Counted separately.
  void set_host_pinning(bool enabled);
  int64_t live_host_allocations() const;

  void submit_work(NativeStream stream);    // enqueue one unit of work
  void complete_stream(NativeStream stream);  // all submitted work done

  // -- DeviceInterface.
  std::string_view type_name() const override { return "fake_alloc"; }
  int device_count() override { return 1; }
  DeviceProperties properties(int index) override;
  MemoryInfo memory_info(int index) override;
  void* raw_allocate(int index, size_t nbytes) override;
  void raw_free(int index, void* ptr) override;
  void* raw_allocate_host(size_t nbytes) override;
  void raw_free_host(void* ptr) override;
  void copy_async(CopyKind kind, void* dst, const void* src, size_t nbytes, int index,
                  NativeStream stream) override;
  NativeStream default_stream(int index) override;
  NativeStream create_stream(int index) override;
  void destroy_stream(int index, NativeStream stream) override;
  bool query_stream(int index, NativeStream stream) override;
  void synchronize_stream(int index, NativeStream stream) override;
  NativeEvent create_event(int index) override;
  void destroy_event(int index, NativeEvent event) override;
  void record_event(int index, NativeEvent event, NativeStream stream) override;
  void stream_wait_event(int index, NativeStream stream, NativeEvent event) override;
  bool query_event(int index, NativeEvent event) override;
  void synchronize_event(int index, NativeEvent event) override;
  double elapsed_ms(int index, NativeEvent start, NativeEvent end) override;
  void synchronize_device(int index) override;
  void register_kernels(KernelRegistry& registry) override;

 private:
  struct FakeStream {
    uint64_t submitted = 0;
    uint64_t completed = 0;
  };
  struct FakeEvent {
    FakeStream* stream = nullptr;  // null until recorded
    uint64_t target = 0;           // stream's submitted count when recorded
  };
  void check_index(int index, const char* what) const;
  FakeStream* as_stream(NativeStream s, const char* what) const;

  mutable std::mutex mutex_;
  size_t capacity_ = kDefaultCapacity;
  size_t used_ = 0;
  int64_t raw_allocs_ = 0;
  int64_t raw_frees_ = 0;
  std::unordered_map<void*, size_t> live_;  // ptr -> bytes
  bool host_pinning_ = false;
  std::unordered_map<void*, size_t> live_host_;  // page-locked blocks
  std::vector<std::unique_ptr<FakeStream>> streams_;  // [0] is the default
};

// The registered instance and its device ("fake_alloc:0").
FakeDevice& fake_device();
Device fake_device_id();

}  // namespace tessera::testing
