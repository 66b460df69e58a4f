// Reflection and replication padding in 1, 2 and 3 dims, forward and
// backward, composed of tessera ops: each padded dim is one index_select
// with the source index of every output position (reflected about the
// edges, or clamped to them), and the backward adds the gradient back
// through the same indices with index_add_ (in a fixed order, so the result
// is deterministic). nn.ReflectionPad{1,2,3}d and nn.ReplicationPad{1,2,3}d
// then run without the CPU fallback on every tessera device.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

enum class PadMode { kReflect, kReplicate };

const char* op_name(PadMode mode) {
  return mode == PadMode::kReflect ? "reflection_pad" : "replication_pad";
}

// Source index along a dim of n elements for each of the n + lo + hi
// output positions, on `device`.
at::Tensor source_indices(PadMode mode, int64_t n, int64_t lo, int64_t hi, int dims, int64_t dim,
                          const at::Tensor& self, c10::Device device) {
  const int64_t out_n = n + lo + hi;
  TORCH_CHECK(n > 0 && out_n > 0, op_name(mode), dims, "d: input ", self.sizes(), " with padding (",
              lo, ", ", hi, ") in dim ", dim, " gives an empty or negative size ", out_n);
  if (mode == PadMode::kReflect) {
    TORCH_CHECK(lo < n && hi < n, op_name(mode), dims,
                "d: padding size should be less than the corresponding input dimension, got "
                "padding (", lo, ", ", hi, ") in dim ", dim, " of input ", self.sizes());
  }
  std::vector<int64_t> index(static_cast<size_t>(out_n));
  for (int64_t o = 0; o < out_n; ++o) {
    int64_t i = o - lo;
    if (mode == PadMode::kReflect) {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
    } else {
      i = i < 0 ? 0 : (i >= n ? n - 1 : i);
    }
    index[static_cast<size_t>(o)] = i;
  }
  return at::tensor(index, at::kLong).to(device);
}

void check_padding(PadMode mode, int dims, const at::Tensor& self, c10::IntArrayRef padding) {
  TORCH_CHECK(static_cast<int64_t>(padding.size()) == 2 * dims, op_name(mode), dims,
              "d: padding must have ", 2 * dims, " entries, got ", padding.size());
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, op_name(mode), dims,
              "d: expected a ", dims + 1, "-D or ", dims + 2, "-D input, got ", self.sizes());
}

// padding lists the last dim's (lo, hi) first, then the one before, ...
template <PadMode kMode, int kDims>
at::Tensor pad(const at::Tensor& self, c10::IntArrayRef padding) {
  check_padding(kMode, kDims, self, padding);
  at::Tensor out = self;
  for (int k = 0; k < kDims; ++k) {
    const int64_t dim = self.dim() - 1 - k;
    out = out.index_select(dim, source_indices(kMode, self.size(dim), padding[2 * k],
                                               padding[2 * k + 1], kDims, dim, self,
                                               self.device()));
  }
  return out;
}

template <PadMode kMode, int kDims>
at::Tensor& pad_out(const at::Tensor& self, c10::IntArrayRef padding, at::Tensor& out) {
  return write_out(out, pad<kMode, kDims>(self, padding));
}

template <PadMode kMode, int kDims>
at::Tensor pad_backward(const at::Tensor& grad, const at::Tensor& self, c10::IntArrayRef padding) {
  check_padding(kMode, kDims, self, padding);
  at::Tensor g = grad;
  // Undo the forward's index_selects, the last one first.
  for (int k = kDims - 1; k >= 0; --k) {
    const int64_t dim = self.dim() - 1 - k;
    std::vector<int64_t> sizes = g.sizes().vec();
    sizes[static_cast<size_t>(dim)] = self.size(dim);
    const at::Tensor index = source_indices(kMode, self.size(dim), padding[2 * k],
                                            padding[2 * k + 1], kDims, dim, self, grad.device());
    TORCH_CHECK(g.size(dim) == index.numel(), op_name(kMode), kDims, "d_backward: grad_output ",
                grad.sizes(), " does not match input ", self.sizes(), " padded by ", padding);
    g = at::zeros(sizes, grad.options()).index_add_(dim, index, g);
  }
  return g;
}

template <PadMode kMode, int kDims>
at::Tensor& pad_backward_out(const at::Tensor& grad, const at::Tensor& self,
                             c10::IntArrayRef padding, at::Tensor& grad_input) {
  return write_out(grad_input, pad_backward<kMode, kDims>(grad, self, padding));
}

constexpr PadMode kReflect = PadMode::kReflect;
constexpr PadMode kReplicate = PadMode::kReplicate;

}  // namespace

TESSERA_ATEN_KERNELS(m) {
  m.impl("reflection_pad1d", TORCH_FN((pad<kReflect, 1>)));
  m.impl("reflection_pad1d.out", TORCH_FN((pad_out<kReflect, 1>)));
  m.impl("reflection_pad1d_backward", TORCH_FN((pad_backward<kReflect, 1>)));
  m.impl("reflection_pad1d_backward.grad_input", TORCH_FN((pad_backward_out<kReflect, 1>)));
  m.impl("reflection_pad2d", TORCH_FN((pad<kReflect, 2>)));
  m.impl("reflection_pad2d.out", TORCH_FN((pad_out<kReflect, 2>)));
  m.impl("reflection_pad2d_backward", TORCH_FN((pad_backward<kReflect, 2>)));
  m.impl("reflection_pad2d_backward.grad_input", TORCH_FN((pad_backward_out<kReflect, 2>)));
  m.impl("reflection_pad3d", TORCH_FN((pad<kReflect, 3>)));
  m.impl("reflection_pad3d.out", TORCH_FN((pad_out<kReflect, 3>)));
  m.impl("reflection_pad3d_backward", TORCH_FN((pad_backward<kReflect, 3>)));
  m.impl("reflection_pad3d_backward.grad_input", TORCH_FN((pad_backward_out<kReflect, 3>)));
  m.impl("replication_pad1d", TORCH_FN((pad<kReplicate, 1>)));
  m.impl("replication_pad1d.out", TORCH_FN((pad_out<kReplicate, 1>)));
  m.impl("replication_pad1d_backward", TORCH_FN((pad_backward<kReplicate, 1>)));
  m.impl("replication_pad1d_backward.grad_input", TORCH_FN((pad_backward_out<kReplicate, 1>)));
  m.impl("replication_pad2d", TORCH_FN((pad<kReplicate, 2>)));
  m.impl("replication_pad2d.out", TORCH_FN((pad_out<kReplicate, 2>)));
  m.impl("replication_pad2d_backward", TORCH_FN((pad_backward<kReplicate, 2>)));
  m.impl("replication_pad2d_backward.grad_input", TORCH_FN((pad_backward_out<kReplicate, 2>)));
  m.impl("replication_pad3d", TORCH_FN((pad<kReplicate, 3>)));
  m.impl("replication_pad3d.out", TORCH_FN((pad_out<kReplicate, 3>)));
  m.impl("replication_pad3d_backward", TORCH_FN((pad_backward<kReplicate, 3>)));
  m.impl("replication_pad3d_backward.grad_input", TORCH_FN((pad_backward_out<kReplicate, 3>)));
}

}  // namespace torch_tessera
