// conv2d through cuDNN (conv2d_cudnn.h). Each call describes its tensors to
// cuDNN, takes the algorithms cuDNN's heuristics rank for that geometry
// (cached per geometry), keeps the deterministic ones whose workspace can be
// had, and runs the first. Anything cuDNN cannot take goes to the im2col
// kernels that were registered before.
#include "devices/cuda/kernels/conv2d_cudnn.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "devices/cuda/cuda_context.h"
#include "devices/cuda/cudnn_library.h"
#include "devices/cuda/cudnn_status.h"
#include "devices/cuda/kernels/launch.h"
#include "runtime/core/environment.h"
#include "runtime/core/error.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/matmul_precision.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {
namespace {

// The kernels of conv2d.cu, which run whenever cuDNN does not.
kernels::Conv2d::Fn im2col_forward = nullptr;
kernels::Conv2dBackward::Fn im2col_backward = nullptr;

std::atomic<int64_t> calls{0};

// Workspaces above this are not asked for (the im2col path's columns are
// capped at 256 MiB by default; cuDNN's best algorithms need far less).
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;
// How many ranked algorithms to ask the heuristics for (more than cuDNN has
// of any direction).
constexpr int kRequestedAlgorithms = 16;

// Says once, on stderr, why a convolution did not run on cuDNN although
// TESSERA_CUDA_CUDNN asked for it (each distinct reason once).
void report_once(const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(why).second) {
    std::fprintf(stderr, "tessera: cuda: conv2d runs on im2col, not cuDNN: %s\n", why.c_str());
  }
}

// The switch, read at each call (so a test can compare both paths in one
// process); nullptr when off or when cuDNN cannot be loaded.
const CudnnApi* wanted_cudnn() {
  if (!env_switch("TESSERA_CUDA_CUDNN").value_or(false)) return nullptr;
  const CudnnApi* api = cudnn();
  if (api == nullptr) report_once(cudnn_unavailable_reason());
  return api;
}

std::optional<cudnnDataType_t> data_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return CUDNN_DATA_FLOAT;
    case DType::kF64: return CUDNN_DATA_DOUBLE;
    case DType::kF16: return CUDNN_DATA_HALF;
    case DType::kBF16: return CUDNN_DATA_BFLOAT16;
    default: return std::nullopt;
  }
}

// The math cuDNN may use for this dtype: float32 by the runtime's matmul
// precision (FMA keeps float32 throughout; DEFAULT lets Ampere and later
// use TF32), tensor cores for the half types.
cudnnMathType_t math_type(DType dtype) {
  if (dtype == DType::kF32) {
    return float32_matmul_precision() == MatmulPrecision::kHighest ? CUDNN_FMA_MATH
                                                                    : CUDNN_DEFAULT_MATH;
  }
  return dtype == DType::kF64 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}

// The strides cuDNN is given for t: those of a packed NCHW layout (the one
// every cuDNN algorithm takes; size-1 dimensions' strides address nothing,
// so they are normalized); nullopt for any other layout, or beyond 32-bit
// sizes.
std::optional<std::array<int, 4>> packed_strides(const Tensor& t) {
  if (t.dim() != 4 || t.numel() > INT_MAX) return std::nullopt;
  const Shape& size = t.sizes();
  const Shape& stride = t.strides();
  std::array<int, 4> packed{};
  int64_t expect = 1;
  for (int d = 3; d >= 0; --d) {
    if (size[d] != 1 && stride[d] != expect) return std::nullopt;
    packed[d] = static_cast<int>(expect);
    expect *= size[d];
  }
  return packed;
}

// A tensor cuDNN can read in place: t itself when packed NCHW, else a
// contiguous copy. (Channels-last tensors are copied too: mixing layouts
// narrows cuDNN's choice of algorithms, and NCHW throughout keeps them all.)
Tensor packed(const Tensor& t) { return packed_strides(t) ? t : t.contiguous(); }

struct Descriptors {
  explicit Descriptors(const CudnnApi& a) : api(a) {}
  ~Descriptors() {
    if (x != nullptr) api.destroy_tensor(x);
    if (y != nullptr) api.destroy_tensor(y);
    if (w != nullptr) api.destroy_filter(w);
    if (conv != nullptr) api.destroy_convolution(conv);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
};

bool fits_int(const Shape& values) {
  for (int64_t v : values) {
    if (v < 0 || v > INT_MAX) return false;
  }
  return true;
}

// Describes x, the weight and y (y being the output of the forward, or the
// gradient that comes in to the backward) and the convolution. Returns the
// reason when cuDNN cannot take them ("" on success).
std::string describe_convolution(Descriptors& d, const Tensor& x, const Tensor& weight,
                                 const Tensor& y, const Shape& stride, const Shape& padding,
                                 const Shape& dilation, int64_t groups) {
  const std::optional<cudnnDataType_t> dt = data_type(x.dtype());
  if (!dt) return "cuDNN has no " + std::string(dtype_name(x.dtype())) + " convolution";
  const auto xs = packed_strides(x), ys = packed_strides(y);
  if (!xs || !ys || !weight.is_contiguous() || weight.numel() > INT_MAX || !fits_int(stride) ||
      !fits_int(padding) || !fits_int(dilation) || groups > INT_MAX ||
      !fits_int(weight.sizes())) {
    return "sizes beyond cuDNN's 32-bit descriptors: " + describe(x) + ", " + describe(weight);
  }
  const CudnnApi& api = d.api;
  auto tensor = [&](cudnnTensorDescriptor_t& desc, const Tensor& t, const std::array<int, 4>& s) {
    if (api.create_tensor(&desc) != CUDNN_STATUS_SUCCESS) return false;
    return api.set_tensor_4d(desc, *dt, static_cast<int>(t.size(0)), static_cast<int>(t.size(1)),
                             static_cast<int>(t.size(2)), static_cast<int>(t.size(3)), s[0], s[1],
                             s[2], s[3]) == CUDNN_STATUS_SUCCESS;
  };
  if (!tensor(d.x, x, *xs) || !tensor(d.y, y, *ys)) {
    return "cuDNN refused the tensors " + describe(x) + " and " + describe(y);
  }
  const Shape& ws = weight.sizes();
  if (api.create_filter(&d.w) != CUDNN_STATUS_SUCCESS ||
      api.set_filter_4d(d.w, *dt, CUDNN_TENSOR_NCHW, static_cast<int>(ws[0]),
                        static_cast<int>(ws[1]), static_cast<int>(ws[2]),
                        static_cast<int>(ws[3])) != CUDNN_STATUS_SUCCESS) {
    return "cuDNN refused the weight " + describe(weight);
  }
  const cudnnDataType_t compute = *dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  if (api.create_convolution(&d.conv) != CUDNN_STATUS_SUCCESS ||
      api.set_convolution_2d(d.conv, static_cast<int>(padding[0]), static_cast<int>(padding[1]),
                             static_cast<int>(stride[0]), static_cast<int>(stride[1]),
                             static_cast<int>(dilation[0]), static_cast<int>(dilation[1]),
                             CUDNN_CROSS_CORRELATION, compute) != CUDNN_STATUS_SUCCESS ||
      api.set_group_count(d.conv, static_cast<int>(groups)) != CUDNN_STATUS_SUCCESS ||
      api.set_math_type(d.conv, math_type(x.dtype())) != CUDNN_STATUS_SUCCESS) {
    return "cuDNN refused the convolution's parameters";
  }
  return "";
}

enum class Direction { kForward, kBackwardData, kBackwardFilter };

struct Algorithm {
  int algo;
  size_t workspace;
  cudnnMathType_t math;
};

// The usable algorithms for one geometry, best first, and why cuDNN's
// other entries were left out (for the report when none is usable).
struct Ranking {
  std::vector<Algorithm> usable;
  std::string rejected;
};

// What a ranking depends on: the direction, the device, dtype, math, sizes
// and parameters (every tensor given to cuDNN is packed NCHW).
std::vector<int64_t> ranking_key(Direction direction, int device, const Tensor& x,
                                 const Tensor& weight, const Tensor& y, const Shape& stride,
                                 const Shape& padding, const Shape& dilation, int64_t groups) {
  std::vector<int64_t> key{static_cast<int64_t>(direction), device,
                           static_cast<int64_t>(x.dtype()),
                           static_cast<int64_t>(math_type(x.dtype())), groups};
  for (const Tensor* t : {&x, &weight, &y}) {
    key.insert(key.end(), t->sizes().begin(), t->sizes().end());
  }
  for (const Shape* p : {&stride, &padding, &dilation}) key.insert(key.end(), p->begin(), p->end());
  return key;
}

// The deterministic, successful entries of cuDNN's ranking that fit the
// workspace limit. float32 at "highest" precision keeps FMA math whatever
// an entry suggests; float32 and float64 never take an entry whose math
// converts them to half precision (below even TF32).
template <typename Perf>
Ranking usable(const Perf* results, int count, DType dtype) {
  Ranking out;
  int failed = 0, nondeterministic = 0, too_big = 0, converting = 0;
  for (int i = 0; i < count; ++i) {
    const Perf& r = results[i];
    const bool wide = dtype == DType::kF32 || dtype == DType::kF64;
    if (r.status != CUDNN_STATUS_SUCCESS) {
      ++failed;
    } else if (r.determinism != CUDNN_DETERMINISTIC) {
      ++nondeterministic;
    } else if (r.memory > kMaxWorkspaceBytes) {
      ++too_big;
    } else if (wide && r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
      ++converting;
    } else {
      cudnnMathType_t math = r.mathType;
      if (dtype == DType::kF32 && float32_matmul_precision() == MatmulPrecision::kHighest) {
        math = CUDNN_FMA_MATH;
      }
      out.usable.push_back({static_cast<int>(r.algo), r.memory, math});
    }
  }
  out.rejected = std::to_string(count) + " ranked: " + std::to_string(failed) + " unavailable, " +
                 std::to_string(nondeterministic) + " not deterministic, " +
                 std::to_string(too_big) + " over the workspace limit, " +
                 std::to_string(converting) + " converting to half precision";
  return out;
}

// cuDNN's ranking from `query(results, &returned)`, filtered by usable();
// nullopt (the status reported) when the query itself fails.
template <typename Perf, typename Query>
std::optional<Ranking> ask(const CudnnApi& api, const Query& query, DType dtype) {
  std::array<Perf, kRequestedAlgorithms> results{};
  int returned = 0;
  const cudnnStatus_t status = query(results.data(), &returned);
  if (status != CUDNN_STATUS_SUCCESS) {
    report_once("cuDNN's algorithm heuristics failed: " + cudnn_failure(api, status));
    return std::nullopt;
  }
  return usable(results.data(), returned, dtype);
}

std::optional<Ranking> query_ranking(const CudnnApi& api, cudnnHandle_t h, Direction direction,
                      const Descriptors& d, DType dtype) {
  constexpr int n = kRequestedAlgorithms;
  switch (direction) {
    case Direction::kForward:
      return ask<cudnnConvolutionFwdAlgoPerf_t>(
          api, [&](auto* r, int* got) {
            return api.forward_algorithms(h, d.x, d.w, d.conv, d.y, n, got, r);
          },
          dtype);
    case Direction::kBackwardData:
      return ask<cudnnConvolutionBwdDataAlgoPerf_t>(
          api, [&](auto* r, int* got) {
            return api.backward_data_algorithms(h, d.w, d.y, d.conv, d.x, n, got, r);
          },
          dtype);
    case Direction::kBackwardFilter:
      return ask<cudnnConvolutionBwdFilterAlgoPerf_t>(
          api, [&](auto* r, int* got) {
            return api.backward_filter_algorithms(h, d.x, d.y, d.conv, d.w, n, got, r);
          },
          dtype);
  }
  return {};
}

// Rankings are asked for once per geometry: the heuristics cost more than a
// small convolution. A failed query is not remembered (it may pass later).
std::optional<Ranking> ranking(const CudnnApi& api, cudnnHandle_t handle, Direction direction,
                               const Descriptors& d, const std::vector<int64_t>& key,
                               DType dtype) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, Ranking> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::optional<Ranking> r = query_ranking(api, handle, direction, d, dtype);
  if (!r) return r;
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, *r);
  return r;
}

// Runs the first algorithm of the ranking whose workspace can be allocated
// and whose call cuDNN accepts; false when none does (nothing has been
// written then). Each algorithm's workspace is asked for again
// (`workspace_size(algo, &bytes)`) once its math type is set, as PyTorch
// does: the ranking's figure was for the math type cuDNN ranked it with,
// and a call given less fails. `run(algorithm, workspace, bytes)` returns
// the call's status: cuDNN checks parameters before it launches anything,
// so a parameter or support refusal (which the heuristics, never seeing
// the data pointers' alignment, can miss) moves on to the next algorithm,
// reported once; any other failure raises, naming `call` and `op`.
template <typename WorkspaceSize, typename Run>
bool run_first(const KernelContext& ctx, const std::vector<Algorithm>& ranked,
               const Descriptors& d, const char* call, const char* op,
               const WorkspaceSize& workspace_size, const Run& run) {
  for (const Algorithm& a : ranked) {
    if (d.api.set_math_type(d.conv, a.math) != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    if (workspace_size(a.algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    bytes = std::max(bytes, a.workspace);
    if (bytes > kMaxWorkspaceBytes) continue;
    Tensor workspace;
    if (bytes > 0) {
      try {
        workspace = empty({static_cast<int64_t>(bytes)}, TensorOptions(DType::kU8, ctx.device));
      } catch (const OutOfMemoryError&) {
        continue;  // the next algorithm may need less
      }
    }
    const cudnnStatus_t status = run(a, bytes > 0 ? workspace.data_ptr() : nullptr, bytes);
    const int category = CUDNN_STATUS_CATEGORY(status);
    if (category == CUDNN_STATUS_BAD_PARAM || category == CUDNN_STATUS_NOT_SUPPORTED) {
      report_once(std::string(call) + " refused algorithm " + std::to_string(a.algo) + ": " +
                  cudnn_failure(d.api, status));
      continue;
    }
    check_cudnn(status, call, op, ctx.device.index);
    calls.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

// alpha = 1, beta = 0 in the scalar type cuDNN wants for dtype.
struct Scalars {
  float f1 = 1.0f, f0 = 0.0f;
  double d1 = 1.0, d0 = 0.0;
  bool is_double;
  explicit Scalars(DType dtype) : is_double(dtype == DType::kF64) {}
  const void* one() const { return is_double ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const { return is_double ? static_cast<const void*>(&d0) : &f0; }
};

// Calls worth describing to cuDNN: a dtype it has (integer convolutions
// go to im2col without a word) and something to compute.
bool for_cudnn(const Tensor& input, const Tensor& weight, const Tensor& y) {
  // Sizes beyond cuDNN's 32-bit descriptors go to im2col before packed()
  // would copy them.
  for (const Tensor* t : {&input, &weight, &y}) {
    if (t->numel() == 0 || t->numel() > INT_MAX) return false;
  }
  return data_type(input.dtype()).has_value();
}

// The convolution's geometry and the three tensors cuDNN sees, each packed
// NCHW: x (the input or its gradient), w (the weight or its gradient) and
// y (the output or its gradient). The one a direction writes is `result`'s
// storage when that is packed, else a scratch copied into it afterwards.
struct Problem {
  Direction direction;
  Tensor x, w, y;
  const Shape &stride, &padding, &dilation;
  int64_t groups;
};

const char* direction_name(Direction direction) {
  switch (direction) {
    case Direction::kForward: return "forward";
    case Direction::kBackwardData: return "backward-data";
    default: return "backward-filter";
  }
}

// Runs one direction of the problem on cuDNN; false (the reason reported
// once) when cuDNN cannot take it, with nothing written.
bool run_on_cudnn(const CudnnApi& api, const KernelContext& ctx, const Problem& pr) {
  const char* op = pr.direction == Direction::kForward ? "conv2d" : "conv2d_backward";
  Descriptors d(api);
  const std::string refused = describe_convolution(d, pr.x, pr.w, pr.y, pr.stride, pr.padding,
                                                   pr.dilation, pr.groups);
  if (!refused.empty()) {
    report_once(refused);
    return false;
  }
  CudaContext& device = context(ctx.device.index, op);
  DeviceScope scope(device);
  // A handle cuDNN cannot create or bind (a sub-library of another cuDNN
  // version, say) leaves the call to im2col; running out of memory does not.
  std::optional<CudnnLease> lease;
  try {
    lease.emplace(device, stream_of(ctx));
  } catch (const DeviceError& e) {
    report_once(e.what());
    return false;
  }
  const cudnnHandle_t h = lease->handle();
  const auto key = ranking_key(pr.direction, ctx.device.index, pr.x, pr.w, pr.y, pr.stride,
                               pr.padding, pr.dilation, pr.groups);
  const Scalars s(pr.x.dtype());
  void *x = pr.x.data_ptr(), *w = pr.w.data_ptr(), *y = pr.y.data_ptr();
  const auto workspace_size = [&](int algo, size_t* bytes) {
    switch (pr.direction) {
      case Direction::kForward:
        return api.forward_workspace(h, d.x, d.w, d.conv, d.y,
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
      case Direction::kBackwardData:
        return api.backward_data_workspace(h, d.w, d.y, d.conv, d.x,
                                           static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
                                           bytes);
      default:
        return api.backward_filter_workspace(h, d.x, d.y, d.conv, d.w,
                                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                             bytes);
    }
  };
  const std::optional<Ranking> ranked = ranking(api, h, pr.direction, d, key, pr.x.dtype());
  if (!ranked) return false;  // reported by ask()
  const char* call = pr.direction == Direction::kForward        ? "cudnnConvolutionForward"
                     : pr.direction == Direction::kBackwardData ? "cudnnConvolutionBackwardData"
                                                                : "cudnnConvolutionBackwardFilter";
  const bool ran = run_first(
      ctx, ranked->usable, d, call, op, workspace_size,
      [&](const Algorithm& a, void* ws, size_t ws_bytes) {
        switch (pr.direction) {
          case Direction::kForward:
            return api.forward(h, s.one(), d.x, x, d.w, w, d.conv,
                               static_cast<cudnnConvolutionFwdAlgo_t>(a.algo), ws, ws_bytes,
                               s.zero(), d.y, y);
          case Direction::kBackwardData:
            return api.backward_data(h, s.one(), d.w, w, d.y, y, d.conv,
                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo), ws,
                                     ws_bytes, s.zero(), d.x, x);
          default:
            return api.backward_filter(h, s.one(), d.x, x, d.y, y, d.conv,
                                       static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo), ws,
                                       ws_bytes, s.zero(), d.w, w);
        }
      });
  if (!ran) {
    report_once(std::string("no usable ") + direction_name(pr.direction) + " algorithm for " +
                describe(pr.x) + ", " + describe(pr.w) + " and " + describe(pr.y) + " (" +
                ranked->rejected + ")");
  }
  return ran;
}

// `result` itself when cuDNN can write it in place (packed NCHW), else a
// contiguous scratch of its sizes.
Tensor writable(const Tensor& result, const KernelContext& ctx) {
  return packed_strides(result) ? result
                                : empty(result.sizes(), TensorOptions(result.dtype(), ctx.device));
}

// Runs pr on cuDNN, writing `result` (the one of x, w, y that the
// direction computes, given as `target`); false when cuDNN cannot.
bool compute(const CudnnApi& api, const KernelContext& ctx, const Problem& pr,
             const Tensor& target, Tensor& result) {
  if (!run_on_cudnn(api, ctx, pr)) return false;
  if (!target.is_same(result)) result.copy_(target);
  return true;
}

void conv2d_kernel(const KernelContext& ctx, Tensor& out, const Tensor& input, const Tensor& weight,
                   const Tensor& bias, const Shape& stride, const Shape& padding,
                   const Shape& dilation, int64_t groups) {
  const CudnnApi* api = wanted_cudnn();
  if (api != nullptr && for_cudnn(input, weight, out)) {
    const Tensor y = writable(out, ctx);
    const Problem pr{Direction::kForward, packed(input), weight.contiguous(), y,
                     stride, padding, dilation, groups};
    if (compute(*api, ctx, pr, y, out)) {
      if (bias.defined()) out.add_(bias.view({1, weight.size(0), 1, 1}));
      return;
    }
  }
  im2col_forward(ctx, out, input, weight, bias, stride, padding, dilation, groups);
}

void conv2d_backward_kernel(const KernelContext& ctx, Tensor& grad_input, Tensor& grad_weight,
                            Tensor& grad_bias, const Tensor& grad_out, const Tensor& input,
                            const Tensor& weight, const Shape& stride, const Shape& padding,
                            const Shape& dilation, int64_t groups) {
  const CudnnApi* api = wanted_cudnn();
  if (api == nullptr || !for_cudnn(input, weight, grad_out)) {
    im2col_backward(ctx, grad_input, grad_weight, grad_bias, grad_out, input, weight, stride,
                    padding, dilation, groups);
    return;
  }
  // Each gradient cuDNN cannot take is left to the im2col kernel alone.
  Tensor rest_input, rest_weight, none;
  const Tensor dy = packed(grad_out);
  if (grad_input.defined()) {
    const Tensor dx = writable(grad_input, ctx);
    const Problem pr{Direction::kBackwardData, dx, weight.contiguous(), dy,
                     stride, padding, dilation, groups};
    if (!compute(*api, ctx, pr, dx, grad_input)) rest_input = grad_input;
  }
  if (grad_weight.defined()) {
    const Tensor dw = writable(grad_weight, ctx);
    const Problem pr{Direction::kBackwardFilter, packed(input), dw, dy,
                     stride, padding, dilation, groups};
    if (!compute(*api, ctx, pr, dw, grad_weight)) rest_weight = grad_weight;
  }
  if (rest_input.defined() || rest_weight.defined()) {
    im2col_backward(ctx, rest_input, rest_weight, none, grad_out, input, weight, stride, padding,
                    dilation, groups);
  }
  if (grad_bias.defined()) grad_bias.copy_(sum(grad_out, {0, 2, 3}));
}

}  // namespace

int64_t cudnn_convolution_calls() { return calls.load(std::memory_order_relaxed); }

void register_cudnn_conv2d_kernels(KernelRegistry& registry, DeviceType type) {
  // A second registration finds this file's kernels: keep the first's.
  if (auto forward = registry.lookup<kernels::Conv2d>(type); forward != &conv2d_kernel) {
    im2col_forward = forward;
  }
  if (auto backward = registry.lookup<kernels::Conv2dBackward>(type);
      backward != &conv2d_backward_kernel) {
    im2col_backward = backward;
  }
  TESSERA_CHECK(im2col_forward != nullptr && im2col_backward != nullptr, DeviceError,
                "cuda: register_cudnn_conv2d_kernels runs after the im2col conv2d kernels are "
                "registered");
  registry.register_kernel<kernels::Conv2d>(type, &conv2d_kernel);
  registry.register_kernel<kernels::Conv2dBackward>(type, &conv2d_backward_kernel);
}

}  // namespace tessera::cuda
