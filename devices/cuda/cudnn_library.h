// cuDNN, loaded at run time, for convolution. As with cuBLAS, linking it
// would make libtessera_cuda.so need libcudnn.so.9 (and its sub-libraries,
// about a gigabyte) on every machine; loading it on first use keeps the
// library loadable anywhere and lets a GPU machine use the cuDNN it already
// has (PyTorch's nvidia-cudnn-cu13, or a system install).
// TESSERA_CUDNN_LIBRARY names the file; otherwise the dynamic loader
// searches for libcudnn.so.9. cuDNN 9's libcudnn.so.9 forwards to
// sub-libraries (libcudnn_graph/ops/cnn.so.9) in its own folder; the loader
// here loads those first (from that folder, else the loader's path), since
// cuDNN aborts the process when one is missing.
//
// Only the convolution calls are bound (the "legacy" descriptor API that
// cuDNN 9 keeps beside its graph API).
#pragma once

#include <cudnn.h>

#include <string>

#include "devices/cuda/cudnn_status.h"

namespace tessera::cuda {

class CudaContext;

// Each member has the type of the cuDNN function it is bound to (so the
// header, not this file, says its signature).
struct CudnnApi {
  decltype(&::cudnnGetVersion) get_version;
  decltype(&::cudnnGetErrorString) error_string;
  decltype(&::cudnnGetLastErrorString) last_error_string;
  decltype(&::cudnnGraphVersionCheck) graph_version_check;
  decltype(&::cudnnOpsVersionCheck) ops_version_check;
  decltype(&::cudnnCnnVersionCheck) cnn_version_check;
  decltype(&::cudnnCreate) create;
  decltype(&::cudnnSetStream) set_stream;
  decltype(&::cudnnCreateTensorDescriptor) create_tensor;
  decltype(&::cudnnSetTensor4dDescriptorEx) set_tensor_4d;
  decltype(&::cudnnDestroyTensorDescriptor) destroy_tensor;
  decltype(&::cudnnCreateFilterDescriptor) create_filter;
  decltype(&::cudnnSetFilter4dDescriptor) set_filter_4d;
  decltype(&::cudnnDestroyFilterDescriptor) destroy_filter;
  decltype(&::cudnnCreateConvolutionDescriptor) create_convolution;
  decltype(&::cudnnSetConvolution2dDescriptor) set_convolution_2d;
  decltype(&::cudnnSetConvolutionGroupCount) set_group_count;
  decltype(&::cudnnSetConvolutionMathType) set_math_type;
  decltype(&::cudnnDestroyConvolutionDescriptor) destroy_convolution;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) forward_workspace;
  decltype(&::cudnnConvolutionForward) forward;
  decltype(&::cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algorithms;
  decltype(&::cudnnGetConvolutionBackwardDataWorkspaceSize) backward_data_workspace;
  decltype(&::cudnnConvolutionBackwardData) backward_data;
  decltype(&::cudnnGetConvolutionBackwardFilterAlgorithm_v7) backward_filter_algorithms;
  decltype(&::cudnnGetConvolutionBackwardFilterWorkspaceSize) backward_filter_workspace;
  decltype(&::cudnnConvolutionBackwardFilter) backward_filter;
};

// The loaded functions, or nullptr when cuDNN cannot be loaded (absent,
// or older than cuDNN 9); cudnn_unavailable_reason() (cudnn_status.h) then
// says why.
const CudnnApi* cudnn();

// A cuDNN handle of `device` bound to `stream` for the lease's lifetime,
// pooled per device like CublasLease (one thread at a time per handle;
// creating one costs milliseconds). Needs cudnn() != nullptr.
class CudnnLease {
 public:
  CudnnLease(CudaContext& device, cudaStream_t stream);
  ~CudnnLease();
  CudnnLease(const CudnnLease&) = delete;
  CudnnLease& operator=(const CudnnLease&) = delete;
  cudnnHandle_t handle() const { return handle_; }

 private:
  CudaContext& device_;
  cudnnHandle_t handle_ = nullptr;
};

// What cuDNN says of a failed call: the status's name and cuDNN's last
// error message, when it has one.
std::string cudnn_failure(const CudnnApi& api, cudnnStatus_t status);

// Raises DeviceError (OutOfMemoryError for a failed host or device
// allocation) for a failed cuDNN call made by `op` on `device_index`.
void check_cudnn(cudnnStatus_t status, const char* call, const char* op, int device_index);

}  // namespace tessera::cuda
