// The Vulkan device: enumeration, raw memory and copies, streams and events
// (the pattern of tests/core/stream_event_test.cc on vulkan:0), and that
// fill, copy and the f32 binary, unary, pointwise_binary (comparisons,
// maximum/minimum, activation gradients) and ternary (where, lerp, addcmul,
// addcdiv) kernels run natively, not through the CPU fallback.
// Every test case is skipped on a machine without a Vulkan device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>
#include <set>
#include <thread>
#include <vector>

#include "devices/vulkan/vulkan_device.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/special_ops.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"
#include "tests/ops/reference.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/support/skip.h"

using namespace tessera;
using namespace tessera::vulkan_testing;

namespace {

std::vector<double> host_values(const Tensor& t) {
  return tessera::testing::read_strided(t.to(host_device()));
}

}  // namespace

TEST_CASE("vulkan: enumeration and properties", "[vulkan]") {
  REQUIRE_VULKAN();
  DeviceInterface& iface = *vulkan_interface();
  DeviceProperties p = iface.properties(0);
  CHECK_FALSE(p.name.empty());
  CHECK_FALSE(p.vendor.empty());
  CHECK(p.total_memory > 0);
  CHECK_FALSE(p.host_accessible);
  // lavapipe runs on the host's CPU: ranked after the host device.
  if (vulkan::device_info(0).driver == "llvmpipe") CHECK(p.software);
  MemoryInfo m = iface.memory_info(0);
  CHECK(m.total > 0);
  CHECK(m.free <= m.total);

  vulkan::VulkanDeviceInfo info = vulkan::device_info(0);
  CHECK(info.api_version >= ((1u << 22) | (2u << 12)));  // Vulkan 1.2
  CHECK(info.subgroup_size > 0);
  CHECK_FALSE(info.driver.empty());
  CHECK(p.native_index == static_cast<int>(info.physical_index));
  // The test's BUILD turns validation on; make sure it took.
  const char* env = std::getenv("TESSERA_VULKAN_VALIDATION");
  if (env != nullptr && std::string(env) == "1") CHECK(info.validation);

  const int n = iface.device_count();
  CHECK_THROWS_AS(iface.properties(n), ValueError);
  CHECK_THROWS_AS(iface.raw_allocate(-1, 16), ValueError);
  CHECK_THROWS_AS(vulkan::device_info(n), ValueError);
}

TEST_CASE("vulkan: raw memory and copies in every direction", "[vulkan]") {
  REQUIRE_VULKAN();
  DeviceInterface& iface = *vulkan_interface();
  NativeStream s = iface.default_stream(0);
  const size_t n = 1000;
  std::vector<uint32_t> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);

  void* a = iface.raw_allocate(0, n * 4);
  void* b = iface.raw_allocate(0, n * 4);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a != b);
  iface.copy_sync(CopyKind::kHostToDevice, a, src.data(), n * 4, 0, s);
  iface.copy_sync(CopyKind::kDeviceToDevice, b, a, n * 4, 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, back.data(), b, n * 4, 0, s);
  CHECK(back == src);

  // Interior addresses (a view's data pointer) resolve to the same buffer.
  uint32_t marker[3] = {7, 8, 9};
  char* a_bytes = static_cast<char*>(a);
  iface.copy_sync(CopyKind::kHostToDevice, a_bytes + 400, marker, sizeof(marker), 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, back.data(), a, n * 4, 0, s);
  CHECK(back[99] == src[99]);
  CHECK(back[100] == 7);
  CHECK(back[102] == 9);
  CHECK(back[103] == src[103]);

  // A host pointer, or a range running past the allocation (4000 bytes,
  // rounded up to 4096), is refused.
  CHECK_THROWS_AS(iface.copy_sync(CopyKind::kDeviceToHost, back.data(), src.data(), 4, 0, s),
                  ValueError);
  CHECK_THROWS_AS(iface.copy_sync(CopyKind::kDeviceToHost, back.data(), a_bytes + 200, n * 4, 0, s),
                  ValueError);
  iface.raw_free(0, a);
  iface.raw_free(0, b);
  CHECK_THROWS_AS(iface.raw_free(0, a), ValueError);

  // An impossible request is out of memory (nullptr), not a crash.
  CHECK(iface.raw_allocate(0, size_t{1} << 62) == nullptr);
}

TEST_CASE("vulkan: small allocations share blocks, large ones get their own", "[vulkan][memory]") {
  REQUIRE_VULKAN();
  DeviceInterface& iface = *vulkan_interface();
  NativeStream s = iface.default_stream(0);
  const vulkan::VulkanMemoryStats before = vulkan::memory_stats(0);

  // 64 allocations of 1 KiB: at most one new block, disjoint and usable.
  std::vector<void*> small;
  for (int i = 0; i < 64; ++i) {
    void* p = iface.raw_allocate(0, 1024);
    REQUIRE(p != nullptr);
    uint32_t value = static_cast<uint32_t>(i);
    iface.copy_sync(CopyKind::kHostToDevice, static_cast<char*>(p) + 1020, &value, 4, 0, s);
    small.push_back(p);
  }
  vulkan::VulkanMemoryStats during = vulkan::memory_stats(0);
  CHECK(during.blocks <= before.blocks + 1);
  CHECK(during.allocations == before.allocations + 64);
  std::vector<void*> sorted = small;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    CHECK(static_cast<char*>(sorted[i]) - static_cast<char*>(sorted[i - 1]) >= 1024);
  }
  for (int i = 0; i < 64; ++i) {
    uint32_t value = 0;
    iface.copy_sync(CopyKind::kDeviceToHost, &value, static_cast<char*>(small[i]) + 1020, 4, 0, s);
    CHECK(value == static_cast<uint32_t>(i));
  }

  // 32 MiB is beyond sub-allocation: a dedicated block, returned on free.
  void* large = iface.raw_allocate(0, size_t{32} << 20);
  REQUIRE(large != nullptr);
  CHECK(vulkan::memory_stats(0).blocks == during.blocks + 1);
  iface.raw_free(0, large);
  CHECK(vulkan::memory_stats(0).blocks == during.blocks);

  for (void* p : small) iface.raw_free(0, p);
  const vulkan::VulkanMemoryStats after = vulkan::memory_stats(0);
  CHECK(after.allocations == before.allocations);
  CHECK(after.blocks == before.blocks);  // a block nothing lives in goes back
}

TEST_CASE("vulkan: unified memory follows the device type and the environment", "[vulkan][memory]") {
  REQUIRE_VULKAN();
  const char* env = std::getenv("TESSERA_VULKAN_UNIFIED_MEMORY");
  const bool disabled = env != nullptr && std::string(env) == "0";
  const vulkan::VulkanMemoryStats stats = vulkan::memory_stats(0);
  if (disabled) CHECK_FALSE(stats.unified);
  // lavapipe's one memory type is device-local, host-visible and coherent.
  if (!disabled && vulkan::device_info(0).driver == "llvmpipe") CHECK(stats.unified);

  // Copies behind queued work keep stream order on either path: a fill
  // queued before a host-to-device copy must not overwrite it.
  Tensor t = empty({4096}, TensorOptions(DType::kF32, gpu()));
  for (int round = 0; round < 3; ++round) {
    t.fill_(static_cast<double>(round));
    std::vector<float> ones(4096, 1.0f);
    DeviceInterface& iface = *vulkan_interface();
    iface.copy_async(CopyKind::kHostToDevice, t.data_ptr(), ones.data(), 4096 * 4, 0,
                     current_stream(gpu()).native());
    std::vector<double> back = host_values(t);
    CHECK(std::all_of(back.begin(), back.end(), [](double v) { return v == 1.0; }));
  }
  if (!stats.unified) CHECK(vulkan::memory_stats(0).staging_idle_bytes > 0);  // reused
}

TEST_CASE("vulkan: default stream and created streams", "[vulkan][stream]") {
  REQUIRE_VULKAN();
  Stream d = Stream::default_stream(gpu());
  CHECK(d.is_default());
  CHECK(d.device() == gpu());
  CHECK(current_stream(gpu()) == d);
  CHECK(d.native() != nullptr);
  CHECK(d.query());
  d.synchronize();
  CHECK(d.to_string().find("vulkan:0") != std::string::npos);

  std::set<uint32_t> ids;
  std::set<void*> natives;
  for (int i = 0; i < 5; ++i) {
    Stream s = Stream::create(gpu());
    CHECK_FALSE(s.is_default());
    CHECK(s.device() == gpu());
    ids.insert(s.id());
    natives.insert(s.native());
    CHECK(s.query());
  }
  CHECK(ids.size() == 5);
  CHECK(natives.size() == 5);
  CHECK(natives.count(d.native()) == 0);

  Stream s1 = Stream::create(gpu());
  {
    StreamGuard g(s1);
    CHECK(current_stream(gpu()) == s1);
    CHECK(current_stream(host_device()).is_default());  // per device
  }
  CHECK(current_stream(gpu()).is_default());
}

TEST_CASE("vulkan: events record, query, synchronize and time", "[vulkan][event]") {
  REQUIRE_VULKAN();
  Stream s = Stream::create(gpu());
  Event never(gpu());
  CHECK(never.query());
  never.synchronize();

  Event start(gpu());
  Event end(gpu());
  start.record(s);
  Tensor a;
  {
    StreamGuard g(s);
    a = ones({256, 256}, TensorOptions(gpu()));
    for (int i = 0; i < 10; ++i) a = add(a, a);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record(s);
  end.synchronize();
  CHECK(end.query());
  CHECK(start.query());
  const double ms = start.elapsed_time(end);
  CHECK(ms >= 15.0);  // the sleep is between the two records
  CHECK(ms < 60000.0);
  CHECK(host_values(a) == std::vector<double>(256 * 256, 1024.0));

  // Re-recording moves the marker.
  start.record(s);
  end.record(s);
  end.synchronize();
  CHECK(start.elapsed_time(end) >= 0.0);
  CHECK(start.elapsed_time(end) < 1000.0);

  Event fresh(gpu());
  CHECK_THROWS(fresh.elapsed_time(end));
  CHECK_THROWS(end.elapsed_time(fresh));
}

TEST_CASE("vulkan: a stream blocked on an event sees the work before it", "[vulkan][event]") {
  REQUIRE_VULKAN();
  Stream producer = Stream::create(gpu());
  Stream consumer = Stream::create(gpu());
  Tensor x = zeros({1000, 100}, TensorOptions(gpu()));
  Tensor one = ones({1000, 100}, TensorOptions(gpu()));
  synchronize(gpu());
  Event ready(gpu());
  {
    StreamGuard g(producer);
    x.fill_(2.0);
    x.add_(one);
    ready.record(producer);
  }
  ready.block(consumer);
  Tensor y;
  {
    StreamGuard g(consumer);
    y = mul(x, x);
  }
  consumer.synchronize();
  CHECK(ready.query());
  CHECK(tessera::testing::close_report(host_values(y), std::vector<double>(100000, 9.0)) == "");
}

TEST_CASE("vulkan: work enqueued on a stream runs in order", "[vulkan][stream]") {
  REQUIRE_VULKAN();
  Stream s = Stream::create(gpu());
  const int64_t n = 1 << 20;
  Tensor a = zeros({n}, TensorOptions(gpu()));
  Tensor b = empty({n}, TensorOptions(gpu()));
  Tensor c = empty({n}, TensorOptions(DType::kF64, gpu()));
  Tensor one = ones({n}, TensorOptions(gpu()));
  Tensor three = full({1}, 3.0, TensorOptions(gpu()));
  synchronize(gpu());
  {
    StreamGuard g(s);
    // More dispatches than one batch holds, so batches follow each other.
    for (int i = 0; i < 100; ++i) a.add_(one);  // a = 100
    b.copy_(a);                                  // b = 100
    b.mul_(three);                               // b = 300
    c.copy_(b);                                  // c = 300 (f64, staged)
    a.fill_(-1);                                 // a = -1 after
  }
  s.synchronize();
  CHECK(s.query());
  CHECK(tessera::testing::close_report(host_values(a), std::vector<double>(n, -1.0)) == "");
  CHECK(tessera::testing::close_report(host_values(b), std::vector<double>(n, 300.0)) == "");
  CHECK(tessera::testing::close_report(host_values(c), std::vector<double>(n, 300.0)) == "");

  // Ops on several streams from several threads.
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      Stream st = Stream::create(gpu());
      StreamGuard g(st);
      Tensor v = full({1000}, static_cast<double>(t + 1), TensorOptions(gpu()));
      for (int k = 0; k < 5; ++k) v = add(v, v);
      st.synchronize();
      results[t] = host_values(v);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(results[t] == std::vector<double>(1000, (t + 1) * 32.0));
  }
  synchronize(gpu());
}

// Dense same-dtype copies: whole 16-byte quads through shaders/copy_quads.comp
// where shader copies are on (GPUs, and vulkan_device_staged_copies_test),
// vkCmdCopyBuffer for the rest (odd sizes, offsets not 16-byte aligned).
// Host<->device copies of several staging chunks (16 MiB each) and a tail,
// into and out of an interior address: on the staged path (discrete GPUs,
// and vulkan_device_staged_copies_test) each chunk has a buffer of its own.
TEST_CASE("vulkan: copies larger than a staging chunk", "[vulkan]") {
  REQUIRE_VULKAN();
  DeviceInterface& iface = *vulkan_interface();
  NativeStream s = iface.default_stream(0);
  const size_t n = (size_t{5} << 20) * 2 + 3;  // 2.5 chunks of uint32
  std::vector<uint32_t> src(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
  void* a = iface.raw_allocate(0, (n + 1) * 4);
  REQUIRE(a != nullptr);
  char* interior = static_cast<char*>(a) + 4;
  iface.copy_sync(CopyKind::kHostToDevice, interior, src.data(), n * 4, 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, back.data(), interior, n * 4, 0, s);
  CHECK(back == src);
  // Asynchronous host-to-device copies back to back, then one read.
  std::vector<uint32_t> second(n);
  for (size_t i = 0; i < n; ++i) second[i] = static_cast<uint32_t>(i);
  iface.copy_async(CopyKind::kHostToDevice, interior, src.data(), n * 4, 0, s);
  iface.copy_async(CopyKind::kHostToDevice, interior, second.data(), n * 4, 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, back.data(), interior, n * 4, 0, s);
  CHECK(back == second);
  iface.raw_free(0, a);
}

// Pinned host memory (raw_allocate_host): mapped host buffers that copies
// read and write in place where memory is staged (discrete GPUs, and
// vulkan_device_staged_copies_test); none on unified memory.
TEST_CASE("vulkan: pinned host memory copied in place", "[vulkan]") {
  REQUIRE_VULKAN();
  DeviceInterface& iface = *vulkan_interface();
  NativeStream s = iface.default_stream(0);
  const size_t n = 300000;
  void* pinned = iface.raw_allocate_host(n * 4);
  if (tessera::vulkan::memory_stats(0).unified) {
    CHECK(pinned == nullptr);
    return;
  }
  REQUIRE(pinned != nullptr);
  void* landing = iface.raw_allocate_host(n * 4);
  REQUIRE(landing != nullptr);
  auto* src = static_cast<uint32_t*>(pinned);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
  void* device = iface.raw_allocate(0, n * 4);
  REQUIRE(device != nullptr);
  iface.copy_sync(CopyKind::kHostToDevice, device, pinned, n * 4, 0, s);
  std::memset(landing, 0, n * 4);
  iface.copy_sync(CopyKind::kDeviceToHost, landing, device, n * 4, 0, s);
  CHECK(std::memcmp(landing, pinned, n * 4) == 0);
  // An interior range of a pinned block, into an interior device address.
  auto* dst = static_cast<uint32_t*>(landing);
  iface.copy_sync(CopyKind::kHostToDevice, static_cast<char*>(device) + 40, src + 1000, 400, 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, dst + 7, static_cast<char*>(device) + 40, 400, 0, s);
  CHECK(std::memcmp(dst + 7, src + 1000, 400) == 0);
  iface.raw_free(0, device);
  iface.raw_free_host(pinned);
  iface.raw_free_host(landing);
  CHECK_THROWS_AS(iface.raw_free_host(pinned), ValueError);
}

TEST_CASE("vulkan: dense copies of every size and alignment", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{17}, int64_t{4096},
                    int64_t{1000000}, int64_t{1000003}}) {
    for (int64_t offset : {int64_t{0}, int64_t{1}, int64_t{4}}) {
      INFO("n " << n << ", offset " << offset);
      Tensor host = arange(0, static_cast<double>(n + offset), 1, TensorOptions(DType::kI32));
      Tensor src = host.to(gpu()).narrow(0, offset, n);
      Tensor dst = zeros({n + offset}, TensorOptions(DType::kI32, gpu())).narrow(0, offset, n);
      dst.copy_(src);
      const std::vector<double> got = host_values(dst);
      std::vector<double> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = static_cast<double>(i + offset);
      CHECK(got == want);
      CHECK(host_values(src.clone()) == want);
    }
  }
  CHECK(fallback_count("copy") == 0);
}

TEST_CASE("vulkan: fill, copy and f32 binary run natively", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  const auto ops = KernelRegistry::instance().ops_for(DeviceType::from_name("vulkan"));
  CHECK(std::count(ops.begin(), ops.end(), "fill") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "copy") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "binary") == 1);

  reset_cpu_fallback_counts();
  // fill: every element size, through strides.
  for (DType dtype : {DType::kBool, DType::kI8, DType::kF16, DType::kBF16, DType::kI32,
                      DType::kF32, DType::kI64, DType::kF64}) {
    INFO(std::string(dtype_name(dtype)));
    Tensor t = zeros({6, 8}, TensorOptions(dtype, gpu()));
    Tensor view = t.slice(1, 1, std::nullopt, 3);  // columns 1, 4, 7
    view.fill_(1);
    std::vector<double> want(48, 0.0);
    for (int r = 0; r < 6; ++r) {
      for (int col : {1, 4, 7}) want[r * 8 + col] = 1.0;
    }
    CHECK(host_values(t) == want);
  }
  CHECK(fallback_count("fill") == 0);

  // copy: conversions among f32, f16, i32, i64 and bool, transposed.
  Tensor base = tessera::testing::make_tensor({-2.5, 0.0, 1.75, 3.0, -0.5, 7.25}, {2, 3})
                    .to(gpu());
  Tensor as_f16 = base.to(DType::kF16);
  Tensor as_i32 = base.to(DType::kI32);
  Tensor as_i64 = as_i32.to(DType::kI64);
  Tensor as_bool = base.to(DType::kBool);
  Tensor back = as_i64.t().to(DType::kF32);
  CHECK(host_values(as_f16) == std::vector<double>{-2.5, 0.0, 1.75, 3.0, -0.5, 7.25});
  CHECK(host_values(as_i32) == std::vector<double>{-2, 0, 1, 3, 0, 7});
  CHECK(host_values(as_bool) == std::vector<double>{1, 0, 1, 1, 1, 1});
  CHECK(host_values(back) == std::vector<double>{-2, 3, 0, 0, 1, 7});
  CHECK(fallback_count("copy") == 0);

  // binary: f32 with broadcasting and alpha.
  Tensor col = tessera::testing::make_tensor({1, 2, 3}, {3, 1}).to(gpu());
  Tensor row = tessera::testing::make_tensor({10, 20}, {1, 2}).to(gpu());
  CHECK(host_values(add(col, row, 2)) == std::vector<double>{21, 41, 22, 42, 23, 43});
  CHECK(host_values(sub(row, col)) == std::vector<double>{9, 19, 8, 18, 7, 17});
  CHECK(host_values(div(row, col)) ==
        std::vector<double>{10.0, 20.0, 5.0, 10.0, static_cast<float>(10.0 / 3),
                            static_cast<float>(20.0 / 3)});
  CHECK(fallback_count("binary") == 0);

  // f64 runs in its own shaders where the device has shaderFloat64, and
  // otherwise through the host (counted); vulkan_device_staged_copies_test
  // runs this with TESSERA_VULKAN_SHADER_F64=0.
  const bool f64_native = vulkan::device_info(0).shader_f64;
  Tensor doubles = full({4}, 3, TensorOptions(DType::kF64, gpu()));
  CHECK(host_values(mul(doubles, doubles)) == std::vector<double>(4, 9.0));
  CHECK(fallback_count("binary") == (f64_native ? 0 : 1));

  // With the fallback off a staged op is refused, while the native cases
  // keep working.
  set_cpu_fallback_enabled(false);
  if (f64_native) {
    CHECK(host_values(mul(doubles, doubles)) == std::vector<double>(4, 9.0));
  } else {
    CHECK_THROWS_AS(mul(doubles, doubles), NotImplementedError);
  }
  // The host's ops (special functions) are refused either way.
  CHECK_THROWS_AS(special_function(SpecialOp::kDigamma, doubles), NotImplementedError);
  CHECK(host_values(add(col, row)) == std::vector<double>{11, 21, 12, 22, 13, 23});
  set_cpu_fallback_enabled(true);
}

namespace {

// Values that reach every branch of the f32 shaders: signed zeros, halves
// (round to even), the series/fallback boundaries of expm1, log1p, tanh and
// erf, large arguments, infinities and NaN.
Tensor special_f32_values() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return tessera::testing::make_tensor(
      {0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49, -0.49, 0.51, 1e-6, -1e-6, 1.0, -1.0, 1.99,
       2.01, -3.0, 3.9, 4.1, 8.9, 9.1, -20.0, 30.0, 88.0, -100.0, 100.0, inf, -inf, nan},
      {29});
}

// f32 device results equal the CPU's to f32 tolerance (NaN where NaN).
void check_close(const Tensor& got, const Tensor& want) {
  std::vector<double> g = host_values(got), w = host_values(want);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    if (std::isnan(w[i])) {
      CHECK(std::isnan(g[i]));
    } else if (std::isinf(w[i])) {
      CHECK(g[i] == w[i]);
    } else {
      CHECK(std::fabs(g[i] - w[i]) <= 1e-5 + 1.3e-6 * std::fabs(w[i]));
    }
  }
}

}  // namespace

TEST_CASE("vulkan: f32 unary ops run natively", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  Tensor x = special_f32_values();
  // Strided on the device too: every other element of a wider tensor.
  Tensor wide = zeros({58}, TensorOptions(DType::kF32, gpu()));
  Tensor gx = wide.slice(0, 0, std::nullopt, 2);
  gx.copy_(x.to(gpu()));
  reset_cpu_fallback_counts();
  using UnaryFn = Tensor (*)(const Tensor&);
  const std::vector<std::pair<const char*, UnaryFn>> ops = {
      {"neg", neg},       {"abs", abs},         {"sign", sign},       {"exp", exp},
      {"expm1", expm1},   {"log", log},         {"log1p", log1p},     {"log2", log2},
      {"sqrt", sqrt},     {"rsqrt", rsqrt},     {"reciprocal", reciprocal},
      {"sin", sin},       {"cos", cos},         {"tan", tan},         {"tanh", tanh},
      {"sigmoid", sigmoid}, {"relu", relu},     {"silu", silu},       {"erf", erf},
      {"floor", floor},   {"ceil", ceil},       {"round", round},     {"trunc", trunc},
      {"isnan", isnan},   {"isinf", isinf},     {"isfinite", isfinite},
      {"logical_not", logical_not}};
  for (const auto& [name, fn] : ops) {
    INFO(name);
    check_close(fn(gx), fn(x));
  }
  for (const char* approximate : {"none", "tanh"}) {
    INFO(std::string("gelu ") + approximate);
    check_close(gelu(gx, approximate), gelu(x, approximate));
  }
  check_close(clamp(gx, Scalar(-1.5), Scalar(2.0)), clamp(x, Scalar(-1.5), Scalar(2.0)));
  check_close(clamp_min(gx, Scalar(0.5)), clamp_min(x, Scalar(0.5)));
  check_close(clamp_max(gx, Scalar(0.5)), clamp_max(x, Scalar(0.5)));
  CHECK(fallback_count("unary") == 0);

  // f64: unary_f64.comp where the device has shaderFloat64, else the host.
  const bool f64_native = vulkan::device_info(0).shader_f64;
  Tensor doubles = full({4}, -3, TensorOptions(DType::kF64, gpu()));
  CHECK(host_values(abs(doubles)) == std::vector<double>(4, 3.0));
  CHECK(host_values(sin(zeros({4}, TensorOptions(DType::kF64, gpu())))) ==
        std::vector<double>(4, 0.0));
  CHECK(fallback_count("unary") == (f64_native ? 0 : 2));
}

TEST_CASE("vulkan: f32 comparisons run natively", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Tensor a = tessera::testing::make_tensor({1.0, 2.0, nan, -0.0, inf, -inf}, {6, 1});
  Tensor b = tessera::testing::make_tensor({2.0, 0.0, nan, -inf, 1.0}, {1, 5});
  Tensor ga = a.to(gpu()), gb = b.to(gpu());
  reset_cpu_fallback_counts();
  using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
  const std::vector<std::pair<const char*, BinaryFn>> ops = {
      {"eq", eq}, {"ne", ne}, {"lt", lt}, {"le", le}, {"gt", gt}, {"ge", ge}};
  for (const auto& [name, fn] : ops) {
    INFO(name);
    Tensor got = fn(ga, gb);  // broadcast to 6x5
    CHECK(got.dtype() == DType::kBool);
    CHECK(host_values(got) == host_values(fn(a, b)));
    CHECK(host_values(fn(ga.t(), gb.t())) == host_values(fn(a.t(), b.t())));
  }
  CHECK(fallback_count("pointwise_binary") == 0);
}

TEST_CASE("vulkan: f32 maximum, minimum and activation gradients run natively",
          "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  Tensor x = special_f32_values();
  Tensor g = full({29}, 0.75, TensorOptions(DType::kF32, host_device()));
  Tensor y = tessera::testing::make_tensor({0.5}, {1});  // broadcast
  Tensor gx = x.to(gpu()), gg = g.to(gpu()), gy = y.to(gpu());
  reset_cpu_fallback_counts();
  check_close(maximum(gx, gy), maximum(x, y));
  check_close(minimum(gy, gx), minimum(y, x));
  check_close(threshold_backward(gg, gx, 0.5), threshold_backward(g, x, 0.5));
  check_close(relu_backward(gg, gx), relu_backward(g, x));
  check_close(gelu_backward(gg, gx), gelu_backward(g, x));
  check_close(gelu_backward(gg, gx, "tanh"), gelu_backward(g, x, "tanh"));
  check_close(silu_backward(gg, gx), silu_backward(g, x));
  Tensor s = sigmoid(x), t = tanh(x);
  check_close(sigmoid_backward(gg, s.to(gpu())), sigmoid_backward(g, s));
  check_close(tanh_backward(gg, t.to(gpu())), tanh_backward(g, t));
  CHECK(fallback_count("pointwise_binary") == 0);
}

TEST_CASE("vulkan: pointwise_binary on f64 runs natively where the device has shaderFloat64",
          "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  reset_cpu_fallback_counts();
  const bool f64_native = vulkan::device_info(0).shader_f64;
  Tensor doubles = full({4}, 3, TensorOptions(DType::kF64, gpu()));
  CHECK(host_values(eq(doubles, doubles)) == std::vector<double>(4, 1.0));
  CHECK(host_values(gelu_backward(doubles, zeros({4}, TensorOptions(DType::kF64, gpu())))) ==
        std::vector<double>(4, 1.5));
  CHECK(fallback_count("pointwise_binary") == (f64_native ? 0 : 2));
}

TEST_CASE("vulkan: f32 where, lerp, addcmul and addcdiv run natively", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor cond = tessera::testing::make_tensor({1, 0, 0, 1}, {4, 1}).to(DType::kBool);
  Tensor x = tessera::testing::make_tensor({1.0, -2.0, nan}, {1, 3});
  Tensor y = tessera::testing::make_tensor({10.0, 20.0, 30.0, 40.0}, {4, 1});
  Tensor w = tessera::testing::make_tensor({0.0, 0.25, 1.0}, {1, 3});
  Tensor gcond = cond.to(gpu()), gx = x.to(gpu()), gy = y.to(gpu()), gw = w.to(gpu());
  reset_cpu_fallback_counts();
  // Broadcast to 4x3, and transposed.
  check_close(where(gcond, gx, gy), where(cond, x, y));
  check_close(where(gcond.t(), gx.t(), gy.t()), where(cond.t(), x.t(), y.t()));
  check_close(lerp(gy, gx, gw), lerp(y, x, w));
  check_close(addcmul(gy, gx, gw, 0.5), addcmul(y, x, w, 0.5));
  check_close(addcdiv(gy, gx, gw, 2), addcdiv(y, x, w, 2));
  CHECK(fallback_count("ternary") == 0);

  // f64: in ternary_f64.comp where the device has shaderFloat64, else
  // through the host.
  Tensor doubles = full({4}, 3, TensorOptions(DType::kF64, gpu()));
  CHECK(host_values(where(gcond.reshape({4}), doubles, doubles)) == std::vector<double>(4, 3.0));
  CHECK(fallback_count("ternary") == (vulkan::device_info(0).shader_f64 ? 0 : 1));
}

// int64 products on gemm_i64.comp where the device has 8/16/64-bit shader
// types: sums wrap modulo 2^64 as the CPU device's do, so operands up to
// 2^40 over K = 40 (products past 2^80) must give the CPU's bits exactly.
TEST_CASE("vulkan: int64 matrix products wrap as the CPU device's", "[vulkan][kernels]") {
  REQUIRE_VULKAN();
  auto ints = [](Shape shape, uint64_t seed) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    constexpr int64_t kBound = int64_t{1} << 40;
    return tessera::testing::make_tensor(tessera::testing::lcg_ints(n, seed, -kBound, kBound),
                                         shape, DType::kI64);
  };
  auto same = [](const Tensor& got, const Tensor& want) {
    CHECK(got.to(host_device()).contiguous().to_vector<int64_t>() ==
          want.contiguous().to_vector<int64_t>());
  };
  reset_cpu_fallback_counts();
  // Partial 64 x 64 tiles, K not a multiple of the 16-deep slices, a
  // transposed operand, a row bias, a broadcast batch, vectors.
  Tensor a = ints({70, 40}, 1), b = ints({65, 40}, 2), bias = ints({65}, 3);
  Tensor batch_a = ints({3, 17, 33}, 4), batch_b = ints({33, 9}, 5), v = ints({40}, 6);
  Tensor ga = a.to(gpu()), gb = b.to(gpu());
  same(mm(ga, gb.t()), mm(a, b.t()));
  same(addmm(bias.to(gpu()), ga, gb.t()), addmm(bias, a, b.t()));
  same(matmul(batch_a.to(gpu()), batch_b.to(gpu())), matmul(batch_a, batch_b));
  same(mv(ga, v.to(gpu())), mv(a, v));
  same(dot(gb.select(0, 3), v.to(gpu())), dot(b.select(0, 3), v));
  const bool native = vulkan::device_info(0).shader_int64 && vulkan::device_info(0).shader_f16 &&
                      vulkan::device_info(0).shader_int8;
  if (native) CHECK(fallback_count("bmm") == 0);
  else CHECK(fallback_count("bmm") > 0);
}
