// torch.Generator for tessera devices, over the runtime's Philox generator:
// one seed gives the same random values on every tessera device, and the
// same values as the runtime's own C++ API.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <memory>
#include <optional>

#include "runtime/core/device.h"
#include "runtime/random/generator.h"

namespace torch_tessera {

class TesseraGeneratorImpl final : public c10::GeneratorImpl {
 public:
  // The default generator of a device wraps the runtime's default one.
  TesseraGeneratorImpl(c10::DeviceIndex index, tessera::Generator* runtime_default);
  // A new generator owns its runtime generator.
  explicit TesseraGeneratorImpl(c10::DeviceIndex index);

  void set_current_seed(uint64_t seed) override;
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  // State: 16 bytes (seed, offset) in a CPU uint8 tensor.
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  tessera::Generator& runtime() const { return *runtime_; }
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  TesseraGeneratorImpl* clone_impl() const override;

  std::unique_ptr<tessera::Generator> owned_;
  tessera::Generator* runtime_;
};

const at::Generator& default_generator(c10::DeviceIndex index);
at::Generator new_generator(c10::DeviceIndex index);

// The runtime generator an op on `device` draws from: gen's if given (it
// must be a tessera generator), else the device's default one.
tessera::Generator* runtime_generator(const std::optional<at::Generator>& gen,
                                      const c10::Device& device);

}  // namespace torch_tessera
