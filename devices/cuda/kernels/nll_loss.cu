// NllLoss and NllLossBackward on the GPU, computed in double as the CPU
// device computes them, then rounded to the input's dtype.
//
// Forward: one thread per position (n, s) of target [N, S] over a grid
// whose size depends only on N * S; each writes its loss (reduction none)
// and adds its loss and weight to per-thread sums, which a fixed tree
// combines per block, and a second one-block pass combines the blocks in
// order: deterministic (the same bits every run), though the order of
// additions differs from the CPU's sequential sum at double rounding.
// Backward: one thread per grad_input element, zero off the targets.
//
// The CPU kernels range-check the targets themselves (the front end does
// not), raising IndexError naming the first bad target in row-major order;
// the kernels note the smallest bad position in a device flag
// (index_common.cuh, BadIndexFlag) read back after the work is enqueued, so
// both ops wait for the GPU. A bad target is never dereferenced.
#include "devices/cuda/kernels/index_common.cuh"
#include "devices/cuda/kernels/kernels.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cuda {
namespace {

using kernels::Reduction;

// The most blocks of the forward's first pass (the partials the second
// pass combines, a few per thread of its block).
constexpr int64_t kMaxLossBlocks = 1024;
constexpr int64_t kPositionsPerThread = 8;

template <typename T>
struct NllArgs {
  const T* input;
  int64_t is0, is1, is2;
  const int64_t* target;
  int64_t ts0, ts1;
  const T* weight;  // null: all ones
  int64_t ws;
  int64_t C, S, ignore_index;
};

template <typename T>
NllArgs<T> nll_args(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t C,
                    int64_t S, int64_t ignore_index) {
  return NllArgs<T>{input.data<T>(), input.strides()[0], input.strides()[1], input.strides()[2],
                    target.data<int64_t>(), target.strides()[0], target.strides()[1],
                    weight.defined() ? weight.data<T>() : nullptr,
                    weight.defined() ? weight.strides()[0] : 0, C, S, ignore_index};
}

// Sums a and b over the block with a fixed tree (blockDim.x == kBlockSize);
// thread 0 ends with the totals.
__device__ __forceinline__ void block_sum2(double& a, double& b) {
  __shared__ double sa[kBlockSize], sb[kBlockSize];
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (int half = kBlockSize / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      sa[threadIdx.x] += sa[threadIdx.x + half];
      sb[threadIdx.x] += sb[threadIdx.x + half];
    }
    __syncthreads();
  }
  a = sa[0];
  b = sb[0];
}

template <typename T>
__global__ void nll_loss_positions(NllArgs<T> a, int64_t P, T* out, int64_t os0, int64_t os1,
                                   bool write_each, double* partials, unsigned long long* bad) {
  double loss_sum = 0.0, weight_sum = 0.0;
  for (int64_t p = grid_index(); p < P; p += grid_step()) {
    const int64_t n = p / a.S, s = p - n * a.S;
    const int64_t c = a.target[n * a.ts0 + s * a.ts1];
    double loss = 0.0;
    if (c != a.ignore_index) {
      if (c < 0 || c >= a.C) {
        note_bad_index(bad, p);
      } else {
        const double wc = a.weight ? convert<double>(a.weight[c * a.ws]) : 1.0;
        loss = -wc * convert<double>(a.input[n * a.is0 + c * a.is1 + s * a.is2]);
        loss_sum += loss;
        weight_sum += wc;
      }
    }
    if (write_each) out[n * os0 + s * os1] = convert<T>(loss);
  }
  block_sum2(loss_sum, weight_sum);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = loss_sum;
    partials[2 * blockIdx.x + 1] = weight_sum;
  }
}

// One block: combines the partials in a fixed order and stores total_weight
// and, when reduced, the loss.
template <typename T>
__global__ void nll_loss_finish(const double* partials, int64_t blocks, T* out, T* total_weight,
                                Reduction reduction) {
  double loss_sum = 0.0, weight_sum = 0.0;
  for (int64_t b = threadIdx.x; b < blocks; b += blockDim.x) {
    loss_sum += partials[2 * b];
    weight_sum += partials[2 * b + 1];
  }
  block_sum2(loss_sum, weight_sum);
  if (threadIdx.x == 0) {
    *total_weight = convert<T>(weight_sum);
    // Mean over zero total weight is 0/0 = NaN, as on the CPU.
    if (reduction == Reduction::kSum) *out = convert<T>(loss_sum);
    else if (reduction == Reduction::kMean) *out = convert<T>(loss_sum / weight_sum);
  }
}

template <typename T>
__global__ void nll_loss_backward_elements(NllArgs<T> a, T* grad_input, int64_t gs0, int64_t gs1,
                                           int64_t gs2, const T* grad_out, int64_t go0,
                                           int64_t go1, bool per_position, const T* total_weight,
                                           bool mean, int64_t total, unsigned long long* bad) {
  for (int64_t e = grid_index(); e < total; e += grid_step()) {
    const int64_t q = e / a.S, s = e - q * a.S;
    const int64_t n = q / a.C, c = q - n * a.C;
    const int64_t t = a.target[n * a.ts0 + s * a.ts1];
    double v = 0.0;
    if (t != a.ignore_index) {
      if (t < 0 || t >= a.C) {
        if (c == 0) note_bad_index(bad, n * a.S + s);
      } else if (t == c) {
        const double wc = a.weight ? convert<double>(a.weight[c * a.ws]) : 1.0;
        double go = convert<double>(per_position ? grad_out[n * go0 + s * go1] : grad_out[0]);
        if (mean) go /= convert<double>(total_weight[0]);
        v = -wc * go;
      }
    }
    grad_input[n * gs0 + c * gs1 + s * gs2] = convert<T>(v);
  }
}

void check_operands(const char* op, const Tensor& input, const Tensor& target,
                    const Tensor& weight) {
  TESSERA_CHECK(input.dim() == 3 && target.dim() == 2 && target.dtype() == DType::kI64 &&
                    target.size(0) == input.size(0) && target.size(1) == input.size(2),
                TypeError, op, ": the cuda kernel needs input [N, C, S] and int64 target [N, S], "
                "got input ", describe(input), ", target ", describe(target));
  TESSERA_CHECK(!weight.defined() || (weight.dtype() == input.dtype() && weight.dim() == 1 &&
                                      weight.size(0) == input.size(1)),
                TypeError, op, ": the cuda kernel needs a weight [C] of the input's dtype, got ",
                describe(weight), " for input ", describe(input));
}

// Raises the CPU kernel's IndexError if the flag caught a bad target.
void raise_bad_target(const BadIndexFlag& flag, const Tensor& target, int64_t classes) {
  const int64_t pos = flag.first();  // waits for the GPU
  if (pos < 0) return;
  const int64_t S = target.size(1);
  const int64_t value = target.select(0, pos / S).select(0, pos % S).item<int64_t>();
  TESSERA_CHECK(false, IndexError, "nll_loss: target ", value, " is out of bounds for ", classes,
                " classes");
}

void nll_loss_kernel(const KernelContext& ctx, Tensor& out, Tensor& total_weight,
                     const Tensor& input, const Tensor& target, const Tensor& weight,
                     Reduction reduction, int64_t ignore_index) {
  const char* op = "nll_loss";
  check_operands(op, input, target, weight);
  const bool none = reduction == Reduction::kNone;
  TESSERA_CHECK(out.dtype() == input.dtype() && total_weight.dtype() == input.dtype() &&
                    total_weight.numel() == 1 &&
                    (none ? out.sizes() == target.sizes() : out.numel() == 1),
                TypeError, op, ": the cuda kernel needs out and total_weight of the input's "
                "dtype and the reduction's sizes, got out ", describe(out), ", total_weight ",
                describe(total_weight), " for input ", describe(input));
  const int64_t C = input.size(1), S = input.size(2);
  const int64_t P = target.numel();
  const int64_t blocks =
      std::clamp<int64_t>(ceil_div(P, kBlockSize * kPositionsPerThread), 1, kMaxLossBlocks);
  Tensor partials = empty({2 * blocks}, TensorOptions(DType::kF64, ctx.device));
  BadIndexFlag bad(ctx);
  cudaStream_t stream = stream_of(ctx);
  dispatch_cuda_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const NllArgs<T> a = nll_args<T>(input, target, weight, C, S, ignore_index);
    nll_loss_positions<T><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream>>>(
        a, P, out.data<T>(), none ? out.strides()[0] : 0, none ? out.strides()[1] : 0, none,
        partials.data<double>(), bad.device_ptr());
    after_launch(ctx, op);
    nll_loss_finish<T><<<1, kBlockSize, 0, stream>>>(partials.data<double>(), blocks,
                                                     out.data<T>(), total_weight.data<T>(),
                                                     reduction);
    after_launch(ctx, op);
  });
  raise_bad_target(bad, target, C);
}

void nll_loss_backward_kernel(const KernelContext& ctx, Tensor& grad_input, const Tensor& grad_out,
                              const Tensor& target, const Tensor& weight, Reduction reduction,
                              int64_t ignore_index, const Tensor& total_weight) {
  const char* op = "nll_loss_backward";
  check_operands(op, grad_input, target, weight);
  const bool none = reduction == Reduction::kNone;
  TESSERA_CHECK(grad_out.dtype() == grad_input.dtype() &&
                    total_weight.dtype() == grad_input.dtype() && total_weight.numel() == 1 &&
                    (none ? grad_out.sizes() == target.sizes() : grad_out.numel() == 1),
                TypeError, op, ": the cuda kernel needs grad_out and total_weight of "
                "grad_input's dtype and the reduction's sizes, got grad_out ", describe(grad_out),
                ", total_weight ", describe(total_weight), " for grad_input ",
                describe(grad_input));
  const int64_t total = grad_input.numel();
  if (total == 0) return;
  const int64_t C = grad_input.size(1), S = grad_input.size(2);
  BadIndexFlag bad(ctx);
  dispatch_cuda_dtype(grad_input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const NllArgs<T> a = nll_args<T>(grad_input, target, weight, C, S, ignore_index);
    nll_loss_backward_elements<T><<<grid_for(total), kBlockSize, 0, stream_of(ctx)>>>(
        a, grad_input.data<T>(), grad_input.strides()[0], grad_input.strides()[1],
        grad_input.strides()[2], grad_out.data<T>(), none ? grad_out.strides()[0] : 0,
        none ? grad_out.strides()[1] : 0, none, total_weight.data<T>(),
        reduction == Reduction::kMean, total, bad.device_ptr());
  });
  after_launch(ctx, op);
  raise_bad_target(bad, target, C);
}

}  // namespace

void register_nll_loss_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::NllLoss>(type, &nll_loss_kernel);
  registry.register_kernel<kernels::NllLossBackward>(type, &nll_loss_backward_kernel);
}

}  // namespace tessera::cuda
