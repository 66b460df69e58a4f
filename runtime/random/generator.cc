#include "runtime/random/generator.h"

#include <memory>
#include <unordered_map>

#include "runtime/device/device_registry.h"

namespace tessera {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = PhiloxState{seed, 0};
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_.seed;
}

PhiloxState Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  PhiloxState s = state_;
  state_.offset += philox_blocks_for(n);
  return s;
}

PhiloxState Generator::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

void Generator::set_state(PhiloxState s) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = s;
}

namespace {
struct GeneratorTable {
  std::mutex mutex;
  std::unordered_map<Device, std::unique_ptr<Generator>> generators;
  uint64_t initial_seed = Generator::kDefaultSeed;  // for generators made later
};
GeneratorTable& table() {
  static GeneratorTable t;
  return t;
}
}  // namespace

Generator& default_generator(Device device) {
  device_interface(device);  // validates the device
  GeneratorTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto& slot = t.generators[device];
  if (!slot) slot = std::make_unique<Generator>(t.initial_seed);
  return *slot;
}

void manual_seed(uint64_t seed) {
  GeneratorTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.initial_seed = seed;
  for (auto& [device, generator] : t.generators) generator->manual_seed(seed);
}

}  // namespace tessera
