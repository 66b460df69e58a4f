// Page-locked ("pinned") host memory for tessera, as x.pin_memory() asks
// for: host memory from the runtime's host device, whose caching allocator
// keeps it for reuse. Tensors on it are CPU tensors that is_pinned().
#pragma once

#include <c10/core/Allocator.h>

namespace torch_tessera {

c10::Allocator* pinned_allocator();
bool is_pinned(const void* ptr);

}  // namespace torch_tessera
