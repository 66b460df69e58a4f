#include "devices/template/template_memory.h"

#include <cstdlib>

namespace tessera::template_device {

void* TemplateMemory::allocate(size_t nbytes) {
  // Round up to whole alignment units (std::aligned_alloc requires it); a
  // request of 0 bytes still gets a distinct block, as drivers do.
  const size_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < nbytes) return nullptr;  // the rounding overflowed: no device has that much
  std::lock_guard<std::mutex> lock(mutex_);
  if (rounded > capacity_ - used_) return nullptr;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) return nullptr;  // the host itself is out of memory
  live_.emplace(p, rounded);
  used_ += rounded;
  return p;
}

bool TemplateMemory::free(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = live_.find(ptr);
  if (it == live_.end()) return false;
  used_ -= it->second;
  live_.erase(it);
  std::free(ptr);
  return true;
}

size_t TemplateMemory::used() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

}  // namespace tessera::template_device
