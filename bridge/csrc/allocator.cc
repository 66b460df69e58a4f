#include "bridge/csrc/allocator.h"

#include <c10/util/Exception.h>

#include <cstring>

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/error_translation.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {
namespace {

void delete_storage_ref(void* ctx) { delete static_cast<tessera::StoragePtr*>(ctx); }

void copy_stat(const tessera::Stat& from, c10::CachingAllocator::StatArray& to) {
  auto& aggregate = to[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
  aggregate.current = from.current;
  aggregate.peak = from.peak;
  aggregate.allocated = from.allocated;
  aggregate.freed = from.freed;
}

tessera::CachingAllocator& runtime_allocator(c10::DeviceIndex index) {
  return tessera::CachingAllocator::get(runtime_device(index));
}

}  // namespace

c10::DataPtr make_data_ptr(tessera::StoragePtr storage) {
  void* data = storage->data();
  const c10::Device device = torch_device(storage->device());
  return c10::DataPtr(data, new tessera::StoragePtr(std::move(storage)), &delete_storage_ref,
                      device);
}

const tessera::StoragePtr* runtime_storage(const c10::DataPtr& ptr) {
  if (ptr.get_deleter() != &delete_storage_ref) return nullptr;
  return static_cast<const tessera::StoragePtr*>(ptr.get_context());
}

c10::DataPtr TesseraAllocator::allocate(size_t nbytes) {
  const tessera::Device device = runtime_device(current_device());
  tessera::StoragePtr storage;
  TESSERA_TRANSLATE_ERRORS(storage = tessera::allocate_storage(device, nbytes));
  return make_data_ptr(std::move(storage));
}

void TesseraAllocator::copy_data(void* dest, const void* src, std::size_t count) const {
  // Device-to-device within the current device, ordered on its stream.
  const tessera::Device device = runtime_device(current_device());
  const tessera::Stream stream = tessera::current_stream(device);
  TESSERA_TRANSLATE_ERRORS(tessera::device_interface(device).copy_sync(
      tessera::CopyKind::kDeviceToDevice, dest, src, count, device.index, stream.native()));
}

void TesseraAllocator::emptyCache(c10::MempoolId_t /*mempool_id*/) {
  for (const tessera::Device& d : visible_devices()) {
    tessera::CachingAllocator::get(d).empty_cache();
  }
}

void TesseraAllocator::recordStream(const c10::DataPtr& ptr, c10::Stream stream) {
  const tessera::StoragePtr* storage = runtime_storage(ptr);
  if (storage == nullptr || (*storage)->allocator() == nullptr) return;
  const tessera::Device device = runtime_device(stream.device());
  TORCH_CHECK((*storage)->device() == device, "record_stream: tensor on ",
              (*storage)->device().to_string(), " but stream on ", device.to_string());
  auto* caching = dynamic_cast<tessera::CachingAllocator*>((*storage)->allocator());
  if (caching == nullptr) return;
  TESSERA_TRANSLATE_ERRORS(caching->record_stream(
      (*storage)->data(), tessera::Stream(device, static_cast<uint32_t>(stream.id()))));
}

c10::CachingDeviceAllocator::DeviceStats TesseraAllocator::getDeviceStats(
    c10::DeviceIndex device) {
  const tessera::AllocatorStats s = runtime_allocator(device).stats();
  c10::CachingDeviceAllocator::DeviceStats out;
  copy_stat(s.allocation_count, out.allocation);
  copy_stat(s.segment_count, out.segment);
  copy_stat(s.allocation_count, out.active);
  copy_stat(s.allocated_bytes, out.allocated_bytes);
  copy_stat(s.reserved_bytes, out.reserved_bytes);
  copy_stat(s.active_bytes, out.active_bytes);
  copy_stat(s.inactive_split_bytes, out.inactive_split_bytes);
  copy_stat(s.requested_bytes, out.requested_bytes);
  out.num_alloc_retries = s.num_alloc_retries;
  out.num_ooms = s.num_ooms;
  out.num_device_alloc = s.num_device_allocs;
  out.num_device_free = s.num_device_frees;
  return out;
}

void TesseraAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  runtime_allocator(device).reset_accumulated_stats();
}

void TesseraAllocator::resetPeakStats(c10::DeviceIndex device) {
  runtime_allocator(device).reset_peak_stats();
}

std::pair<size_t, size_t> TesseraAllocator::getMemoryInfo(c10::DeviceIndex device) {
  const tessera::Device d = runtime_device(device);
  tessera::MemoryInfo info;
  TESSERA_TRANSLATE_ERRORS(info = tessera::device_interface(d).memory_info(d.index));
  return {info.free, info.total};
}

namespace {
TesseraAllocator global_allocator;
}  // namespace

// torch allocates tessera memory through this allocator from load on.
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &global_allocator);

TesseraAllocator& allocator() { return global_allocator; }

}  // namespace torch_tessera
