// Tessera memory that reached torch without the tessera allocator: a
// tessera tensor made by at::from_blob over memory the runtime handed out,
// as torch.from_dlpack does for a DLPack capsule of a tessera tensor (torch
// imports every kDLExtDev capsule that way). Its DataPtr holds no runtime
// Storage, so kernels borrow the memory instead, after checking that it
// lies inside a live allocation of the tensor's device.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Storage.h>

#include "runtime/core/storage.h"

namespace torch_tessera {

// A runtime Storage over `storage`'s memory on tessera `device`, borrowed:
// the torch storage (whose deleter keeps the memory's owner alive) must
// outlive it, which holds for the runtime tensors a kernel makes from its
// arguments. c10::Error naming `op` when the memory is not a live
// allocation of that device (foreign memory, freed memory, a range past
// the end of the allocation).
tessera::StoragePtr borrow_foreign_storage(const c10::Storage& storage, c10::Device device,
                                           const char* op);

}  // namespace torch_tessera
