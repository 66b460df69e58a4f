#include "bridge/csrc/generator.h"

#include <ATen/EmptyTensor.h>
#include <ATen/Utils.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>
#include <c10/util/CallOnce.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "bridge/csrc/device_list.h"

namespace torch_tessera {
namespace {

constexpr size_t kStateBytes = 2 * sizeof(uint64_t);

c10::DispatchKeySet generator_keys() {
  return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

}  // namespace

TesseraGeneratorImpl::TesseraGeneratorImpl(c10::DeviceIndex index,
                                           tessera::Generator* runtime_default)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index), generator_keys()),
      runtime_(runtime_default) {}

TesseraGeneratorImpl::TesseraGeneratorImpl(c10::DeviceIndex index)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index), generator_keys()),
      owned_(std::make_unique<tessera::Generator>()),
      runtime_(owned_.get()) {}

void TesseraGeneratorImpl::set_current_seed(uint64_t seed) { runtime_->manual_seed(seed); }

void TesseraGeneratorImpl::set_offset(uint64_t offset) {
  runtime_->set_state({runtime_->seed(), offset});
}

uint64_t TesseraGeneratorImpl::get_offset() const { return runtime_->state().offset; }

uint64_t TesseraGeneratorImpl::current_seed() const { return runtime_->seed(); }

uint64_t TesseraGeneratorImpl::seed() {
  const uint64_t s = c10::detail::getNonDeterministicRandom(/*is_cuda=*/false);
  runtime_->manual_seed(s);
  return s;
}

void TesseraGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK_TYPE(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>(),
                   "RNG state must be a torch.ByteTensor, got ", new_state.dtype());
  TORCH_CHECK_VALUE(new_state.numel() == static_cast<int64_t>(kStateBytes),
                    "tessera RNG state must have ", kStateBytes, " bytes (seed, offset), got ",
                    new_state.numel());
  TORCH_CHECK(new_state.device().is_cpu() && new_state.is_contiguous(),
              "RNG state must be a contiguous CPU tensor");
  uint64_t words[2];
  std::memcpy(words, new_state.data(), kStateBytes);
  runtime_->set_state({words[0], words[1]});
}

c10::intrusive_ptr<c10::TensorImpl> TesseraGeneratorImpl::get_state() const {
  auto state = at::detail::empty_cpu({static_cast<int64_t>(kStateBytes)}, c10::ScalarType::Byte,
                                     std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  const tessera::PhiloxState s = runtime_->state();
  const uint64_t words[2] = {s.seed, s.offset};
  std::memcpy(state.data_ptr(), words, kStateBytes);
  return state.getIntrusivePtr();
}

TesseraGeneratorImpl* TesseraGeneratorImpl::clone_impl() const {
  auto* copy = new TesseraGeneratorImpl(device().index());
  copy->runtime_->set_state(runtime_->state());
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex index) {
  static std::once_flag once;
  static std::deque<at::Generator> generators;
  std::call_once(once, [] {
    for (c10::DeviceIndex i = 0; i < device_count(); ++i) {
      generators.push_back(at::make_generator<TesseraGeneratorImpl>(
          i, &tessera::default_generator(runtime_device(i))));
    }
  });
  runtime_device(index);  // range check
  return generators[static_cast<size_t>(index)];
}

at::Generator new_generator(c10::DeviceIndex index) {
  runtime_device(index);  // range check
  return at::make_generator<TesseraGeneratorImpl>(index);
}

tessera::Generator* runtime_generator(const std::optional<at::Generator>& gen,
                                      const c10::Device& device) {
  if (gen.has_value() && gen->defined()) {
    auto* impl = dynamic_cast<TesseraGeneratorImpl*>(gen->unsafeGetGeneratorImpl());
    TORCH_CHECK(impl != nullptr, "expected a tessera generator, got one for ", gen->device());
    return &impl->runtime();
  }
  const c10::DeviceIndex index = device.has_index() ? device.index() : current_device();
  auto* impl = dynamic_cast<TesseraGeneratorImpl*>(
      default_generator(index).unsafeGetGeneratorImpl());
  return &impl->runtime();
}

}  // namespace torch_tessera
