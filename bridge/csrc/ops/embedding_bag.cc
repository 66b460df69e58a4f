// nn.EmbeddingBag and F.embedding_bag: aten's _embedding_bag (and its
// no-grad twin _embedding_bag_forward_only), the dense weight gradient and
// the per_sample_weights gradient, on the runtime's embedding_bag
// (runtime/ops/nn_embedding_bag.cc). aten's autograd formula passes the
// forward's offset2bag, bag_size and max_indices back to the backward, so
// the runtime returns them as aten's kernels do.
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using BagResults = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>;

tessera::EmbeddingBagMode bag_mode(const char* op, int64_t mode) {
  TORCH_CHECK_VALUE(mode >= 0 && mode <= 2, op,
                    ": mode must be 0 (sum), 1 (mean) or 2 (max), got ", mode);
  return static_cast<tessera::EmbeddingBagMode>(mode);
}

// aten passes padding_idx wrapped into [0, num_weights), or -1 for none.
std::optional<int64_t> padding_of(int64_t padding_idx) {
  if (padding_idx < 0) return std::nullopt;
  return padding_idx;
}

BagResults embedding_bag(const at::Tensor& weight, const at::Tensor& indices,
                         const at::Tensor& offsets, bool /*scale_grad_by_freq*/, int64_t mode,
                         bool /*sparse*/, const std::optional<at::Tensor>& per_sample_weights,
                         bool include_last_offset, int64_t padding_idx) {
  const char* op = "embedding_bag";
  const OpScope scope(weight);
  const tessera::Tensor w = to_runtime(weight, op);
  const tessera::Tensor idx = to_runtime(indices, op);
  const tessera::Tensor off = to_runtime(offsets, op);
  const tessera::Tensor sample_weights = to_runtime(per_sample_weights, op).value_or(tessera::Tensor());
  const tessera::EmbeddingBagResult r = call_runtime([&] {
    return tessera::embedding_bag(w, idx, off, bag_mode(op, mode), sample_weights,
                                  include_last_offset, padding_of(padding_idx));
  });
  return {to_torch(r.output), to_torch(r.offset2bag), to_torch(r.bag_size),
          to_torch(r.max_indices)};
}

at::Tensor embedding_bag_dense_backward(const at::Tensor& grad, const at::Tensor& indices,
                                        const at::Tensor& offset2bag, const at::Tensor& bag_size,
                                        const at::Tensor& maximum_indices, int64_t num_weights,
                                        bool scale_grad_by_freq, int64_t mode,
                                        const std::optional<at::Tensor>& per_sample_weights,
                                        int64_t padding_idx) {
  const char* op = "embedding_bag_backward";
  const OpScope scope(grad);
  const tessera::Tensor g = to_runtime(grad, op);
  const tessera::Tensor idx = to_runtime(indices, op);
  const tessera::Tensor bags = to_runtime(offset2bag, op);
  const tessera::Tensor sizes = to_runtime(bag_size, op);
  const tessera::Tensor maxima = to_runtime(maximum_indices, op);
  const tessera::Tensor sample_weights = to_runtime(per_sample_weights, op).value_or(tessera::Tensor());
  return to_torch(call_runtime([&] {
    return tessera::embedding_bag_dense_backward(g, idx, bags, sizes, maxima, num_weights,
                                                 scale_grad_by_freq, bag_mode(op, mode),
                                                 sample_weights, padding_of(padding_idx));
  }));
}

// aten's _embedding_bag_backward picks the sparse or the dense gradient;
// tessera has no sparse layout.
at::Tensor embedding_bag_backward(const at::Tensor& grad, const at::Tensor& indices,
                                  const at::Tensor& /*offsets*/, const at::Tensor& offset2bag,
                                  const at::Tensor& bag_size, const at::Tensor& maximum_indices,
                                  int64_t num_weights, bool scale_grad_by_freq, int64_t mode,
                                  bool sparse,
                                  const std::optional<at::Tensor>& per_sample_weights,
                                  int64_t padding_idx) {
  TORCH_CHECK_NOT_IMPLEMENTED(!sparse, "embedding_bag: sparse=True gives a sparse gradient, and "
                              "tessera has no sparse layout; use sparse=False (grad of ",
                              grad.sizes(), " on ", grad.device(), ")");
  return embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                      num_weights, scale_grad_by_freq, mode, per_sample_weights,
                                      padding_idx);
}

at::Tensor embedding_bag_per_sample_weights_backward(const at::Tensor& grad,
                                                     const at::Tensor& weight,
                                                     const at::Tensor& indices,
                                                     const at::Tensor& /*offsets*/,
                                                     const at::Tensor& offset2bag, int64_t mode,
                                                     int64_t padding_idx) {
  const char* op = "embedding_bag_per_sample_weights_backward";
  const OpScope scope(grad);
  const tessera::Tensor g = to_runtime(grad, op);
  const tessera::Tensor w = to_runtime(weight, op);
  const tessera::Tensor idx = to_runtime(indices, op);
  const tessera::Tensor bags = to_runtime(offset2bag, op);
  return to_torch(call_runtime([&] {
    return tessera::embedding_bag_per_sample_weights_backward(g, w, idx, bags, bag_mode(op, mode),
                                                              padding_of(padding_idx));
  }));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_embedding_bag", TORCH_FN(embedding_bag));
  m.impl("_embedding_bag_forward_only", TORCH_FN(embedding_bag));
  m.impl("_embedding_bag_backward", TORCH_FN(embedding_bag_backward));
  m.impl("_embedding_bag_dense_backward", TORCH_FN(embedding_bag_dense_backward));
  m.impl("_embedding_bag_per_sample_weights_backward",
         TORCH_FN(embedding_bag_per_sample_weights_backward));
}

}  // namespace torch_tessera
