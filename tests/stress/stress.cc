#include "tests/stress/stress.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/event.h"
#include "runtime/tessera.h"

namespace tessera::stress {

namespace {

using Clock = std::chrono::steady_clock;

std::string format(const std::string& a, const std::string& b) { return a + ": " + b; }

// A sequence's value on the device and on the host, kept in step.
struct Pair {
  Tensor dev;
  Tensor host;
};

// Values in [-1, 1] from rng, on the host.
Tensor random_host(std::mt19937_64& rng, const Shape& sizes) {
  Tensor t = empty(sizes, TensorOptions(DType::kF32, host_device()));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

Shape random_shape(std::mt19937_64& rng) {
  // Small to medium, so that both pools of the allocator see traffic.
  static const int64_t dims[] = {1, 3, 8, 17, 64, 128, 300};
  Shape s(2);
  for (auto& v : s) v = dims[rng() % std::size(dims)];
  return s;
}

// One step: the same op on both sides. Values stay in about [-1, 1].
void step(std::mt19937_64& rng, Pair& x, Device device) {
  const int64_t rows = x.host.size(0), cols = x.host.size(1);
  switch (rng() % 9) {
    case 0: {  // add a fresh operand, broadcast along rows now and then
      const bool row = rng() % 2 == 0;
      Tensor other = random_host(rng, row ? Shape{1, cols} : Shape{rows, cols});
      x.dev = mul(add(x.dev, other.to(device)), 0.5);
      x.host = mul(add(x.host, other), 0.5);
      break;
    }
    case 1: {  // matmul by a fresh square matrix, scaled
      Tensor w = random_host(rng, {cols, cols});
      const double scale = 1.0 / static_cast<double>(cols);
      x.dev = mul(matmul(x.dev, w.to(device)), scale);
      x.host = mul(matmul(x.host, w), scale);
      break;
    }
    case 2:
      x.dev = softmax(x.dev, 1);
      x.host = softmax(x.host, 1);
      break;
    case 3:
      x.dev = x.dev.transpose(0, 1).contiguous();
      x.host = x.host.transpose(0, 1).contiguous();
      break;
    case 4:
      x.dev = tanh(mul(x.dev, 2.0));
      x.host = tanh(mul(x.host, 2.0));
      break;
    case 5: {  // keep the rows' mean, as a column
      x.dev = mean(x.dev, {1}, true).expand({rows, cols}).contiguous();
      x.host = mean(x.host, {1}, true).expand({rows, cols}).contiguous();
      break;
    }
    case 6: {  // rows picked by index, with repeats
      Tensor idx = empty({rows}, TensorOptions(DType::kI64, host_device()));
      for (int64_t i = 0; i < rows; ++i) idx.data<int64_t>()[i] = static_cast<int64_t>(rng() % rows);
      x.dev = index_select(x.dev, 0, idx.to(device));
      x.host = index_select(x.host, 0, idx);
      break;
    }
    case 7: {  // concatenated with itself, then a slice back to the shape
      x.dev = cat({x.dev, x.dev}, 1).narrow(1, cols / 2, cols).contiguous();
      x.host = cat({x.host, x.host}, 1).narrow(1, cols / 2, cols).contiguous();
      break;
    }
    case 8: {  // a new shape altogether: start over from fresh values
      Tensor fresh = random_host(rng, random_shape(rng));
      x.dev = fresh.to(device);
      x.host = fresh;
      break;
    }
  }
}

struct Shared {
  std::mutex mutex;
  std::vector<std::string> failures;
  std::atomic<int64_t> ops{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> heartbeat{0};

  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failures.size() < 20) failures.push_back(what);
  }
};

// One thread's work for one round on device.
void run_round(Device device, std::mt19937_64& rng, Stream main, Stream side, const Options& o,
               Shared& shared) {
  StreamGuard on_main(main);
  for (int s = 0; s < o.sequences_per_round; ++s) {
    Tensor start = random_host(rng, random_shape(rng));
    Pair x{start.to(device), start};
    for (int i = 0; i < o.ops_per_sequence; ++i) {
      if (rng() % 4 == 0) {
        // Across to the side stream and back: the event orders the side
        // stream after main's work on x; record_stream keeps x's block
        // from reuse while the side stream may read it, after main drops
        // its reference.
        Event ready(device);
        ready.record(main);
        Tensor result;
        {
          StreamGuard on_side(side);
          ready.block(side);
          result = tanh(x.dev);
          CachingAllocator::get(device).record_stream(x.dev.storage()->data(), side);
        }
        x.dev = Tensor();  // freed while the side stream may still use it
        Event done(device);
        done.record(side);
        done.block(main);
        // The result was allocated on the side stream: main uses it too.
        CachingAllocator::get(device).record_stream(result.storage()->data(), main);
        x.dev = result;
        x.host = tanh(x.host);
      } else {
        step(rng, x, device);
      }
      shared.ops.fetch_add(1, std::memory_order_relaxed);
    }
    const Tensor got = x.dev.to(host_device());
    main.synchronize();
    if (got.sizes() != x.host.sizes()) {
      shared.fail(format(device.to_string(), "shape " + shape_to_string(got.sizes()) + " vs " +
                                                 shape_to_string(x.host.sizes())));
      continue;
    }
    const float* a = got.data<float>();
    const float* b = x.host.contiguous().data<float>();
    for (int64_t i = 0; i < got.numel(); ++i) {
      if (!(std::abs(a[i] - b[i]) <= 1e-4f + 1e-3f * std::abs(b[i]))) {
        std::ostringstream why;
        why << "value " << i << " of " << shape_to_string(got.sizes()) << ": " << a[i]
            << " on the device, " << b[i] << " on the host";
        shared.fail(format(device.to_string(), why.str()));
        break;
      }
    }
  }
}

}  // namespace

std::vector<std::string> check_allocator(Device device) {
  std::vector<std::string> problems;
  auto problem = [&](const std::string& what) { problems.push_back(format(device.to_string(), what)); };
  CachingAllocator& allocator = CachingAllocator::get(device);
  const AllocatorStats stats = allocator.stats();
  const std::vector<SegmentSnapshot> segments = allocator.snapshot();
  if (!(stats.allocated_bytes.current <= stats.active_bytes.current &&
        stats.active_bytes.current <= stats.reserved_bytes.current)) {
    problem("allocated <= active <= reserved does not hold");
  }
  int64_t reserved = 0, allocated = 0, active = 0, allocated_count = 0;
  uintptr_t previous_end = 0;
  std::map<uintptr_t, int> block_addresses;
  for (const SegmentSnapshot& seg : segments) {
    if (seg.address < previous_end) problem("segments overlap");
    previous_end = seg.address + seg.size;
    reserved += static_cast<int64_t>(seg.size);
    uintptr_t next = seg.address;
    for (const BlockSnapshot& b : seg.blocks) {
      if (b.address != next) problem("a segment's blocks do not tile it");
      next = b.address + b.size;
      if (++block_addresses[b.address] > 1) problem("a block is in two places");
      if (b.state == BlockState::kAllocated) {
        allocated += static_cast<int64_t>(b.size);
        ++allocated_count;
      }
      if (b.state != BlockState::kFree) active += static_cast<int64_t>(b.size);
    }
    if (next != seg.address + seg.size) problem("a segment's blocks do not add up to it");
  }
  if (reserved != stats.reserved_bytes.current) problem("reserved bytes differ from the segments");
  if (allocated != stats.allocated_bytes.current) problem("allocated bytes differ from the blocks");
  if (active != stats.active_bytes.current) problem("active bytes differ from the blocks");
  if (allocated_count != stats.allocation_count.current) problem("allocation count differs");
  if (static_cast<int64_t>(segments.size()) != stats.segment_count.current) {
    problem("segment count differs");
  }
  return problems;
}

Result run(const Options& o, const std::function<void(const RoundReport&)>& on_round) {
  Result result;
  result.devices = o.devices.empty() ? DeviceRegistry::instance().all_devices() : o.devices;
  // The fake test devices do no work: leave them out.
  std::erase_if(result.devices, [](const Device& d) {
    return d.type.name().find("fake") != std::string_view::npos;
  });
  Shared shared;
  const auto start = Clock::now();
  const int num_threads = static_cast<int>(result.devices.size()) * o.threads_per_device;
  int64_t round = 0;
  auto keep_going = [&] {
    if (o.duration.count() > 0) return Clock::now() - start < o.duration;
    return round < o.rounds;
  };
  bool running = keep_going();
  // Between rounds: every thread waits here while one checks the
  // allocators and reports the round.
  auto between_rounds = [&]() noexcept {
    for (const Device& d : result.devices) synchronize(d);
    RoundReport report;
    report.round = round;
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    report.ops = shared.ops.load();
    for (const Device& d : result.devices) {
      for (const std::string& p : check_allocator(d)) shared.fail(p);
      const AllocatorStats s = CachingAllocator::get(d).stats();
      report.reserved_bytes.push_back(s.reserved_bytes.current);
      report.allocated_bytes.push_back(s.allocated_bytes.current);
    }
    result.rounds.push_back(report);
    shared.heartbeat.fetch_add(1, std::memory_order_relaxed);
    if (on_round) on_round(report);
    ++round;
    running = keep_going() && !shared.stop.load();
  };
  std::barrier sync(num_threads, between_rounds);
  std::vector<std::thread> threads;
  for (size_t di = 0; di < result.devices.size(); ++di) {
    for (int t = 0; t < o.threads_per_device; ++t) {
      const Device device = result.devices[di];
      const uint64_t seed = o.seed * 1000003 + di * 101 + static_cast<uint64_t>(t);
      threads.emplace_back([&, device, seed] {
        std::mt19937_64 rng(seed);
        const Stream main = Stream::create(device), side = Stream::create(device);
        while (running) {
          try {
            run_round(device, rng, main, side, o, shared);
          } catch (const std::exception& e) {
            shared.fail(format(device.to_string(), std::string("threw: ") + e.what()));
            shared.stop = true;
          }
          sync.arrive_and_wait();
        }
      });
    }
  }
  // The watchdog: a round that does not end within round_timeout is a
  // hang (rounds take well under a second here); report it and end the
  // process, since a join would hang too. Counting rounds, not ops: a
  // stuck thread holds up the round while the others may still make ops.
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    int64_t last = -1;
    auto last_change = Clock::now();
    while (!finished.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t now = shared.heartbeat.load();
      if (now != last) {
        last = now;
        last_change = Clock::now();
      } else if (Clock::now() - last_change > o.round_timeout) {
        std::fprintf(stderr, "stress: no round ended for %lld s: a hang (after %lld ops)\n",
                     static_cast<long long>(o.round_timeout.count()),
                     static_cast<long long>(shared.ops.load()));
        std::fflush(stderr);
        std::abort();
      }
    }
  });
  for (auto& t : threads) t.join();
  finished = true;
  watchdog.join();
  result.failures = shared.failures;
  return result;
}

}  // namespace tessera::stress
