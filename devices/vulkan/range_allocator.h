// Hands out byte ranges [offset, offset + size) of a fixed capacity, best
// fit, merging neighbours on free: the sub-allocator inside one Vulkan
// memory block (vulkan_memory.h). Knows nothing of Vulkan, so it is tested
// on its own. Not thread-safe; VulkanMemory locks around it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace tessera::vulkan {

class RangeAllocator {
 public:
  explicit RangeAllocator(uint64_t capacity);

  // The offset of a free range of `size` bytes (size > 0), or nullopt
  // when no free range is that large. Best fit: the smallest free range
  // that holds it, lowest offset among equals, so large ranges survive.
  std::optional<uint64_t> allocate(uint64_t size);
  // Returns a range that allocate handed out, merging it with free
  // neighbours. ValueError when it overlaps a free range (a double free).
  void free(uint64_t offset, uint64_t size);

  uint64_t capacity() const { return capacity_; }
  uint64_t free_bytes() const { return free_bytes_; }
  bool empty() const { return free_bytes_ == capacity_; }  // nothing handed out
  uint64_t largest_free() const;

 private:
  void insert_free(uint64_t offset, uint64_t size);
  void erase_free(std::map<uint64_t, uint64_t>::iterator it);

  uint64_t capacity_;
  uint64_t free_bytes_;
  std::map<uint64_t, uint64_t> free_by_offset_;    // offset -> size
  std::multimap<uint64_t, uint64_t> free_by_size_;  // size -> offset
};

}  // namespace tessera::vulkan
