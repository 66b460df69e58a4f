// The template device: enumeration from its environment variables, raw
// memory and copies in every direction, out of memory under its capacity,
// streams whose tasks run in order on a worker thread, events that mark a
// position in a stream, kernels that run asynchronously, and the split
// between its native kernels and the CPU fallback.
//
// A stream is held at a known point with launch_host_function and a gate
// the test opens, so every check of "not done yet" is deterministic.
//
// BUILD runs this file twice: template_device_test with three emulated
// devices of which TESSERA_TEMPLATE_DEVICES=2,0 selects two and 64 MiB
// each, and template_device_bad_env_test ([bad_env]) with malformed values.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "devices/template/template_device.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/error.h"
#include "runtime/device/device_listing.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/ops/ops.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"
#include "tests/ops/reference.h"
#include "tests/support/skip.h"

using namespace tessera;

namespace {

DeviceInterface& iface() {
  DeviceInterface* found = DeviceRegistry::instance().find("template");
  REQUIRE(found != nullptr);
  return *found;
}

Device dev(int index = 0) { return Device{DeviceType::from_name("template"), index}; }

std::vector<double> host_values(const Tensor& t) {
  return tessera::testing::read_strided(t.to(host_device()));
}

// A stream held by a host function until open() (or destruction) lets it go.
class Gate {
 public:
  explicit Gate(const Stream& stream) {
    std::shared_future<void> opened = promise_.get_future().share();
    template_device::launch_host_function(stream.device().index, stream.native(),
                                          [opened] { opened.wait(); });
  }
  ~Gate() { open(); }
  void open() {
    if (!open_.exchange(true)) promise_.set_value();
  }

 private:
  std::promise<void> promise_;
  std::atomic<bool> open_{false};
};

// Appends to a list from host functions on streams, under a lock.
struct Trace {
  std::mutex mutex;
  std::vector<std::string> entries;
  std::vector<std::thread::id> threads;
  void add(const std::string& entry) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(entry);
    threads.push_back(std::this_thread::get_id());
  }
  std::function<void()> adder(const std::string& entry) {
    return [this, entry] { add(entry); };
  }
};

}  // namespace

TEST_CASE("template: enumeration follows the environment", "[template]") {
  // TESSERA_TEMPLATE_DEVICE_COUNT=3, TESSERA_TEMPLATE_DEVICES=2,0 (BUILD).
  DeviceInterface& d = iface();
  REQUIRE(d.device_count() == 2);
  CHECK(d.properties(0).name == "Tessera template device 2");
  CHECK(d.properties(1).name == "Tessera template device 0");
  const DeviceProperties p = d.properties(0);
  CHECK(p.vendor == "Tessera template");
  CHECK(p.total_memory == size_t{64} << 20);  // TESSERA_TEMPLATE_MEMORY_MIB=64
  CHECK(p.compute_units == 1);
  CHECK_FALSE(p.host_accessible);
  CHECK(p.software);
  CHECK_FALSE(listed_by_default("template"));
  CHECK(listed_by_default("cpu"));
  const MemoryInfo m = d.memory_info(1);
  CHECK(m.total == size_t{64} << 20);
  CHECK(m.free <= m.total);
  CHECK_THROWS_AS(d.properties(2), ValueError);
  try {
    zeros({2}, TensorOptions(dev(2)));
    FAIL("a tensor on a device that does not exist must fail");
  } catch (const ValueError& e) {
    CHECK_THAT(e.what(), Catch::Contains("template:2"));
  }
}

TEST_CASE("template: malformed environment values give the defaults", "[bad_env]") {
  // TESSERA_TEMPLATE_DEVICE_COUNT=two, TESSERA_TEMPLATE_MEMORY_MIB=0 (BUILD).
  DeviceInterface& d = iface();
  CHECK(d.device_count() == 1);
  CHECK(d.properties(0).total_memory == size_t{4096} << 20);
  CHECK(host_values(add(ones({3}, TensorOptions(dev())), ones({3}, TensorOptions(dev())))) ==
        std::vector<double>{2, 2, 2});
}

TEST_CASE("template: the device's own kernels, and the rest through the CPU fallback",
          "[template][kernels]") {
  const KernelRegistry& registry = KernelRegistry::instance();
  CHECK(registry.ops_for(DeviceType::from_name("template")) ==
        std::vector<std::string>{"binary", "bmm", "copy", "fill"});
  const TensorOptions f32(dev());
  Tensor a = full({3, 4}, 2.0, f32);
  Tensor b = full({4, 5}, 0.5, f32);
  reset_cpu_fallback_counts();
  Tensor sum = add(a, a, 3);  // a + 3 * a
  Tensor diff = sub(a, full({4}, 1.0, f32));
  Tensor product = mm(a, b);
  Tensor cast = a.t().to(DType::kF16).contiguous();
  CHECK(cpu_fallback_counts().empty());
  CHECK(host_values(sum) == std::vector<double>(12, 8.0));
  CHECK(host_values(diff) == std::vector<double>(12, 1.0));
  CHECK(host_values(product) == std::vector<double>(15, 4.0));
  CHECK(host_values(cast) == std::vector<double>(12, 2.0));

  // Declined by the Binary kernel (mul), by the Bmm kernel (f16) and not
  // implemented at all (exp): each runs on the host, counted.
  Tensor twice = mul(a, full({3, 4}, 2.0, f32));
  Tensor half_mm = mm(a.to(DType::kF16), b.to(DType::kF16));
  Tensor e = exp(zeros({2}, f32));
  const auto counts = cpu_fallback_counts();
  CHECK(counts.at("binary") == 1);
  CHECK(counts.at("bmm") == 1);
  CHECK(counts.at("unary") == 1);
  CHECK(twice.device() == dev());
  CHECK(host_values(twice) == std::vector<double>(12, 4.0));
  CHECK(host_values(half_mm) == std::vector<double>(15, 4.0));
  CHECK(host_values(e) == std::vector<double>{1, 1});

  // With the fallback refused, what the device lacks is an error.
  set_cpu_fallback_enabled(false);
  CHECK_THROWS_AS(mul(a, a), NotImplementedError);
  set_cpu_fallback_enabled(true);
}

TEST_CASE("template: raw memory and copies in every direction", "[template][memory]") {
  DeviceInterface& d = iface();
  NativeStream s = d.default_stream(0);
  const size_t n = 1000;
  std::vector<uint32_t> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
  void* a = d.raw_allocate(0, n * 4);
  void* b = d.raw_allocate(0, n * 4);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a != b);
  d.copy_sync(CopyKind::kHostToDevice, a, src.data(), n * 4, 0, s);
  d.copy_sync(CopyKind::kDeviceToDevice, b, a, n * 4, 0, s);
  d.copy_sync(CopyKind::kDeviceToHost, back.data(), b, n * 4, 0, s);
  CHECK(back == src);
  // Interior pointers address the same memory.
  const uint32_t marker[3] = {7, 8, 9};
  d.copy_sync(CopyKind::kHostToDevice, static_cast<char*>(a) + 400, marker, sizeof(marker), 0, s);
  d.copy_sync(CopyKind::kDeviceToHost, back.data(), a, n * 4, 0, s);
  CHECK(back[99] == src[99]);
  CHECK(back[100] == 7);
  CHECK(back[102] == 9);
  CHECK(back[103] == src[103]);
  d.raw_free(0, a);
  d.raw_free(0, b);
  // A zero-byte request still gets a distinct block.
  void* z1 = d.raw_allocate(0, 0);
  void* z2 = d.raw_allocate(0, 0);
  CHECK((z1 != nullptr && z2 != nullptr && z1 != z2));
  d.raw_free(0, z1);
  d.raw_free(0, z2);
  // Freeing what is not an allocation of the device is refused.
  CHECK_THROWS_AS(d.raw_free(0, src.data()), DeviceError);
  // Tensors across devices: host -> template:0 -> template:1 -> host,
  // strided and cast on the way.
  const Tensor host = tessera::testing::make_tensor(tessera::testing::iota(12), {3, 4}, DType::kF32);
  Tensor on0 = host.to(dev(0));
  Tensor on1 = empty({4, 3}, TensorOptions(DType::kF64, dev(1))).t();
  on1.copy_(on0);
  CHECK(host_values(on1) == tessera::testing::iota(12));
}

TEST_CASE("template: out of memory under the capacity, then recovery", "[template][memory]") {
  DeviceInterface& d = iface();
  CachingAllocator::get(dev(1)).empty_cache();  // what earlier cases left cached
  CHECK(d.memory_info(1).free == size_t{64} << 20);
  // 64 MiB per device (BUILD): the raw allocation says nullptr...
  CHECK(d.raw_allocate(1, size_t{65} << 20) == nullptr);
  void* most = d.raw_allocate(1, size_t{40} << 20);
  REQUIRE(most != nullptr);
  CHECK(d.memory_info(1).free <= size_t{24} << 20);
  CHECK(d.raw_allocate(1, size_t{30} << 20) == nullptr);
  d.raw_free(1, most);
  CHECK(d.memory_info(1).free == size_t{64} << 20);
  // ...and the caching allocator raises, after freeing its cache and
  // retrying, then recovers once memory is free.
  const TensorOptions on(dev(1));
  Tensor big = empty({int64_t{10} << 20}, on);  // 40 MiB of floats
  try {
    empty({int64_t{10} << 20}, on);
    FAIL("a second 40 MiB tensor must not fit in 64 MiB");
  } catch (const OutOfMemoryError& e) {
    CHECK_THAT(e.what(), Catch::Contains("template:1"));
  }
  big = Tensor();
  Tensor fits = full({int64_t{10} << 20}, 2.0, on);
  CHECK(host_values(sum(fits))[0] == 2.0 * (10 << 20));
  fits = Tensor();
  CachingAllocator::get(dev(1)).empty_cache();
  CHECK(d.memory_info(1).free == size_t{64} << 20);
}

TEST_CASE("template: a stream runs its tasks in order on one worker thread",
          "[template][stream]") {
  Stream s = Stream::create(dev());
  Trace trace;
  {
    Gate gate(s);
    for (int i = 0; i < 5; ++i) {
      template_device::launch_host_function(0, s.native(), trace.adder(std::to_string(i)));
    }
    CHECK_FALSE(s.query());  // held by the gate
    CHECK(trace.entries.empty());
  }
  s.synchronize();
  CHECK(s.query());
  CHECK(trace.entries == std::vector<std::string>{"0", "1", "2", "3", "4"});
  for (const std::thread::id& id : trace.threads) CHECK(id == trace.threads.front());
  CHECK(trace.threads.front() != std::this_thread::get_id());
  // The default stream has a worker of its own.
  Stream d = Stream::default_stream(dev());
  template_device::launch_host_function(0, d.native(), trace.adder("default"));
  d.synchronize();
  CHECK(trace.threads.back() != trace.threads.front());
  CHECK(trace.threads.back() != std::this_thread::get_id());
}

TEST_CASE("template: kernels run asynchronously on the stream's worker", "[template][kernels]") {
  // Without caching (TESSERA_DISABLE_CACHING_ALLOCATOR, as the sanitizer
  // configs set it) every free waits for the device, as cudaFree does, so
  // an op's temporaries cannot be freed while the gate holds the stream.
  if (CachingAllocator::get(dev()).caching_disabled()) {
    TESSERA_SKIP("the caching allocator is off: a free waits for the gated stream");
  }
  Stream s = Stream::create(dev());
  StreamGuard guard(s);
  const TensorOptions on(dev());
  Tensor a = full({64, 64}, 1.0, on);
  Tensor b = full({64, 64}, 1.0, on);
  s.synchronize();
  Event done(dev());
  Tensor c;
  {
    Gate gate(s);
    c = mm(add(a, b), b);  // returns with the work queued behind the gate
    done.record(s);
    CHECK_FALSE(done.query());
    CHECK_FALSE(s.query());
  }
  done.synchronize();
  CHECK(done.query());
  CHECK(host_values(c) == std::vector<double>(64 * 64, 128.0));
}

TEST_CASE("template: an event is complete only when the work before it is",
          "[template][event]") {
  Stream s = Stream::create(dev());
  Event never(dev());
  CHECK(never.query());  // never recorded: complete
  never.synchronize();
  Event start(dev()), end(dev());
  std::atomic<bool> work_done{false};
  {
    Gate gate(s);
    start.record(s);
    template_device::launch_host_function(0, s.native(), [&] { work_done = true; });
    end.record(s);
    CHECK_FALSE(start.query());
    CHECK_FALSE(end.query());
    gate.open();
    end.synchronize();
    CHECK(work_done);
  }
  CHECK(start.query());
  CHECK(start.elapsed_time(end) >= 0.0);
  CHECK_THROWS_AS(never.elapsed_time(end), ValueError);
  // Re-recording moves the event to the new end of the stream.
  Gate again(s);
  end.record(s);
  CHECK_FALSE(end.query());
  again.open();
  end.synchronize();
  CHECK(end.query());
}

TEST_CASE("template: a stream waiting on an event runs after the work before it",
          "[template][event]") {
  Stream producer = Stream::create(dev());
  Stream consumer = Stream::create(dev());
  Trace trace;
  Event ready(dev());
  {
    Gate gate(producer);
    template_device::launch_host_function(0, producer.native(), trace.adder("produced"));
    ready.record(producer);
    ready.block(consumer);
    template_device::launch_host_function(0, consumer.native(), trace.adder("consumed"));
    // The consumer's worker waits for the producer, which is held.
    CHECK_FALSE(consumer.query());
    CHECK_FALSE(ready.query());
  }
  consumer.synchronize();
  CHECK(trace.entries == std::vector<std::string>{"produced", "consumed"});
}

TEST_CASE("template: failures and misuse are reported, not deadlocks", "[template][stream]") {
  DeviceInterface& d = iface();
  Stream s = Stream::create(dev());
  // A task that throws: reported once, by the next synchronize.
  template_device::launch_host_function(0, s.native(), [] { throw std::runtime_error("boom"); });
  try {
    s.synchronize();
    FAIL("the failed task must be reported");
  } catch (const DeviceError& e) {
    CHECK_THAT(e.what(), Catch::Contains("boom"));
    CHECK_THAT(e.what(), Catch::Contains("template:0 stream"));
  }
  s.synchronize();
  // A task that waits for its own stream gets an error instead of hanging.
  std::string message;
  template_device::launch_host_function(0, s.native(), [&] {
    try {
      d.synchronize_stream(0, s.native());
    } catch (const DeviceError& e) {
      message = e.what();
    }
  });
  s.synchronize();
  CHECK_THAT(message, Catch::Contains("wait for itself"));
  CHECK_THROWS_AS(d.query_stream(0, &message), DeviceError);  // not a stream
}

TEST_CASE("template: destroying a stream finishes its queued work first", "[template][stream]") {
  DeviceInterface& d = iface();
  NativeStream s = d.create_stream(0);
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::atomic<int> ran{0};
  template_device::launch_host_function(0, s, [opened] { opened.wait(); });
  for (int i = 0; i < 10; ++i) template_device::launch_host_function(0, s, [&] { ++ran; });
  std::thread opener([&] { gate.set_value(); });
  d.destroy_stream(0, s);  // waits for the gate and the ten tasks behind it
  opener.join();
  CHECK(ran == 10);
  CHECK_THROWS_AS(d.synchronize_stream(0, s), DeviceError);  // gone
}
