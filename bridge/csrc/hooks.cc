// PyTorch's PrivateUse1 hooks for tessera: availability, device count and
// current device, generators, pinned memory and storage resizing.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/generator.h"
#include "bridge/csrc/pinned_allocator.h"
#include "bridge/csrc/storage_resize.h"

namespace torch_tessera {
namespace {

struct TesseraHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count() > 0; }
  bool hasPrimaryContext(c10::DeviceIndex index) const override {
    return index >= 0 && index < device_count();
  }
  c10::DeviceIndex deviceCount() const override { return device_count(); }
  void setCurrentDevice(c10::DeviceIndex index) const override { set_current_device(index); }
  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex index) const override {
    const c10::DeviceIndex old = current_device();
    set_current_device(index);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex index) const override {
    return exchangeDevice(index);
  }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return default_generator(index < 0 ? current_device() : index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override {
    return new_generator(index < 0 ? current_device() : index);
  }

  at::Device getDeviceFromPtr(void* /*data*/) const override {
    // Runtime pointers carry no device tag; with one device the answer is
    // certain, with several the caller must name the device.
    TORCH_CHECK(device_count() == 1,
                "tessera cannot tell which of its ", static_cast<int>(device_count()),
                " devices a raw pointer belongs to; pass device= explicitly");
    return c10::Device(c10::DeviceType::PrivateUse1, 0);
  }

  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  c10::Allocator* getPinnedMemoryAllocator() const override { return pinned_allocator(); }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    resize_storage_bytes(storage, nbytes);
  }
};

// Registered when the extension loads, before any tessera tensor exists.
const bool registered = [] {
  static TesseraHooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

}  // namespace
}  // namespace torch_tessera
