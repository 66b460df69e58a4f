#include "bridge/csrc/storage_resize.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "bridge/csrc/allocator.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {

void resize_storage_bytes(const c10::Storage& storage, size_t nbytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  const c10::Device device = storage.device();
  TORCH_CHECK(device.is_privateuseone(), "resize: expected a tessera storage, got one on ", device);
  if (storage.nbytes() == nbytes) return;
  c10::DeviceGuard guard(device);
  c10::DataPtr fresh = allocator().allocate(nbytes);
  const size_t common = std::min(storage.nbytes(), nbytes);
  if (common > 0 && storage.data() != nullptr) {
    const tessera::Device d = runtime_device(device);
    TESSERA_TRANSLATE_ERRORS(tessera::device_interface(d).copy_sync(
        tessera::CopyKind::kDeviceToDevice, fresh.get(), storage.data(), common, d.index,
        tessera::current_stream(d).native()));
  }
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(nbytes);
}

}  // namespace torch_tessera
