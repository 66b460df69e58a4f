// The CUDA device of Tessera: device type "cuda", one device per NVIDIA GPU
// the driver reports. libtessera_cuda.so registers the type when it is
// loaded; CUDA itself starts on first use, and a machine without a driver
// or a GPU (or with a driver too old for this build) reports 0 devices.
//
// Environment:
//   TESSERA_CUDA_DEVICES=2,0   the GPUs to use, in this order, by CUDA
//                              ordinal (as nvidia-smi numbers them when
//                              CUDA_DEVICE_ORDER=PCI_BUS_ID); unset or
//                              empty: all of them. Unlike
//                              CUDA_VISIBLE_DEVICES it hides nothing from
//                              other libraries in the process.
//   TESSERA_CUBLAS_LIBRARY=/path/libcublas.so.13
//                              where to load cuBLAS from (default: the
//                              dynamic loader's search, libcublas.so.13).
//
// Design, in short (details in README.md beside this file):
//  - memory: cudaMalloc/cudaFree under the runtime's caching allocator,
//    never managed memory; cudaErrorMemoryAllocation gives nullptr, so the
//    allocator frees its cache and retries;
//  - streams are non-blocking cudaStream_t, one default stream per device;
//    events are CUDA events with timing; nothing synchronizes the device
//    unless a result must reach the host;
//  - kernels: elementwise, reductions, normalization, indexing, sorting
//    and random ops in kernels/*.cu, GEMM through cuBLAS (loaded at run
//    time), convolution as im2col + GEMM;
//  - faults: every CUDA call is checked; an error that corrupts the CUDA
//    context (an illegal address, a failed launch) marks the device
//    failed, and every later use of it raises that cause at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera::cuda {

inline constexpr std::string_view kDeviceTypeName = "cuda";

// What DeviceProperties does not say about a CUDA device.
struct CudaDeviceInfo {
  int ordinal = 0;                 // CUDA device ordinal
  int compute_capability = 0;      // 90 for sm_90
  int multiprocessors = 0;
  size_t l2_cache_bytes = 0;
  size_t shared_memory_per_block = 0;  // the opt-in maximum
  bool tensor_cores = false;       // compute capability 7.0 or later
  int driver_version = 0;          // 13000 for CUDA 13.0
  int runtime_version = 0;         // of the CUDA runtime this build links
  std::string pci_bus_id;          // "0000:3B:00.0"
  bool failed = false;             // a sticky error ended this device
  std::string failure;             // its cause
};

// ValueError when the device does not exist.
CudaDeviceInfo device_info(int index);

// Why there are zero CUDA devices ("" when there are some): no driver, a
// driver older than this build's CUDA runtime, or no GPU.
std::string unavailable_reason();

// Does nothing; see tessera::cpu::link().
void link();

}  // namespace tessera::cuda
