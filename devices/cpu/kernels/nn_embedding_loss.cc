// embedding and nll_loss with their backward on the CPU. Indices and
// targets are read once into int64 buffers (any strides) and range-checked
// there, since only the kernel sees their values.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "runtime/core/error.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/nn_staging.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {

namespace {

std::vector<int64_t> checked_indices(const Tensor& indices, int64_t limit, const char* op) {
  std::vector<int64_t> idx = nn::read_as<int64_t>(indices);
  for (int64_t i : idx) {
    TESSERA_CHECK(i >= 0 && i < limit, IndexError, op, ": index ", i,
                  " out of range in self (size ", limit, ")");
  }
  return idx;
}

void embedding_kernel(const KernelContext&, Tensor& out, const Tensor& weight,
                      const Tensor& indices) {
  const int64_t V = weight.size(0), D = weight.size(1);
  const std::vector<int64_t> idx = checked_indices(indices, V, "embedding");
  dispatch_dtype(weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* w = static_cast<const T*>(weight.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    const int64_t ws0 = weight.strides()[0], ws1 = weight.strides()[1];
    const int64_t os0 = out.strides()[0], os1 = out.strides()[1];
    const int64_t n = static_cast<int64_t>(idx.size());
    parallel_for_range(n, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(D, 1)),
                       [&](int64_t r0, int64_t r1) {
                         for (int64_t r = r0; r < r1; ++r) {
                           const T* src = w + idx[r] * ws0;
                           T* dst = o + r * os0;
                           for (int64_t j = 0; j < D; ++j) dst[j * os1] = src[j * ws1];
                         }
                       });
  });
}

// grad_weight[idx[r]] += grad[r] for each row r, in index order (the same
// bits on every run). The columns are split over the threads, each of
// which walks every index: no two threads touch one element.
void embedding_dense_backward_kernel(const KernelContext&, Tensor& grad_weight, const Tensor& grad,
                                     const Tensor& indices, int64_t padding_idx) {
  const int64_t V = grad_weight.size(0), D = grad_weight.size(1);
  const std::vector<int64_t> idx = checked_indices(indices, V, "embedding_dense_backward");
  const int64_t rows = static_cast<int64_t>(idx.size());
  dispatch_dtype(grad_weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    // The 16-bit floats sum in float (their own precision would drop a
    // repeated index's small terms), f32 and f64 in place, as PyTorch's
    // CPU index_add_; other dtypes in double.
    using A = std::conditional_t<is_half_v<T>, float,
                                 std::conditional_t<is_float_v<T>, T, double>>;
    const T* g = static_cast<const T*>(grad.data_ptr());
    const int64_t gs0 = grad.strides()[0], gs1 = grad.strides()[1];
    T* w = static_cast<T*>(grad_weight.data_ptr());
    const int64_t ws0 = grad_weight.strides()[0], ws1 = grad_weight.strides()[1];
    if constexpr (std::is_same_v<A, T>) {
      grad_weight.fill_(0);
      const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(rows, 1));
      parallel_for_range(D, grain, [&](int64_t j0, int64_t j1) {
        for (int64_t r = 0; r < rows; ++r) {
          if (idx[r] == padding_idx) continue;
          T* dst = w + idx[r] * ws0;
          const T* src = g + r * gs0;
          for (int64_t j = j0; j < j1; ++j) dst[j * ws1] += src[j * gs1];
        }
      });
    } else {
      std::vector<A> acc(static_cast<size_t>(V * D), A(0));
      for (int64_t r = 0; r < rows; ++r) {
        if (idx[r] == padding_idx) continue;
        A* dst = acc.data() + idx[r] * D;
        const T* src = g + r * gs0;
        for (int64_t j = 0; j < D; ++j) dst[j] += convert<A>(src[j * gs1]);
      }
      nn::write_from(grad_weight, acc);
    }
  });
}

// Targets [N, S] read and checked (ignore_index passes unchecked).
std::vector<int64_t> nll_targets(const Tensor& target, int64_t classes, int64_t ignore_index) {
  std::vector<int64_t> t = nn::read_as<int64_t>(target);
  for (int64_t v : t) {
    TESSERA_CHECK(v == ignore_index || (v >= 0 && v < classes), IndexError, "nll_loss: target ", v,
                  " is out of bounds for ", classes, " classes");
  }
  return t;
}

// Targets per block of the loss sums: the blocks are fixed (not one per
// thread), and their sums are added in order, so the sum has the same bits
// on any number of threads.
constexpr int64_t kNllBlock = 4096;

// Reads only the N * S picked elements of input [N, C, S]: a language
// model's [tokens, vocabulary] log-probabilities are far larger than its
// targets, and staging all of them took 43 ms for [1024, 8000] (torch:
// 7 us).
void nll_loss_kernel(const KernelContext&, Tensor& out, Tensor& total_weight, const Tensor& input,
                     const Tensor& target, const Tensor& weight, kernels::Reduction reduction,
                     int64_t ignore_index) {
  const int64_t N = input.size(0), C = input.size(1), S = input.size(2);
  const std::vector<int64_t> t = nll_targets(target, C, ignore_index);
  const std::vector<double> w = weight.defined() ? nn::read_as<double>(weight) : std::vector<double>();
  const int64_t M = N * S, blocks = (M + kNllBlock - 1) / kNllBlock;
  const bool per_target = reduction == kernels::Reduction::kNone;
  std::vector<double> block_sum(static_cast<size_t>(blocks), 0.0);
  std::vector<double> block_weight(static_cast<size_t>(blocks), 0.0);
  dispatch_dtype(input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(input.data_ptr());
    const int64_t xs0 = input.strides()[0], xs1 = input.strides()[1], xs2 = input.strides()[2];
    T* o = static_cast<T*>(out.data_ptr());
    const int64_t os0 = per_target ? out.strides()[0] : 0, os1 = per_target ? out.strides()[1] : 0;
    parallel_for_range(blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        double sum = 0.0, wsum = 0.0;
        for (int64_t i = b * kNllBlock, end = std::min(M, i + kNllBlock); i < end; ++i) {
          const int64_t n = i / S, s = i - n * S, c = t[static_cast<size_t>(i)];
          double loss = 0.0;
          if (c != ignore_index) {
            const double wc = w.empty() ? 1.0 : w[static_cast<size_t>(c)];
            loss = -wc * convert<double>(x[n * xs0 + c * xs1 + s * xs2]);
            sum += loss;
            wsum += wc;
          }
          if (per_target) o[n * os0 + s * os1] = convert<T>(loss);
        }
        block_sum[static_cast<size_t>(b)] = sum;
        block_weight[static_cast<size_t>(b)] = wsum;
      }
    });
  });
  double sum = 0.0, wsum = 0.0;
  for (int64_t b = 0; b < blocks; ++b) {
    sum += block_sum[static_cast<size_t>(b)];
    wsum += block_weight[static_cast<size_t>(b)];
  }
  nn::write_from(total_weight, std::vector<double>{wsum});
  if (!per_target) {
    // Mean over zero total weight is 0/0 = NaN, as PyTorch.
    const double r = reduction == kernels::Reduction::kSum ? sum : sum / wsum;
    nn::write_from(out, std::vector<double>{r});
  }
}

// grad_input is zero but at each target's class: zeroed in parallel, then
// the N * S picked elements written.
void nll_loss_backward_kernel(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                              const Tensor& target, const Tensor& weight,
                              kernels::Reduction reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  const int64_t N = grad_input.size(0), C = grad_input.size(1), S = grad_input.size(2);
  const std::vector<int64_t> t = nll_targets(target, C, ignore_index);
  const std::vector<double> g = nn::read_as<double>(grad_out);
  const std::vector<double> w = weight.defined() ? nn::read_as<double>(weight) : std::vector<double>();
  const double tw = nn::read_as<double>(total_weight)[0];
  grad_input.fill_(0);
  dispatch_dtype(grad_input.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* gi = static_cast<T*>(grad_input.data_ptr());
    const int64_t gs0 = grad_input.strides()[0], gs1 = grad_input.strides()[1],
                  gs2 = grad_input.strides()[2];
    parallel_for_range(N * S, kElementwiseGrain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t c = t[static_cast<size_t>(i)];
        if (c == ignore_index) continue;
        const int64_t n = i / S, s = i - n * S;
        const double wc = w.empty() ? 1.0 : w[static_cast<size_t>(c)];
        double go = reduction == kernels::Reduction::kNone ? g[static_cast<size_t>(i)] : g[0];
        if (reduction == kernels::Reduction::kMean) go /= tw;
        gi[n * gs0 + c * gs1 + s * gs2] = convert<T>(-wc * go);
      }
    });
  });
}

}  // namespace

void register_embedding_loss_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Embedding>(type, &embedding_kernel);
  registry.register_kernel<kernels::EmbeddingDenseBackward>(type, &embedding_dense_backward_kernel);
  registry.register_kernel<kernels::NllLoss>(type, &nll_loss_kernel);
  registry.register_kernel<kernels::NllLossBackward>(type, &nll_loss_backward_kernel);
}

}  // namespace tessera::cpu
