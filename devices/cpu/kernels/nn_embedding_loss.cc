// embedding and nll_loss with their backward on the CPU. Indices and
// targets are read once into int64 buffers (any strides) and range-checked
// there, since only the kernel sees their values.
#include <limits>
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

void embedding_dense_backward_kernel(const KernelContext&, Tensor& grad_weight, const Tensor& grad,
                                     const Tensor& indices, int64_t padding_idx) {
  const int64_t V = grad_weight.size(0), D = grad_weight.size(1);
  const std::vector<int64_t> idx = checked_indices(indices, V, "embedding_dense_backward");
  const std::vector<double> g = nn::read_as<double>(grad);
  // Accumulated in index order (deterministic), in double.
  std::vector<double> acc(static_cast<size_t>(V * D), 0.0);
  for (size_t r = 0; r < idx.size(); ++r) {
    if (idx[r] == padding_idx) continue;
    double* dst = acc.data() + idx[r] * D;
    const double* src = g.data() + static_cast<int64_t>(r) * D;
    for (int64_t j = 0; j < D; ++j) dst[j] += src[j];
  }
  nn::write_from(grad_weight, acc);
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

void nll_loss_kernel(const KernelContext&, Tensor& out, Tensor& total_weight, const Tensor& input,
                     const Tensor& target, const Tensor& weight, kernels::Reduction reduction,
                     int64_t ignore_index) {
  const int64_t N = input.size(0), C = input.size(1), S = input.size(2);
  const std::vector<int64_t> t = nll_targets(target, C, ignore_index);
  const std::vector<double> x = nn::read_as<double>(input);
  const std::vector<double> w = weight.defined() ? nn::read_as<double>(weight) : std::vector<double>();
  std::vector<double> loss(static_cast<size_t>(N * S), 0.0);
  double sum = 0.0, wsum = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < S; ++s) {
      const int64_t c = t[n * S + s];
      if (c == ignore_index) continue;
      const double wc = w.empty() ? 1.0 : w[c];
      loss[n * S + s] = -wc * x[(n * C + c) * S + s];
      sum += loss[n * S + s];
      wsum += wc;
    }
  }
  nn::write_from(total_weight, std::vector<double>{wsum});
  if (reduction == kernels::Reduction::kNone) {
    nn::write_from(out, loss);
  } else {
    // Mean over zero total weight is 0/0 = NaN, as PyTorch.
    const double r = reduction == kernels::Reduction::kSum ? sum : sum / wsum;
    nn::write_from(out, std::vector<double>{r});
  }
}

void nll_loss_backward_kernel(const KernelContext&, Tensor& grad_input, const Tensor& grad_out,
                              const Tensor& target, const Tensor& weight,
                              kernels::Reduction reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  const int64_t N = grad_input.size(0), C = grad_input.size(1), S = grad_input.size(2);
  const std::vector<int64_t> t = nll_targets(target, C, ignore_index);
  const std::vector<double> g = nn::read_as<double>(grad_out);
  const std::vector<double> w = weight.defined() ? nn::read_as<double>(weight) : std::vector<double>();
  const double tw = nn::read_as<double>(total_weight)[0];
  std::vector<double> gi(static_cast<size_t>(N * C * S), 0.0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < S; ++s) {
      const int64_t c = t[n * S + s];
      if (c == ignore_index) continue;
      const double wc = w.empty() ? 1.0 : w[c];
      double go = reduction == kernels::Reduction::kNone ? g[n * S + s] : g[0];
      if (reduction == kernels::Reduction::kMean) go /= tw;
      gi[(n * C + c) * S + s] = -wc * go;
    }
  }
  nn::write_from(grad_input, gi);
}

}  // namespace

void register_embedding_loss_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Embedding>(type, &embedding_kernel);
  registry.register_kernel<kernels::EmbeddingDenseBackward>(type, &embedding_dense_backward_kernel);
  registry.register_kernel<kernels::NllLoss>(type, &nll_loss_kernel);
  registry.register_kernel<kernels::NllLossBackward>(type, &nll_loss_backward_kernel);
}

}  // namespace tessera::cpu
