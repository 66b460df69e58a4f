// The CUDA implementation of the device interface (see cuda_device.h for
// the design). Every entry point selects the device (DeviceScope) because
// the CUDA runtime's current device is per thread.
#include "devices/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "devices/cuda/cuda_check.h"
#include "devices/cuda/cuda_context.h"
#include "devices/cuda/cuda_wait.h"
#include "devices/cuda/kernels/conv2d_cudnn.h"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/core/error.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_registry.h"
#include "runtime/ops/kernel_registry.h"

namespace tessera::cuda {
namespace {

cudaStream_t as_stream(NativeStream stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t as_event(NativeEvent event) { return static_cast<cudaEvent_t>(event); }

DeviceProperties to_properties(const cudaDeviceProp& p, int ordinal) {
  DeviceProperties out;
  out.native_index = ordinal;
  out.name = p.name;
  out.vendor = "NVIDIA";
  out.total_memory = p.totalGlobalMem;
  out.compute_units = p.multiProcessorCount;
  out.host_accessible = false;
  out.software = false;
  out.supports_f16 = true;
  out.supports_f64 = true;
  out.supports_i64 = true;
  return out;
}

// Lets `to` read and write `from`'s memory, once per pair, where the
// driver allows it (cudaDeviceCanAccessPeer); where it does not, peer
// copies still work, staged by the driver.
void enable_peer_access(const CudaContext& to, const CudaContext& from) {
  if (to.ordinal() == from.ordinal()) return;
  static std::mutex mutex;
  static std::set<std::pair<int, int>> tried;
  std::lock_guard<std::mutex> lock(mutex);
  if (!tried.emplace(to.ordinal(), from.ordinal()).second) return;
  int can_access = 0;
  if (cudaDeviceCanAccessPeer(&can_access, to.ordinal(), from.ordinal()) != cudaSuccess ||
      can_access == 0) {
    cudaGetLastError();
    return;
  }
  DeviceScope scope(to);
  const cudaError_t error = cudaDeviceEnablePeerAccess(from.ordinal(), 0);
  // Already enabled (by another library) is fine; any other refusal leaves
  // the driver's staged path, which is still correct.
  if (error != cudaSuccess) cudaGetLastError();
}

class CudaDevice final : public DeviceInterface {
 public:
  std::string_view type_name() const override { return kDeviceTypeName; }
  int device_count() override { return cuda::device_count(); }

  DeviceProperties properties(int index) override {
    CudaContext& device = context(index, "properties");
    return to_properties(device.properties(), device.ordinal());
  }

  MemoryInfo memory_info(int index) override {
    CudaContext& c = context(index, "memory_info");
    DeviceScope scope(c);
    size_t free = 0, total = 0;
    TESSERA_CUDA_CHECK(cudaMemGetInfo(&free, &total), index);
    return MemoryInfo{free, total};
  }

  void* raw_allocate(int index, size_t nbytes) override {
    CudaContext& c = context(index, "raw_allocate");
    if (nbytes == 0) return nullptr;
    DeviceScope scope(c);
    void* ptr = nullptr;
    const cudaError_t error = cudaMalloc(&ptr, nbytes);
    if (error == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the caching allocator frees and retries
      return nullptr;
    }
    if (error != cudaSuccess) throw_cuda_error(error, "cudaMalloc", index);
    return ptr;
  }

  void raw_free(int index, void* ptr) override {
    if (ptr == nullptr) return;
    // Freeing on a failed device still returns what can be returned.
    if (index < 0 || index >= cuda::device_count()) return;
    CudaContext& c = *contexts()[static_cast<size_t>(index)];
    DeviceScope scope(c);
    const cudaError_t error = cudaFree(ptr);
    if (error != cudaSuccess && !c.failed()) throw_cuda_error(error, "cudaFree", index);
  }

  void copy_async(CopyKind kind, void* dst, const void* src, size_t nbytes, int index,
                  NativeStream stream) override {
    CudaContext& c = context(index, "copy_async");
    if (nbytes == 0) return;
    TESSERA_CHECK(dst != nullptr && src != nullptr, DeviceError, "cuda copy_async: null ",
                  dst == nullptr ? "destination" : "source", " pointer for ", nbytes, " bytes");
    const cudaMemcpyKind k = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                             : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                               : cudaMemcpyDeviceToDevice;
    DeviceScope scope(c);
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, k, as_stream(stream)), index);
  }

  // Page-locked and portable (every CUDA device of the process copies from
  // it asynchronously), for the runtime's pinned host allocator.
  void* raw_allocate_host(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    for (const std::unique_ptr<CudaContext>& c : contexts()) {
      if (c->failed()) continue;
      DeviceScope scope(*c);
      void* ptr = nullptr;
      const cudaError_t error = cudaHostAlloc(&ptr, nbytes, cudaHostAllocPortable);
      if (error == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // not sticky: the allocator frees its cache and retries
        return nullptr;
      }
      if (error != cudaSuccess) throw_cuda_error(error, "cudaHostAlloc", c->index());
      return ptr;
    }
    return nullptr;  // no usable device: the allocator uses ordinary memory
  }
  void raw_free_host(void* ptr) override {
    if (ptr == nullptr) return;
    const cudaError_t error = cudaFreeHost(ptr);
    if (error != cudaSuccess) {
      cudaGetLastError();
      throw DeviceError(std::string("cuda: cudaFreeHost failed: ") + cudaGetErrorName(error) +
                        ": " + cudaGetErrorString(error));
    }
  }

  // cudaMemcpyPeerAsync copies between any two devices; with peer access
  // enabled (where the driver allows) it goes over NVLink or PCIe directly,
  // otherwise the driver stages it through the host.
  bool copy_peer_async(int dst_index, void* dst, int src_index, const void* src, size_t nbytes,
                       NativeStream stream) override {
    CudaContext& to = context(dst_index, "copy_peer_async");
    CudaContext& from = context(src_index, "copy_peer_async");
    if (nbytes == 0) return true;
    enable_peer_access(to, from);
    DeviceScope scope(to);
    TESSERA_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to.ordinal(), src, from.ordinal(), nbytes,
                                           as_stream(stream)),
                       dst_index);
    return true;
  }

  NativeStream default_stream(int index) override {
    return context(index, "default_stream").default_stream();
  }
  NativeStream create_stream(int index) override {
    CudaContext& c = context(index, "create_stream");
    DeviceScope scope(c);
    cudaStream_t s = nullptr;
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), index);
    c.add_stream(s);
    return s;
  }
  void destroy_stream(int index, NativeStream stream) override {
    if (index < 0 || index >= cuda::device_count() || stream == nullptr) return;
    CudaContext& c = *contexts()[static_cast<size_t>(index)];
    c.remove_stream(as_stream(stream));
    DeviceScope scope(c);
    cudaStreamDestroy(as_stream(stream));  // waits for nothing; enqueued work still runs
  }
  bool query_stream(int index, NativeStream stream) override {
    CudaContext& c = context(index, "query_stream");
    DeviceScope scope(c);
    const cudaError_t status = cudaStreamQuery(as_stream(stream));
    if (status == cudaErrorNotReady) return false;
    if (status != cudaSuccess) throw_cuda_error(status, "cudaStreamQuery", index);
    return true;
  }
  void synchronize_stream(int index, NativeStream stream) override {
    CudaContext& c = context(index, "synchronize_stream");
    DeviceScope scope(c);
    wait_until_done(c, [&] { return cudaStreamQuery(as_stream(stream)); }, "cudaStreamQuery");
  }

  NativeEvent create_event(int index) override {
    CudaContext& c = context(index, "create_event");
    DeviceScope scope(c);
    cudaEvent_t e = nullptr;
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDefault), index);  // with timing
    return e;
  }
  void destroy_event(int index, NativeEvent event) override {
    if (index < 0 || index >= cuda::device_count() || event == nullptr) return;
    DeviceScope scope(*contexts()[static_cast<size_t>(index)]);
    cudaEventDestroy(as_event(event));
  }
  void record_event(int index, NativeEvent event, NativeStream stream) override {
    CudaContext& c = context(index, "record_event");
    DeviceScope scope(c);
    TESSERA_CUDA_CHECK(cudaEventRecord(as_event(event), as_stream(stream)), index);
  }
  void stream_wait_event(int index, NativeStream stream, NativeEvent event) override {
    CudaContext& c = context(index, "stream_wait_event");
    DeviceScope scope(c);
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), index);
  }
  bool query_event(int index, NativeEvent event) override {
    CudaContext& c = context(index, "query_event");
    DeviceScope scope(c);
    const cudaError_t status = cudaEventQuery(as_event(event));
    if (status == cudaErrorNotReady) return false;
    if (status != cudaSuccess) throw_cuda_error(status, "cudaEventQuery", index);
    return true;
  }
  void synchronize_event(int index, NativeEvent event) override {
    CudaContext& c = context(index, "synchronize_event");
    DeviceScope scope(c);
    wait_until_done(c, [&] { return cudaEventQuery(as_event(event)); }, "cudaEventQuery");
  }
  double elapsed_ms(int index, NativeEvent start, NativeEvent end) override {
    CudaContext& c = context(index, "elapsed_ms");
    DeviceScope scope(c);
    float ms = 0.0f;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(start), as_event(end)), index);
    return ms;
  }

  // Every stream this device made, then CUDA's legacy default stream, each
  // with a bounded wait (cudaDeviceSynchronize would wait forever for a
  // hung kernel). Libraries (cuBLAS) enqueue on these streams too.
  void synchronize_device(int index) override {
    CudaContext& c = context(index, "synchronize_device");
    DeviceScope scope(c);
    std::vector<cudaStream_t> streams = c.streams();
    streams.push_back(c.default_stream());
    streams.push_back(nullptr);
    for (cudaStream_t s : streams) {
      wait_until_done(c, [s] { return cudaStreamQuery(s); }, "cudaStreamQuery");
    }
  }

  void register_kernels(KernelRegistry& registry) override {
    const DeviceType type = DeviceType::from_name(kDeviceTypeName);
    register_all_kernels(registry, type);
    // cuDNN's convolution over the im2col kernels just registered (gcc-built
    // host code, kept out of kernels.h so that no .cu file depends on it).
    register_cudnn_conv2d_kernels(registry, type);
  }
};

}  // namespace

CudaDeviceInfo device_info(int index) {
  const int n = cuda::device_count();
  TESSERA_CHECK(index >= 0 && index < n, ValueError, "cuda device_info: device cuda:", index,
                " does not exist (", n, " cuda device", n == 1 ? "" : "s", ")");
  CudaContext& c = *contexts()[static_cast<size_t>(index)];
  const cudaDeviceProp& p = c.properties();
  CudaDeviceInfo info;
  info.ordinal = c.ordinal();
  info.compute_capability = p.major * 10 + p.minor;
  info.multiprocessors = p.multiProcessorCount;
  info.l2_cache_bytes = static_cast<size_t>(p.l2CacheSize);
  info.shared_memory_per_block = p.sharedMemPerBlockOptin;
  info.tensor_cores = p.major >= 7;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), c.ordinal()) == cudaSuccess) info.pci_bus_id = bus;
  cudaGetLastError();
  info.failed = c.failed();
  info.failure = c.failure();
  return info;
}

std::string unavailable_reason() { return unavailable_reason_text(); }

void link() {}

}  // namespace tessera::cuda

TESSERA_REGISTER_DEVICE(std::make_unique<tessera::cuda::CudaDevice>());
