// The CPU implementation of the device interface (see cpu_device.h for the
// design, cpu_stream.h for why streams and events are trivial here).
#include "devices/cpu/cpu_device.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "devices/cpu/cpu_event.h"
#include "devices/cpu/cpu_memory.h"
#include "devices/cpu/cpu_stream.h"
#include "devices/cpu/kernels/cpu_isa.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::cpu {
namespace {

// The value of the first "key : value" line of /proc/cpuinfo whose key is
// `key`, or "" if there is none (e.g. on other operating systems).
std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k != key) continue;
    std::string v = line.substr(colon + 1);
    size_t first = v.find_first_not_of(" \t");
    return first == std::string::npos ? std::string() : v.substr(first);
  }
  return {};
}

std::string cpu_vendor() {
  std::string id = cpuinfo_field("vendor_id");
  if (id == "GenuineIntel") return "Intel";
  if (id == "AuthenticAMD") return "AMD";
  if (!id.empty()) return id;
  std::string implementer = cpuinfo_field("CPU implementer");  // Arm: a hex code
  if (implementer == "0x41") return "Arm";
  if (!implementer.empty()) return "Arm implementer " + implementer;
  return "unknown";
}

// TESSERA_NUM_THREADS=n caps the threads of the CPU kernels at n (as
// OMP_NUM_THREADS / torch.set_num_threads do for PyTorch), e.g. to compare
// with PyTorch at equal thread counts. Read once, when the device registers.
// The control object is deliberately never destroyed: it must outlive every
// kernel call, including ones from other static destructors.
void apply_thread_limit() {
  // 0: unset (or a bad value, reported on stderr): the default.
  const long n = env_integer("TESSERA_NUM_THREADS", 0, 1, 4096);
  if (n == 0) return;
  new oneapi::tbb::global_control(oneapi::tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(n));
}

DeviceProperties query_properties() {
  DeviceProperties p;
  const int threads = max_threads();
  std::string model = cpuinfo_field("model name");
  if (model.empty()) model = "CPU";
  p.name = model + " (" + std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
  p.vendor = cpu_vendor();
  p.total_memory = total_host_memory();
  p.compute_units = threads;
  p.host_accessible = true;
  p.supports_f16 = true;
  p.supports_f64 = true;
  p.supports_i64 = true;
  return p;
}

class CpuDevice final : public DeviceInterface {
 public:
  std::string_view type_name() const override { return kDeviceTypeName; }
  int device_count() override { return 1; }

  DeviceProperties properties(int index) override {
    check_index(index, "properties");
    static const DeviceProperties props = query_properties();
    return props;
  }

  MemoryInfo memory_info(int index) override {
    check_index(index, "memory_info");
    MemoryInfo info;
    info.total = total_host_memory();
    info.free = std::min(available_host_memory(), info.total);
    return info;
  }

  void* raw_allocate(int index, size_t nbytes) override {
    check_index(index, "raw_allocate");
    return aligned_host_alloc(nbytes);
  }

  void raw_free(int index, void* ptr) override {
    check_index(index, "raw_free");
    aligned_host_free(ptr);
  }

  // Host memory on both sides whatever the kind: a (parallel) memcpy, done
  // when this returns.
  void copy_async(CopyKind, void* dst, const void* src, size_t nbytes, int index,
                  NativeStream stream) override {
    check_index(index, "copy_async");
    as_cpu_stream(stream, "copy_async");
    if (nbytes == 0) return;
    TESSERA_CHECK(dst != nullptr && src != nullptr, DeviceError, "cpu copy_async: null ",
                  dst == nullptr ? "destination" : "source", " pointer for ", nbytes, " bytes");
    parallel_memcpy(dst, src, nbytes);
  }

  NativeStream default_stream(int index) override {
    check_index(index, "default_stream");
    return default_cpu_stream();
  }
  NativeStream create_stream(int index) override {
    check_index(index, "create_stream");
    return create_cpu_stream();
  }
  void destroy_stream(int index, NativeStream stream) override {
    check_index(index, "destroy_stream");
    destroy_cpu_stream(static_cast<CpuStream*>(stream));
  }
  bool query_stream(int index, NativeStream stream) override {
    check_index(index, "query_stream");
    as_cpu_stream(stream, "query_stream");
    return true;
  }
  void synchronize_stream(int index, NativeStream stream) override {
    check_index(index, "synchronize_stream");
    as_cpu_stream(stream, "synchronize_stream");
  }

  NativeEvent create_event(int index) override {
    check_index(index, "create_event");
    return new CpuEvent();
  }
  void destroy_event(int index, NativeEvent event) override {
    check_index(index, "destroy_event");
    delete static_cast<CpuEvent*>(event);
  }
  void record_event(int index, NativeEvent event, NativeStream stream) override {
    check_index(index, "record_event");
    as_cpu_stream(stream, "record_event");
    as_cpu_event(event, "record_event")->record();
  }
  void stream_wait_event(int index, NativeStream stream, NativeEvent event) override {
    check_index(index, "stream_wait_event");
    as_cpu_stream(stream, "stream_wait_event");
    as_cpu_event(event, "stream_wait_event");
  }
  bool query_event(int index, NativeEvent event) override {
    check_index(index, "query_event");
    as_cpu_event(event, "query_event");
    return true;
  }
  void synchronize_event(int index, NativeEvent event) override {
    check_index(index, "synchronize_event");
    as_cpu_event(event, "synchronize_event");
  }
  double elapsed_ms(int index, NativeEvent start, NativeEvent end) override {
    check_index(index, "elapsed_ms");
    return cpu_elapsed_ms(*as_cpu_event(start, "elapsed_ms"), *as_cpu_event(end, "elapsed_ms"));
  }

  void synchronize_device(int index) override { check_index(index, "synchronize_device"); }

  // Called from DeviceRegistry::register_device after the type is added,
  // so the name already resolves.
  void register_kernels(KernelRegistry& registry) override {
    apply_thread_limit();
    cpu_has_avx512();  // reads TESSERA_CPU_ISA now, so a bad value is reported at load
    register_all_kernels(registry, DeviceType::from_name(kDeviceTypeName));
  }

 private:
  static void check_index(int index, const char* op) {
    TESSERA_CHECK(index == 0, ValueError, "cpu ", op, ": device cpu:", index,
                  " does not exist (1 cpu device)");
  }
};

}  // namespace

void link() {}

}  // namespace tessera::cpu

TESSERA_REGISTER_DEVICE(std::make_unique<tessera::cpu::CpuDevice>());
