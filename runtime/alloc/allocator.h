// What a Storage needs from whoever gave it memory.
#pragma once

#include <cstddef>

namespace tessera {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void deallocate(void* ptr) = 0;
};

}  // namespace tessera
