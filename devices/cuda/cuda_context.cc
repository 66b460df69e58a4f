#include "devices/cuda/cuda_context.h"

#include <dlfcn.h>

#include <cstdio>

#include "devices/cuda/cuda_check.h"
#include "runtime/core/error.h"
#include "runtime/device/device_selection.h"

namespace tessera::cuda {
namespace {

// The static CUDA runtime loads the driver library itself; without it every
// call says cudaErrorInsufficientDriver, which would send a user looking for
// a driver update on a machine that has no NVIDIA driver at all.
bool driver_library_present() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

struct DeviceList {
  std::vector<std::unique_ptr<CudaContext>> contexts;
  std::string unavailable;
};

// Enumeration never throws (it runs from device_count()): without a
// usable driver or GPU the list is empty and the reason is kept.
DeviceList enumerate() {
  DeviceList list;
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    list.unavailable = std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
    if (error == cudaErrorInsufficientDriver && !driver_library_present()) {
      list.unavailable = "no NVIDIA driver on this machine (libcuda.so.1 not found)";
    }
    return list;
  }
  if (count == 0) {
    list.unavailable = "the CUDA driver reports no GPU";
    return list;
  }
  for (int ordinal : selected_devices("TESSERA_CUDA_DEVICES", count)) {
    try {
      list.contexts.push_back(
          std::make_unique<CudaContext>(static_cast<int>(list.contexts.size()), ordinal));
    } catch (const Error& e) {
      std::fprintf(stderr, "tessera: skipping CUDA device %d: %s\n", ordinal, e.what());
    }
  }
  if (list.contexts.empty()) list.unavailable = "TESSERA_CUDA_DEVICES selects no GPU";
  return list;
}

DeviceList& device_list() {
  // Leaked on purpose: streams must outlive static destructors that free
  // tensors, and the CUDA runtime tears itself down at exit on its own.
  static DeviceList* list = new DeviceList(enumerate());
  return *list;
}

}  // namespace

CudaContext::CudaContext(int index, int ordinal) : index_(index), ordinal_(ordinal) {
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&properties_, ordinal), index);
}

cudaStream_t CudaContext::default_stream() {
  std::call_once(stream_once_, [this] {
    DeviceScope scope(*this);
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&default_stream_, cudaStreamNonBlocking), index_);
  });
  return default_stream_;
}

void CudaContext::add_stream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.push_back(stream);
}

void CudaContext::remove_stream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  std::erase(streams_, stream);
}

std::vector<cudaStream_t> CudaContext::streams() const {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  return streams_;
}

std::string CudaContext::failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

void CudaContext::mark_failed(const std::string& cause) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failed_.load(std::memory_order_relaxed)) return;
  failure_ = cause;
  failed_.store(true, std::memory_order_release);
}

std::vector<std::unique_ptr<CudaContext>>& contexts() { return device_list().contexts; }

int device_count() { return static_cast<int>(contexts().size()); }

const std::string& unavailable_reason_text() { return device_list().unavailable; }

CudaContext& context(int index, const char* op) {
  const int n = device_count();
  TESSERA_CHECK(index >= 0 && index < n, ValueError, "cuda ", op, ": device cuda:", index,
                " does not exist (", n, " cuda device", n == 1 ? "" : "s",
                n == 0 ? "; " + unavailable_reason_text() : std::string(), ")");
  CudaContext& c = *contexts()[static_cast<size_t>(index)];
  TESSERA_CHECK(!c.failed(), DeviceError, "cuda ", op, ": device cuda:", index,
                " failed earlier and cannot be used: ", c.failure());
  return c;
}

void mark_failed(int index, const std::string& cause) {
  if (index >= 0 && index < device_count()) contexts()[static_cast<size_t>(index)]->mark_failed(cause);
}

DeviceScope::DeviceScope(const CudaContext& device) {
  TESSERA_CUDA_CHECK(cudaGetDevice(&previous_), device.index());
  if (previous_ != device.ordinal()) {
    TESSERA_CUDA_CHECK(cudaSetDevice(device.ordinal()), device.index());
    changed_ = true;
  }
}

DeviceScope::~DeviceScope() {
  if (changed_) cudaSetDevice(previous_);
}

}  // namespace tessera::cuda
