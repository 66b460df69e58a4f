#include "devices/cuda/cublas_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "devices/cuda/cuda_context.h"
#include "devices/cuda/handle_pool.h"
#include "runtime/core/error.h"

namespace tessera::cuda {
namespace {

constexpr const char* kDefaultLibrary = "libcublas.so.13";

template <typename Fn>
void resolve(void* library, const char* symbol, Fn& fn, const std::string& path) {
  void* address = dlsym(library, symbol);
  if (address == nullptr) {
    throw DeviceError("cuda: " + path + " lacks " + symbol + " (need cuBLAS 13 or later)");
  }
  fn = reinterpret_cast<Fn>(address);
}

CublasApi load() {
  const char* env = std::getenv("TESSERA_CUBLAS_LIBRARY");
  const std::string path = env != nullptr && *env != '\0' ? env : kDefaultLibrary;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw DeviceError("cuda: matrix products need cuBLAS, and " + path + " cannot be loaded (" +
                      (why != nullptr ? why : "unknown reason") +
                      "); add its folder to LD_LIBRARY_PATH or set TESSERA_CUBLAS_LIBRARY to the file");
  }
  CublasApi api{};
  resolve(library, "cublasCreate_v2", api.create, path);
  resolve(library, "cublasSetStream_v2", api.set_stream, path);
  resolve(library, "cublasSetMathMode", api.set_math_mode, path);
  resolve(library, "cublasGetStatusString", api.status_string, path);
  resolve(library, "cublasGemmStridedBatchedEx", api.gemm_strided_batched, path);
  return api;  // the library stays loaded for the process
}

HandlePool<cublasHandle_t>& pool() {
  static auto* p = new HandlePool<cublasHandle_t>();  // leaked: handles outlive static destructors
  return *p;
}

}  // namespace

const CublasApi& cublas() {
  // A failed load is remembered and raised again at each use.
  static const struct Loaded {
    CublasApi api{};
    std::string error;
  } loaded = [] {
    Loaded l;
    try {
      l.api = load();
    } catch (const Error& e) {
      l.error = e.what();
    }
    return l;
  }();
  if (!loaded.error.empty()) throw DeviceError(loaded.error);
  return loaded.api;
}

void check_cublas(cublasStatus_t status, const char* call, int device_index) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const std::string what = std::string("cuda:") + std::to_string(device_index) + ": " + call +
                           " failed: " + cublas().status_string(status);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemoryError(what);
  throw DeviceError(what);
}

CublasLease::CublasLease(CudaContext& device, cudaStream_t stream) : device_(device) {
  const CublasApi& api = cublas();
  handle_ = pool().take(
      device,
      [&](cublasHandle_t* h) { check_cublas(api.create(h), "cublasCreate", device.index()); },
      [&](cublasHandle_t h) {
        check_cublas(api.set_stream(h, stream), "cublasSetStream", device.index());
      });
}

CublasLease::~CublasLease() { pool().give_back(device_.index(), handle_); }

}  // namespace tessera::cuda
