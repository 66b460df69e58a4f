// Growing or shrinking the memory of a tessera storage in place (what
// resize_ and storage.resize_() need): new runtime memory on the same
// device, the common prefix copied over.
#pragma once

#include <c10/core/Storage.h>

namespace torch_tessera {

void resize_storage_bytes(const c10::Storage& storage, size_t nbytes);

}  // namespace torch_tessera
