// The random generator of a device: a seed and a Philox offset. Each random
// op reserves the counters it uses, so a sequence of ops with one seed gives
// the same values on every device.
#pragma once

#include <cstdint>
#include <mutex>

#include "runtime/core/device.h"
#include "runtime/random/philox.h"

namespace tessera {

class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed) : state_{seed, 0} {}

  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // as PyTorch's

  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // Reserves counters for n values; returns the state to use for them.
  PhiloxState reserve(uint64_t n);
  PhiloxState state() const;
  void set_state(PhiloxState s);

 private:
  mutable std::mutex mutex_;
  PhiloxState state_;
};

// The default generator of a device (one per device).
Generator& default_generator(Device device);
// Seeds the default generators of every device.
void manual_seed(uint64_t seed);

}  // namespace tessera
