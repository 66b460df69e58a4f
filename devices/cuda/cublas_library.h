// cuBLAS, loaded at run time. Linking it would make libtessera_cuda.so need
// libcublas.so.13 (hundreds of MB) on every machine, GPU or not; loading it
// on first use keeps the library loadable anywhere and lets a GPU machine
// use the cuBLAS it already has (the CUDA toolkit's or PyTorch's).
// TESSERA_CUBLAS_LIBRARY names the file; otherwise the dynamic loader
// searches for libcublas.so.13 (LD_LIBRARY_PATH, the system's paths).
#pragma once

#include <cublas_v2.h>

namespace tessera::cuda {

class CudaContext;

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
  const char* (*status_string)(cublasStatus_t);
  cublasStatus_t (*gemm_strided_batched)(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* A, cudaDataType a_type,
                                         int lda, long long stride_a, const void* B,
                                         cudaDataType b_type, int ldb, long long stride_b,
                                         const void* beta, void* C, cudaDataType c_type, int ldc,
                                         long long stride_c, int batch_count,
                                         cublasComputeType_t compute_type, cublasGemmAlgo_t algo);
};

// The loaded functions; DeviceError naming the library and how to point at
// one when it cannot be loaded.
const CublasApi& cublas();

// A cuBLAS handle of `device` bound to `stream` for the lease's lifetime.
// Handles are pooled per device: a handle is used by one thread at a time,
// as cuBLAS requires, and reused (creating one costs milliseconds).
class CublasLease {
 public:
  CublasLease(CudaContext& device, cudaStream_t stream);
  ~CublasLease();
  CublasLease(const CublasLease&) = delete;
  CublasLease& operator=(const CublasLease&) = delete;
  cublasHandle_t handle() const { return handle_; }

 private:
  CudaContext& device_;
  cublasHandle_t handle_ = nullptr;
};

// Raises DeviceError for a failed cuBLAS call on `device_index`.
void check_cublas(cublasStatus_t status, const char* call, int device_index);

}  // namespace tessera::cuda
