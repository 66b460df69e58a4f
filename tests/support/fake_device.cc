#include "tests/support/fake_device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"

namespace tessera::testing {

namespace {
constexpr size_t kAlignment = 256;  // like a GPU allocation's alignment
}  // namespace

FakeDevice::FakeDevice() { streams_.push_back(std::make_unique<FakeStream>()); }

FakeDevice::~FakeDevice() {
  for (auto& [ptr, size] : live_) std::free(ptr);
}

void FakeDevice::set_capacity(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  capacity_ = bytes;
}

size_t FakeDevice::capacity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_;
}

size_t FakeDevice::used_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

int64_t FakeDevice::live_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(live_.size());
}

int64_t FakeDevice::raw_allocs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return raw_allocs_;
}

int64_t FakeDevice::raw_frees() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return raw_frees_;
}

void FakeDevice::reset_counters() {
  std::lock_guard<std::mutex> lock(mutex_);
  raw_allocs_ = 0;
  raw_frees_ = 0;
}

void FakeDevice::set_host_pinning(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  host_pinning_ = enabled;
}

int64_t FakeDevice::live_host_allocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(live_host_.size());
}

void* FakeDevice::raw_allocate_host(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!host_pinning_ || nbytes == 0) return nullptr;
  const size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, padded);
  if (p != nullptr) live_host_.emplace(p, nbytes);
  return p;
}

void FakeDevice::raw_free_host(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_host_.find(ptr);
  TESSERA_CHECK(it != live_host_.end(), DeviceError, "FakeDevice::raw_free_host: pointer ", ptr,
                " is not a live page-locked allocation of fake_alloc");
  live_host_.erase(it);
  std::free(ptr);
}

void FakeDevice::submit_work(NativeStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++as_stream(stream, "submit_work")->submitted;
}

void FakeDevice::complete_stream(NativeStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  FakeStream* s = as_stream(stream, "complete_stream");
  s->completed = s->submitted;
}

void FakeDevice::check_index(int index, const char* what) const {
  TESSERA_CHECK(index == 0, DeviceError, "FakeDevice::", what, ": no fake_alloc device ",
                index, " (1 device)");
}

FakeDevice::FakeStream* FakeDevice::as_stream(NativeStream s, const char* what) const {
  TESSERA_CHECK(s != nullptr, DeviceError, "FakeDevice::", what, ": null stream");
  return static_cast<FakeStream*>(s);
}

DeviceProperties FakeDevice::properties(int index) {
  check_index(index, "properties");
  DeviceProperties p;
  p.name = "fake allocator test device";
  p.vendor = "tessera tests";
  p.total_memory = capacity();
  p.compute_units = 1;
  p.host_accessible = true;
  return p;
}

MemoryInfo FakeDevice::memory_info(int index) {
  check_index(index, "memory_info");
  std::lock_guard<std::mutex> lock(mutex_);
  return MemoryInfo{capacity_ > used_ ? capacity_ - used_ : 0, capacity_};
}

void* FakeDevice::raw_allocate(int index, size_t nbytes) {
  check_index(index, "raw_allocate");
  std::lock_guard<std::mutex> lock(mutex_);
  if (nbytes == 0 || nbytes > capacity_ || used_ > capacity_ - nbytes) return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  const size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, padded);
  if (p == nullptr) return nullptr;
  live_.emplace(p, nbytes);
  used_ += nbytes;
  ++raw_allocs_;
  return p;
}

void FakeDevice::raw_free(int index, void* ptr) {
  check_index(index, "raw_free");
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  // A free of an unknown pointer is an allocator bug: fail loudly.
  TESSERA_CHECK(it != live_.end(), DeviceError, "FakeDevice::raw_free: pointer ", ptr,
                " is not a live raw allocation of fake_alloc:0");
  used_ -= it->second;
  live_.erase(it);
  std::free(ptr);
  ++raw_frees_;
}

void FakeDevice::copy_async(CopyKind, void* dst, const void* src, size_t nbytes, int index,
                            NativeStream stream) {
  check_index(index, "copy_async");
  std::memcpy(dst, src, nbytes);  // done at once, but counted as stream work
  submit_work(stream);
}

NativeStream FakeDevice::default_stream(int index) {
  check_index(index, "default_stream");
  std::lock_guard<std::mutex> lock(mutex_);
  return streams_.front().get();
}

NativeStream FakeDevice::create_stream(int index) {
  check_index(index, "create_stream");
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.push_back(std::make_unique<FakeStream>());
  return streams_.back().get();
}

// Streams are kept to the end (the runtime never destroys them anyway), so
// an event recorded on one can still be queried.
void FakeDevice::destroy_stream(int index, NativeStream) { check_index(index, "destroy_stream"); }

bool FakeDevice::query_stream(int index, NativeStream stream) {
  check_index(index, "query_stream");
  std::lock_guard<std::mutex> lock(mutex_);
  FakeStream* s = as_stream(stream, "query_stream");
  return s->completed >= s->submitted;
}

void FakeDevice::synchronize_stream(int index, NativeStream stream) {
  check_index(index, "synchronize_stream");
  complete_stream(stream);  // "waiting" runs the stream to its end
}

NativeEvent FakeDevice::create_event(int index) {
  check_index(index, "create_event");
  return new FakeEvent();
}

void FakeDevice::destroy_event(int index, NativeEvent event) {
  check_index(index, "destroy_event");
  delete static_cast<FakeEvent*>(event);
}

void FakeDevice::record_event(int index, NativeEvent event, NativeStream stream) {
  check_index(index, "record_event");
  TESSERA_CHECK(event != nullptr, DeviceError, "FakeDevice::record_event: null event");
  std::lock_guard<std::mutex> lock(mutex_);
  auto* e = static_cast<FakeEvent*>(event);
  e->stream = as_stream(stream, "record_event");
  e->target = e->stream->submitted;
}

void FakeDevice::stream_wait_event(int index, NativeStream, NativeEvent) {
  check_index(index, "stream_wait_event");  // nothing runs, so nothing to order
}

bool FakeDevice::query_event(int index, NativeEvent event) {
  check_index(index, "query_event");
  std::lock_guard<std::mutex> lock(mutex_);
  auto* e = static_cast<FakeEvent*>(event);
  return e == nullptr || e->stream == nullptr || e->stream->completed >= e->target;
}

void FakeDevice::synchronize_event(int index, NativeEvent event) {
  check_index(index, "synchronize_event");
  std::lock_guard<std::mutex> lock(mutex_);
  auto* e = static_cast<FakeEvent*>(event);
  if (e != nullptr && e->stream != nullptr) {
    e->stream->completed = std::max(e->stream->completed, e->target);
  }
}

double FakeDevice::elapsed_ms(int index, NativeEvent, NativeEvent) {
  check_index(index, "elapsed_ms");
  return 0.0;
}

void FakeDevice::synchronize_device(int index) {
  check_index(index, "synchronize_device");
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : streams_) s->completed = s->submitted;
}

void FakeDevice::register_kernels(KernelRegistry&) {}  // the fake runs no ops

namespace {

struct Registration {
  FakeDevice* device;
  DeviceType type;
};

// Registered on first use and, through the static below, at start-up.
Registration& registration() {
  static Registration r = [] {
    auto dev = std::make_unique<FakeDevice>();
    FakeDevice* raw = dev.get();
    DeviceType type = DeviceRegistry::instance().register_device(std::move(dev));
    return Registration{raw, type};
  }();
  return r;
}

[[maybe_unused]] const bool g_registered = (registration(), true);

}  // namespace

FakeDevice& fake_device() { return *registration().device; }

Device fake_device_id() { return Device{registration().type, 0}; }

}  // namespace tessera::testing
