#include "devices/cuda/cudnn_library.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "devices/cuda/cuda_context.h"
#include "devices/cuda/handle_pool.h"
#include "runtime/core/error.h"

namespace tessera::cuda {
namespace {

constexpr const char* kDefaultLibrary = "libcudnn.so.9";
constexpr size_t kOldestVersion = 90000;      // cudnnGetVersion() of cuDNN 9.0.0
constexpr size_t kNextMajorVersion = 100000;  // of cuDNN 10.0.0

struct Loaded {
  CudnnApi api{};
  bool ok = false;
  std::string reason;
};

// Binds `fn` to `symbol`; false when the library lacks it.
template <typename Fn>
bool bind(void* library, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (fn == nullptr && missing.empty()) missing = symbol;
  return fn != nullptr;
}

// The sub-libraries that cuDNN's convolution calls go through.
constexpr const char* kSubLibraries[] = {"libcudnn_graph.so.9", "libcudnn_ops.so.9",
                                         "libcudnn_cnn.so.9"};

// Loads each sub-library from the folder that `library` came from (where
// cuDNN looks first), else by the loader's search; the reason one cannot
// be loaded, or "".
std::string load_sub_libraries(void* library, const std::string& path) {
  char origin[PATH_MAX] = {};
  const bool have_origin = dlinfo(library, RTLD_DI_ORIGIN, origin) == 0;
  for (const char* name : kSubLibraries) {
    const std::string beside = have_origin ? std::string(origin) + "/" + name : "";
    const bool is_beside = !beside.empty() && access(beside.c_str(), R_OK) == 0;
    if (dlopen(is_beside ? beside.c_str() : name, RTLD_NOW | RTLD_LOCAL) == nullptr) {
      const char* why = dlerror();
      return path + " needs " + name + ", which cannot be loaded (" +
             (why != nullptr ? why : "unknown reason") + "); install all of cuDNN 9 (the " +
             "nvidia-cudnn-cu13 wheel has it) and put its folder on LD_LIBRARY_PATH";
    }
  }
  return "";
}

Loaded load() {
  Loaded l;
  const char* env = std::getenv("TESSERA_CUDNN_LIBRARY");
  const std::string path = env != nullptr && *env != '\0' ? env : kDefaultLibrary;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    l.reason = path + " cannot be loaded (" + (why != nullptr ? why : "unknown reason") +
               "); add its folder to LD_LIBRARY_PATH or set TESSERA_CUDNN_LIBRARY to the file";
    return l;
  }
  // cuDNN 9's libcudnn.so.9 forwards each call to a sub-library that it
  // loads on first use, and aborts the process when it cannot: make sure
  // the ones convolution needs load before calling anything.
  if (std::string why = load_sub_libraries(library, path); !why.empty()) {
    l.reason = why;
    return l;
  }
  CudnnApi& a = l.api;
  std::string missing;
  bind(library, "cudnnGetVersion", a.get_version, missing);
  bind(library, "cudnnGetErrorString", a.error_string, missing);
  bind(library, "cudnnGetLastErrorString", a.last_error_string, missing);
  bind(library, "cudnnGraphVersionCheck", a.graph_version_check, missing);
  bind(library, "cudnnOpsVersionCheck", a.ops_version_check, missing);
  bind(library, "cudnnCnnVersionCheck", a.cnn_version_check, missing);
  bind(library, "cudnnCreate", a.create, missing);
  bind(library, "cudnnSetStream", a.set_stream, missing);
  bind(library, "cudnnCreateTensorDescriptor", a.create_tensor, missing);
  bind(library, "cudnnSetTensor4dDescriptorEx", a.set_tensor_4d, missing);
  bind(library, "cudnnDestroyTensorDescriptor", a.destroy_tensor, missing);
  bind(library, "cudnnCreateFilterDescriptor", a.create_filter, missing);
  bind(library, "cudnnSetFilter4dDescriptor", a.set_filter_4d, missing);
  bind(library, "cudnnDestroyFilterDescriptor", a.destroy_filter, missing);
  bind(library, "cudnnCreateConvolutionDescriptor", a.create_convolution, missing);
  bind(library, "cudnnSetConvolution2dDescriptor", a.set_convolution_2d, missing);
  bind(library, "cudnnSetConvolutionGroupCount", a.set_group_count, missing);
  bind(library, "cudnnSetConvolutionMathType", a.set_math_type, missing);
  bind(library, "cudnnDestroyConvolutionDescriptor", a.destroy_convolution, missing);
  bind(library, "cudnnGetConvolutionForwardAlgorithm_v7", a.forward_algorithms, missing);
  bind(library, "cudnnGetConvolutionForwardWorkspaceSize", a.forward_workspace, missing);
  bind(library, "cudnnConvolutionForward", a.forward, missing);
  bind(library, "cudnnGetConvolutionBackwardDataAlgorithm_v7", a.backward_data_algorithms,
       missing);
  bind(library, "cudnnGetConvolutionBackwardDataWorkspaceSize", a.backward_data_workspace,
       missing);
  bind(library, "cudnnConvolutionBackwardData", a.backward_data, missing);
  bind(library, "cudnnGetConvolutionBackwardFilterAlgorithm_v7", a.backward_filter_algorithms,
       missing);
  bind(library, "cudnnGetConvolutionBackwardFilterWorkspaceSize",
       a.backward_filter_workspace, missing);
  bind(library, "cudnnConvolutionBackwardFilter", a.backward_filter, missing);
  if (!missing.empty()) {
    l.reason = path + " lacks " + missing + " (need cuDNN 9)";
    return l;
  }
  const size_t version = a.get_version();
  if (version < kOldestVersion || version >= kNextMajorVersion) {
    l.reason = path + " is cuDNN " + std::to_string(version) +
               ", not cuDNN 9 (whose legacy convolution API this code calls)";
    return l;
  }
  // Sub-libraries of another cuDNN (found on the loader's path) would fail
  // every handle's creation; each checks itself against its dependencies.
  const std::pair<const char*, cudnnStatus_t> checks[] = {
      {"libcudnn_graph", a.graph_version_check()},
      {"libcudnn_ops", a.ops_version_check()},
      {"libcudnn_cnn", a.cnn_version_check()}};
  for (const auto& [sub, status] : checks) {
    if (status != CUDNN_STATUS_SUCCESS) {
      l.reason = std::string(sub) + " does not match " + path + ": " + cudnn_failure(a, status);
      return l;
    }
  }
  l.ok = true;
  return l;  // the library stays loaded for the process
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

HandlePool<cudnnHandle_t>& pool() {
  static auto* p = new HandlePool<cudnnHandle_t>();  // leaked: handles outlive static destructors
  return *p;
}

}  // namespace

const CudnnApi* cudnn() { return loaded().ok ? &loaded().api : nullptr; }

bool cudnn_available() { return loaded().ok; }

const std::string& cudnn_unavailable_reason() { return loaded().reason; }

std::string cudnn_failure(const CudnnApi& api, cudnnStatus_t status) {
  std::string said = api.error_string(status);
  char last[512] = {};
  api.last_error_string(last, sizeof(last));
  if (last[0] != '\0') said += std::string(" (") + last + ")";
  return said;
}

void check_cudnn(cudnnStatus_t status, const char* call, const char* op, int device_index) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  const std::string what = std::string(op) + ": cuda:" + std::to_string(device_index) + ": " +
                           call + " failed: " + cudnn_failure(*cudnn(), status);
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    throw OutOfMemoryError(what);
  }
  throw DeviceError(what);
}

CudnnLease::CudnnLease(CudaContext& device, cudaStream_t stream) : device_(device) {
  const CudnnApi& api = *cudnn();
  handle_ = pool().take(
      device,
      [&](cudnnHandle_t* h) {
        check_cudnn(api.create(h), "cudnnCreate", "conv2d", device.index());
      },
      [&](cudnnHandle_t h) {
        check_cudnn(api.set_stream(h, stream), "cudnnSetStream", "conv2d", device.index());
      });
}

CudnnLease::~CudnnLease() { pool().give_back(device_.index(), handle_); }

}  // namespace tessera::cuda
