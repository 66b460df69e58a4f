#include "devices/vulkan/range_allocator.h"

#include "runtime/core/error.h"

namespace tessera::vulkan {

RangeAllocator::RangeAllocator(uint64_t capacity) : capacity_(capacity), free_bytes_(0) {
  if (capacity > 0) insert_free(0, capacity);
}

std::optional<uint64_t> RangeAllocator::allocate(uint64_t size) {
  TESSERA_CHECK(size > 0, ValueError, "RangeAllocator::allocate: size must be positive");
  auto fit = free_by_size_.lower_bound(size);
  if (fit == free_by_size_.end()) return std::nullopt;
  // Among free ranges of the best size, take the lowest offset so that
  // allocation order is deterministic.
  const uint64_t best_size = fit->first;
  uint64_t offset = fit->second;
  for (auto it = fit; it != free_by_size_.end() && it->first == best_size; ++it) {
    if (it->second < offset) offset = it->second;
  }
  erase_free(free_by_offset_.find(offset));
  if (best_size > size) insert_free(offset + size, best_size - size);
  return offset;
}

void RangeAllocator::free(uint64_t offset, uint64_t size) {
  TESSERA_CHECK(size > 0 && offset <= capacity_ && size <= capacity_ - offset, ValueError,
                "RangeAllocator::free: [", offset, ", ", offset + size,
                ") is outside the capacity ", capacity_);
  auto next = free_by_offset_.lower_bound(offset);
  TESSERA_CHECK(next == free_by_offset_.end() || next->first >= offset + size, ValueError,
                "RangeAllocator::free: [", offset, ", ", offset + size,
                ") overlaps a free range (freed twice?)");
  uint64_t begin = offset, end = offset + size;
  if (next != free_by_offset_.begin()) {
    auto prev = std::prev(next);
    TESSERA_CHECK(prev->first + prev->second <= offset, ValueError, "RangeAllocator::free: [",
                  offset, ", ", offset + size, ") overlaps a free range (freed twice?)");
    if (prev->first + prev->second == offset) {
      begin = prev->first;
      erase_free(prev);
    }
  }
  next = free_by_offset_.lower_bound(end);
  if (next != free_by_offset_.end() && next->first == end) {
    end += next->second;
    erase_free(next);
  }
  insert_free(begin, end - begin);
}

uint64_t RangeAllocator::largest_free() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

void RangeAllocator::insert_free(uint64_t offset, uint64_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
  free_bytes_ += size;
}

void RangeAllocator::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
  auto [first, last] = free_by_size_.equal_range(it->second);
  for (auto s = first; s != last; ++s) {
    if (s->second == it->first) {
      free_by_size_.erase(s);
      break;
    }
  }
  free_bytes_ -= it->second;
  free_by_offset_.erase(it);
}

}  // namespace tessera::vulkan
