// The CUDA devices this process uses (TESSERA_CUDA_DEVICES), found once, and
// each one's state: its properties, its default stream and whether a sticky
// error has ended it.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::cuda {

class CudaContext {
 public:
  CudaContext(int index, int ordinal);
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int index() const { return index_; }      // runtime index: cuda:<index>
  int ordinal() const { return ordinal_; }  // CUDA device ordinal
  const cudaDeviceProp& properties() const { return properties_; }

  // The device's own stream, non-blocking (never ordered with CUDA's
  // legacy default stream), created on first use.
  cudaStream_t default_stream();

  // The streams made by create_stream, for synchronize_device.
  void add_stream(cudaStream_t stream);
  void remove_stream(cudaStream_t stream);
  std::vector<cudaStream_t> streams() const;

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string failure() const;
  // Keeps the first cause.
  void mark_failed(const std::string& cause);

 private:
  const int index_;
  const int ordinal_;
  cudaDeviceProp properties_{};
  std::once_flag stream_once_;
  cudaStream_t default_stream_ = nullptr;
  mutable std::mutex streams_mutex_;
  std::vector<cudaStream_t> streams_;
  std::atomic<bool> failed_{false};
  mutable std::mutex failure_mutex_;
  std::string failure_;
};

// The devices, in runtime index order; empty when CUDA is unavailable.
std::vector<std::unique_ptr<CudaContext>>& contexts();
int device_count();
// Why there are no devices ("" when there are).
const std::string& unavailable_reason_text();

// The device cuda:<index> for `op`: ValueError when it does not exist,
// DeviceError with the first cause when it has failed.
CudaContext& context(int index, const char* op);

// Marks cuda:<index> failed (no-op for an index that does not exist).
void mark_failed(int index, const std::string& cause);

// Makes a device current on this thread for a scope (the CUDA runtime's
// current device is per thread), then restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(const CudaContext& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace tessera::cuda
