// Random op sequences from several threads on several streams of every
// device, checked against the host after each round; used by stress_test
// (a few rounds, in ./dev test) and soak (./dev soak MINUTES).
//
// Each thread owns two streams on its device: a main stream and a side
// stream. Its sequences run on the main stream; now and then a tensor
// crosses to the side stream (an event orders the hand-over, the side
// stream works on it, the allocator is told with record_stream, and the
// main stream's tensor is dropped while the side stream may still read
// it) and the result comes back the same way. The same sequence runs on
// the host device, and the results must agree. Between rounds every
// thread waits at a barrier while the allocators' invariants are checked.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace tessera::stress {

struct Options {
  std::vector<Device> devices;  // empty: every device of every registered type
  int threads_per_device = 3;
  int sequences_per_round = 4;  // per thread
  int ops_per_sequence = 8;
  // Run `rounds` rounds, or until `duration` has passed when it is set.
  int64_t rounds = 5;
  std::chrono::seconds duration{0};
  uint64_t seed = 1;
  // No round may take longer (a hang is a failure, not a stuck run): the
  // process ends with a message.
  std::chrono::seconds round_timeout{180};
};

struct RoundReport {
  int64_t round = 0;
  double seconds = 0;  // since the start
  int64_t ops = 0;     // executed so far, all threads and devices
  std::vector<int64_t> reserved_bytes;   // per device, after the round
  std::vector<int64_t> allocated_bytes;  // per device, after the round
};

struct Result {
  std::vector<Device> devices;
  std::vector<RoundReport> rounds;
  std::vector<std::string> failures;  // empty when everything agreed
};

// Runs the stress; `on_round` (optional) sees each round's report as it ends.
Result run(const Options& options, const std::function<void(const RoundReport&)>& on_round = {});

// The allocator invariants of device: allocated <= active <= reserved,
// the snapshot's segments disjoint and covered by their blocks, no block
// in two places, and the snapshot's totals equal to the statistics.
// Empty when they hold; else what does not. Call with no other thread
// allocating on the device.
std::vector<std::string> check_allocator(Device device);

}  // namespace tessera::stress
