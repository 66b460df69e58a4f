// The memory of one template device: host allocations standing in for
// device memory, under a fixed capacity.
//
// A real device's driver hands out addresses in its own memory and fails
// when that memory is full. This class does both with the host heap: it
// counts the bytes handed out against `capacity` (so the caching
// allocator's out-of-memory path, free the cache and retry, then raise,
// runs as on a GPU) and remembers every live allocation (so raw_free can
// refuse a pointer that is not one, as a driver would).
//
// Nothing outside devices/template may read these bytes directly even
// though the host could: the device says host_accessible = false, so the
// runtime and the bridge move data only through copy_async.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

namespace tessera::template_device {

class TemplateMemory {
 public:
  // Alignment of every allocation: what the widest vector load of any
  // kernel needs, and what the caching allocator assumes of segments.
  static constexpr size_t kAlignment = 64;

  explicit TemplateMemory(size_t capacity) : capacity_(capacity) {}
  TemplateMemory(const TemplateMemory&) = delete;
  TemplateMemory& operator=(const TemplateMemory&) = delete;

  // nbytes of memory, or nullptr when the capacity (or the host) has no
  // room for them: out of memory is a result here, not an error.
  void* allocate(size_t nbytes);
  // Frees ptr; false when ptr is not a live allocation of this memory.
  bool free(void* ptr);

  size_t capacity() const { return capacity_; }
  size_t used() const;

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, size_t> live_;  // allocation -> bytes counted
  size_t used_ = 0;
};

}  // namespace tessera::template_device
