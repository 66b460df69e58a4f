// The CUDA device: on a machine without a GPU (CI), zero devices and clear
// errors; with one, enumeration, raw memory and copies in every direction,
// streams and events (the pattern of the Vulkan device test), the caching
// allocator on device memory (out of memory under a memory fraction, then
// recovery), pinned host memory with asynchronous copies, copies between
// two GPUs, and that the kernels of the op set run natively.
// The GPU cases are skipped, not passed, on a machine without one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "devices/cuda/cuda_device.h"
#include "devices/cuda/cudnn_status.h"
#include "runtime/alloc/caching_allocator.h"
#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/error.h"
#include "runtime/core/storage.h"
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

DeviceInterface* cuda_interface() { return DeviceRegistry::instance().find("cuda"); }

bool have_cuda() {
  DeviceInterface* iface = cuda_interface();
  return iface != nullptr && iface->device_count() > 0;
}

Device gpu() { return Device::parse("cuda:0"); }

std::vector<double> host_values(const Tensor& t) {
  return tessera::testing::read_strided(t.to(host_device()));
}

}  // namespace

#define REQUIRE_CUDA() \
  if (!have_cuda()) TESSERA_SKIP("no CUDA device on this machine (" + cuda::unavailable_reason() + ")")

TEST_CASE("cuda: without a GPU there are zero devices and clear errors", "[cuda][no_gpu]") {
  DeviceInterface* iface = cuda_interface();
  REQUIRE(iface != nullptr);  // the type registers whether or not CUDA works
  if (iface->device_count() > 0) TESSERA_SKIP("this machine has a CUDA device");
  CHECK(iface->device_count() == 0);
  CHECK(iface->device_count() == 0);  // asking again is just as quiet
  CHECK_FALSE(cuda::unavailable_reason().empty());
  CHECK_THROWS_AS(iface->properties(0), ValueError);
  CHECK_THROWS_AS(cuda::device_info(0), ValueError);
  CHECK_THROWS_AS(iface->raw_allocate(0, 16), ValueError);
  try {
    zeros({2}, TensorOptions(Device::parse("cuda:0")));
    FAIL("making a tensor on an absent GPU must fail");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("cuda:0") != std::string::npos);
  }
  // The host keeps working.
  CHECK(ones({3}).to_vector<double>() == std::vector<double>{1, 1, 1});
}

TEST_CASE("cuda: every kernel of the op set is registered", "[cuda]") {
  // Registration happens with or without a GPU: a kernel missing here
  // would run through the CPU fallback there.
  // Optional kernels (fast paths with a composite) may be missing.
  const KernelRegistry& registry = KernelRegistry::instance();
  CHECK(registry.required_ops_for(DeviceType::from_name("cuda")) ==
        registry.required_ops_for(DeviceType::from_name("cpu")));
  // The special functions are optional, and native here too.
  const std::vector<std::string> ops = registry.ops_for(DeviceType::from_name("cuda"));
  CHECK(std::count(ops.begin(), ops.end(), "special_function") == 1);
}

TEST_CASE("cuda: enumeration and properties", "[cuda]") {
  REQUIRE_CUDA();
  DeviceInterface& iface = *cuda_interface();
  const DeviceProperties p = iface.properties(0);
  CHECK_FALSE(p.name.empty());
  CHECK(p.vendor == "NVIDIA");
  CHECK(p.total_memory > 0);
  CHECK(p.compute_units > 0);
  CHECK_FALSE(p.host_accessible);
  CHECK_FALSE(p.software);
  const MemoryInfo m = iface.memory_info(0);
  CHECK(m.total > 0);
  CHECK(m.free <= m.total);
  const cuda::CudaDeviceInfo info = cuda::device_info(0);
  CHECK(info.compute_capability >= 70);
  CHECK(info.multiprocessors == p.compute_units);
  CHECK(p.native_index == info.ordinal);  // what DLPack and torch.cuda call it
  CHECK(info.l2_cache_bytes > 0);
  CHECK(info.driver_version >= info.runtime_version);
  CHECK_FALSE(info.pci_bus_id.empty());
  CHECK_FALSE(info.failed);
  CHECK(cuda::unavailable_reason().empty());
  CHECK_THROWS_AS(iface.properties(iface.device_count()), ValueError);
}

TEST_CASE("cuda: raw memory and copies in every direction", "[cuda]") {
  REQUIRE_CUDA();
  DeviceInterface& iface = *cuda_interface();
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
  // Interior pointers are plain device addresses.
  uint32_t marker[3] = {7, 8, 9};
  iface.copy_sync(CopyKind::kHostToDevice, static_cast<char*>(a) + 400, marker, sizeof(marker), 0, s);
  iface.copy_sync(CopyKind::kDeviceToHost, back.data(), a, n * 4, 0, s);
  CHECK(back[99] == src[99]);
  CHECK(back[100] == 7);
  CHECK(back[102] == 9);
  CHECK(back[103] == src[103]);
  iface.raw_free(0, a);
  iface.raw_free(0, b);
  // An impossible request is out of memory (nullptr), not an error.
  CHECK(iface.raw_allocate(0, size_t{1} << 62) == nullptr);
  CHECK_FALSE(cuda::device_info(0).failed);
}

TEST_CASE("cuda: default stream and created streams", "[cuda][stream]") {
  REQUIRE_CUDA();
  Stream d = Stream::default_stream(gpu());
  CHECK(d.is_default());
  CHECK(d.device() == gpu());
  CHECK(current_stream(gpu()) == d);
  CHECK(d.native() != nullptr);  // the device's own non-blocking stream
  d.synchronize();
  CHECK(d.query());
  std::set<void*> natives;
  for (int i = 0; i < 5; ++i) natives.insert(Stream::create(gpu()).native());
  CHECK(natives.size() == 5);
  CHECK(natives.count(d.native()) == 0);
  Stream s1 = Stream::create(gpu());
  {
    StreamGuard g(s1);
    CHECK(current_stream(gpu()) == s1);
  }
  CHECK(current_stream(gpu()).is_default());
}

TEST_CASE("cuda: events record, query, synchronize and time", "[cuda][event]") {
  REQUIRE_CUDA();
  Stream s = Stream::create(gpu());
  Event start(gpu());
  Event end(gpu());
  start.record(s);
  Tensor a;
  {
    StreamGuard g(s);
    a = ones({1024, 1024}, TensorOptions(gpu()));
    for (int i = 0; i < 10; ++i) a = add(a, a);
  }
  end.record(s);
  end.synchronize();
  CHECK(end.query());
  CHECK(start.query());
  const double ms = start.elapsed_time(end);
  CHECK(ms >= 0.0);
  CHECK(ms < 60000.0);
  CHECK(host_values(a) == std::vector<double>(1024 * 1024, 1024.0));
  Event fresh(gpu());
  CHECK_THROWS(fresh.elapsed_time(end));
}

TEST_CASE("cuda: a stream blocked on an event sees the work before it", "[cuda][event]") {
  REQUIRE_CUDA();
  Stream producer = Stream::create(gpu());
  Stream consumer = Stream::create(gpu());
  Tensor x = zeros({1000, 1000}, TensorOptions(gpu()));
  Tensor one = ones({1000, 1000}, TensorOptions(gpu()));
  synchronize(gpu());
  Event ready(gpu());
  {
    StreamGuard g(producer);
    for (int i = 0; i < 20; ++i) x.add_(one);  // long enough to race
    ready.record(producer);
  }
  ready.block(consumer);
  Tensor y;
  {
    StreamGuard g(consumer);
    y = mul(x, x);
  }
  consumer.synchronize();
  CHECK(tessera::testing::close_report(host_values(y), std::vector<double>(1000000, 400.0)) == "");
}

TEST_CASE("cuda: ops on several streams from several threads", "[cuda][stream]") {
  REQUIRE_CUDA();
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
  for (int t = 0; t < 4; ++t) CHECK(results[t] == std::vector<double>(1000, (t + 1) * 32.0));
  synchronize(gpu());
}

TEST_CASE("cuda: out of memory under a memory fraction, then recovery", "[cuda][memory]") {
  REQUIRE_CUDA();
  CachingAllocator& alloc = CachingAllocator::get(gpu());
  const MemoryInfo m = cuda_interface()->memory_info(0);
  alloc.set_memory_fraction(0.05);
  const int64_t too_many = static_cast<int64_t>(m.total / 4 / 4);  // a quarter of the GPU, in floats
  try {
    empty({too_many}, TensorOptions(gpu()));
    FAIL("an allocation over the memory fraction must fail");
  } catch (const OutOfMemoryError& e) {
    CHECK(std::string(e.what()).find("cuda:0") != std::string::npos);
  }
  alloc.set_memory_fraction(1.0);
  Tensor fits = full({1 << 20}, 2.0, TensorOptions(gpu()));
  CHECK(host_values(sum(fits))[0] == 2.0 * (1 << 20));
  CHECK_FALSE(cuda::device_info(0).failed);
}

TEST_CASE("cuda: the op set runs natively, never through the CPU fallback", "[cuda][kernels]") {
  REQUIRE_CUDA();
  reset_cpu_fallback_counts();
  set_cpu_fallback_enabled(false);
  struct Restore {
    ~Restore() { set_cpu_fallback_enabled(true); }
  } restore;
  const TensorOptions on(gpu());
  Tensor a = randn({64, 32}, on);
  Tensor b = randn({32, 16}, on);
  Tensor idx = randint(0, 64, {10}, TensorOptions(DType::kI64, gpu()));
  Tensor mm_ab = mm(a, b);
  Tensor s = softmax(a, 1);
  Tensor ln = layer_norm(a, {32});
  Tensor sel = index_select(a, 0, idx);
  Tensor srt = argsort(a, 1);
  Tensor cs = cumsum(a, 1);
  Tensor nz = nonzero(gt(a, Scalar(1.0)));
  Tensor am = argmax(a, 1);
  synchronize(gpu());
  CHECK(cpu_fallback_counts().empty());
  // Against the CPU device.
  const Tensor ha = a.to(host_device()), hb = b.to(host_device());
  CHECK(tessera::testing::close_report(host_values(mm_ab), host_values(mm(ha, hb)), 1e-4, 1e-4) == "");
  CHECK(tessera::testing::close_report(host_values(s), host_values(softmax(ha, 1)), 1e-5, 1e-6) == "");
  CHECK(tessera::testing::close_report(host_values(cs), host_values(cumsum(ha, 1)), 1e-5, 1e-5) == "");
  CHECK(host_values(am) == host_values(argmax(ha, 1)));
  CHECK(host_values(nz) == host_values(nonzero(gt(ha, Scalar(1.0)))));
}

TEST_CASE("cuda: pinned host memory and asynchronous copies", "[cuda][pinned]") {
  REQUIRE_CUDA();
  const int64_t n = int64_t{1} << 22;  // 16 MiB of floats
  Tensor src = empty_pinned({n}, DType::kF32);
  REQUIRE(src.is_pinned());
  CHECK(PinnedHostAllocator::get().page_locked(src.data_ptr()));  // cudaHostAlloc'd
  float* s = static_cast<float*>(src.data_ptr());
  for (int64_t i = 0; i < n; ++i) s[i] = static_cast<float>(i % 1000);

  const Stream stream = current_stream(gpu());
  // Queue the copies behind about 20 ms of GEMMs, so that returning before
  // the stream reaches them shows they are asynchronous.
  Tensor busy = full({4096, 4096}, 1.0, TensorOptions(gpu()));
  for (int i = 0; i < 8; ++i) busy = mul(matmul(busy, busy), Scalar(1.0 / 4096));
  Tensor on_gpu = empty({n}, TensorOptions(gpu()));
  on_gpu.copy_(src, /*non_blocking=*/true);
  CHECK_FALSE(stream.query());

  // The source dies while its copy may be queued: its block is not handed
  // out again before the stream passes the copy.
  void* block = src.data_ptr();
  src = Tensor();
  Tensor next = empty_pinned({n}, DType::kF32);
  if (!stream.query()) CHECK(next.data_ptr() != block);

  // Device to pinned host: in flight until synchronized.
  next.copy_(mul(on_gpu, Scalar(2.0)), /*non_blocking=*/true);
  stream.synchronize();
  const float* r = static_cast<const float*>(next.data_ptr());
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += r[i] != 2.0f * static_cast<float>(i % 1000);
  CHECK(wrong == 0);

  // From pageable memory non_blocking still completes before returning:
  // the caller may overwrite its buffer at once.
  std::vector<float> pageable(1000, 3.0f);
  Tensor small = empty({1000}, TensorOptions(gpu()));
  busy = matmul(busy, busy);
  const Tensor borrowed = Tensor::from_storage(
      std::make_shared<Storage>(host_device(), pageable.data(), pageable.size() * 4, nullptr),
      DType::kF32, {1000}, {1});
  small.copy_(borrowed, /*non_blocking=*/true);
  std::fill(pageable.begin(), pageable.end(), -1.0f);
  CHECK(host_values(small) == std::vector<double>(1000, 3.0));
  // Empty host cache returns the free page-locked blocks.
  next = Tensor();
  synchronize(gpu());
  PinnedHostAllocator::get().empty_cache();
  CHECK(PinnedHostAllocator::get().stats().cached_bytes == 0);
}

TEST_CASE("cuda: copies between two GPUs", "[cuda][peer]") {
  REQUIRE_CUDA();
  if (cuda_interface()->device_count() < 2) TESSERA_SKIP("needs two CUDA devices");
  const Device a = Device::parse("cuda:0"), b = Device::parse("cuda:1");
  Tensor x = randn({300, 70}, TensorOptions(a));
  const std::vector<double> expected = host_values(x);
  Tensor same = empty({300, 70}, TensorOptions(b));
  same.copy_(x);
  CHECK(host_values(same) == expected);
  // Strided and cast on the way: staged on the receiving GPU.
  Tensor strided = empty({70, 300}, TensorOptions(DType::kF64, b)).t();
  strided.copy_(x);
  CHECK(host_values(strided) == expected);
  Tensor back = x.t().to(b).t().to(a);
  CHECK(host_values(back) == expected);
}

namespace {

// Sets an environment variable for a scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

TEST_CASE("cuda: conv2d on cuDNN matches the im2col path, the same bits every run",
          "[cuda][cudnn]") {
  REQUIRE_CUDA();
  if (!cuda::cudnn_available()) {
    TESSERA_SKIP("cuDNN cannot be loaded here: " + cuda::cudnn_unavailable_reason());
  }
  struct Geometry {
    const char* what;
    Shape x, w, stride, padding, dilation;
    int64_t groups;
    bool channels_last;
  };
  const std::vector<Geometry> geometries = {
      {"3x3, padding 1", {4, 16, 20, 20}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
      {"stride 2, dilation 2", {2, 8, 33, 31}, {12, 8, 3, 3}, {2, 2}, {2, 2}, {2, 2}, 1, false},
      {"4 groups", {2, 16, 12, 12}, {16, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, false},
      {"depthwise 7x7", {2, 32, 28, 28}, {32, 1, 7, 7}, {1, 1}, {3, 3}, {1, 1}, 32, false},
      {"1x1, channels-last", {8, 64, 14, 14}, {128, 64, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
      {"7x7 stride 2, NHWC", {2, 3, 64, 64}, {16, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, true},
  };
  const TensorOptions f32(DType::kF32, gpu());
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    // Relative to each result's largest magnitude: the two paths sum in
    // different orders, each rounding once to the dtype.
    const double tol = dtype == DType::kF64   ? 1e-12
                       : dtype == DType::kF32 ? 1e-5
                       : dtype == DType::kF16 ? 4e-3
                                              : 3e-2;
    for (const Geometry& g : geometries) {
      INFO(dtype_name(dtype) << ", " << g.what);
      const Shape& xs = g.x;
      const Tensor x =
          g.channels_last ? randn({xs[0], xs[2], xs[3], xs[1]}, f32).permute({0, 3, 1, 2}).to(dtype)
                          : randn(xs, f32).to(dtype);
      const Tensor w = randn(g.w, f32).to(dtype);
      const Tensor b = randn({g.w[0]}, f32).to(dtype);
      const Tensor y0 = conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
      const Tensor dy = randn(y0.sizes(), f32).to(dtype);
      auto run = [&](const char* cudnn) {
        ScopedEnv on("TESSERA_CUDA_CUDNN", cudnn);
        const Tensor y = conv2d(x, w, b, g.stride, g.padding, g.dilation, g.groups);
        auto [gi, gw, gb] =
            convolution_backward(dy, x, w, g.stride, g.padding, g.dilation, g.groups);
        return std::vector<std::vector<double>>{host_values(y), host_values(gi), host_values(gw),
                                                host_values(gb)};
      };
      const int64_t before = cuda::cudnn_convolution_calls();
      const auto with = run("1");
      // f32 and f16 (what models run) must take cuDNN in every direction:
      // forward, data and filter; f64 and bf16 may leave a direction with
      // no deterministic algorithm to im2col (stderr says which).
      const int64_t taken = cuda::cudnn_convolution_calls() - before;
      if (dtype == DType::kF32 || dtype == DType::kF16) {
        CHECK(taken == 3);
      } else {
        CHECK(taken <= 3);
      }
      CHECK(run("1") == with);
      const auto without = run("0");
      CHECK(cuda::cudnn_convolution_calls() - before == 2 * taken);
      const char* names[] = {"output", "grad_input", "grad_weight", "grad_bias"};
      for (size_t i = 0; i < with.size(); ++i) {
        INFO(names[i]);
        const double atol = tol * max_abs(without[i]);
        CHECK(tessera::testing::close_report(with[i], without[i], 0, atol) == "");
      }
    }
  }
}

TEST_CASE("cuda: a cuDNN that cannot be loaded is a reason, not an error", "[cuda][cudnn]") {
  if (cuda::cudnn_available()) TESSERA_SKIP("cuDNN loads on this machine");
  const std::string& why = cuda::cudnn_unavailable_reason();
  INFO(why);
  const char* named = std::getenv("TESSERA_CUDNN_LIBRARY");
  const std::string file = named != nullptr && *named != '\0' ? named : "libcudnn.so.9";
  CHECK(why.find(file) != std::string::npos);
  CHECK(cuda::cudnn_convolution_calls() == 0);
}
