// Page-locked ("pinned") host memory for tessera, as x.pin_memory() asks
// for: blocks of the runtime's PinnedHostAllocator (page-locked where a
// device such as CUDA provides it, cached for reuse), from and into which
// copies with non_blocking=True stay in flight. Tensors on it are CPU
// tensors that is_pinned().
//
// Once PrivateUse1 is renamed, tessera is PyTorch's current accelerator, so
// plain CPU pin_memory(), torch.empty(..., pin_memory=True) and DataLoader
// pinning come here (through the hooks), and
// torch.accelerator.empty_host_cache() reaches the same allocator (through
// at::getHostAllocator(PrivateUse1)).
#pragma once

#include <c10/core/Allocator.h>

namespace torch_tessera {

c10::Allocator* pinned_allocator();
// True for any address inside a live pinned block; never throws (PyTorch
// asks about arbitrary CPU pointers).
bool is_pinned(const void* ptr) noexcept;

}  // namespace torch_tessera
