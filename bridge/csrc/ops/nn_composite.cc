// glu, prelu, the smooth L1, Huber, binary cross-entropy, multi-class and
// multi-label margin losses, and group norm's backward, composed of tessera ops
// (sigmoid, where, abs, log, gather, means and sums), so nn.GLU, nn.PReLU,
// nn.SmoothL1Loss, nn.HuberLoss, nn.BCELoss, nn.MultiMarginLoss,
// nn.MultiLabelMarginLoss and nn.GroupNorm train without the CPU fallback on every tessera device;
// also pdist (from cdist), _batch_norm_with_update (from native_batch_norm),
// embedding_renorm_ (nn.Embedding's max_norm) and weight norm's fused
// interface (nn.utils.weight_norm).
// Arithmetic follows PyTorch's CPU kernels.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

// -- glu: the first half of `dim` times the sigmoid of the second.

std::pair<at::Tensor, at::Tensor> glu_halves(const at::Tensor& self, int64_t dim) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, "glu: halving dimension ", dim,
              " must be even, got size ", self.size(d), " for input ", self.sizes());
  const int64_t half = self.size(d) / 2;
  return {self.narrow(d, 0, half), self.narrow(d, half, half)};
}

at::Tensor composite_glu(const at::Tensor& self, int64_t dim) {
  const auto [a, b] = glu_halves(self, dim);
  return a * b.sigmoid();
}
at::Tensor& composite_glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  return write_out(out, composite_glu(self, dim));
}
at::Tensor composite_glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  const auto [a, b] = glu_halves(self, dim);
  const at::Tensor s = b.sigmoid();
  return at::cat({grad * s, grad * a * s * (1 - s)}, c10::maybe_wrap_dim(dim, self.dim()));
}
at::Tensor& composite_glu_backward_out(const at::Tensor& grad, const at::Tensor& self, int64_t dim,
                                       at::Tensor& grad_input) {
  return write_out(grad_input, composite_glu_backward(grad, self, dim));
}

// -- prelu: x > 0 ? x : weight * x, weight broadcast against x (aten's
// prelu shapes it so before calling the kernel).

at::Tensor composite_prelu(const at::Tensor& self, const at::Tensor& weight) {
  return at::where(self > 0, self, weight * self);
}
std::tuple<at::Tensor, at::Tensor> composite_prelu_backward(const at::Tensor& grad,
                                                            const at::Tensor& self,
                                                            const at::Tensor& weight) {
  const at::Tensor positive = self > 0;
  at::Tensor grad_self = at::where(positive, grad, weight * grad);
  at::Tensor grad_weight =
      at::where(positive, at::zeros({}, grad.options()), self * grad).sum_to_size(weight.sizes());
  return {std::move(grad_self), std::move(grad_weight)};
}

// -- smooth L1 (beta) and Huber (delta) losses, with their reductions.

at::Tensor reduce(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

// The elementwise gradient scaled as the reduction asks.
at::Tensor reduced_gradient(const at::Tensor& grad, const at::Tensor& local, int64_t reduction) {
  at::Tensor g = grad * local;
  if (reduction == at::Reduction::Mean) g = g / static_cast<double>(local.numel());
  return g;
}

at::Tensor composite_smooth_l1(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta) {
  const at::Tensor diff = (self - target).abs();
  if (beta == 0) return reduce(diff, reduction);
  return reduce(at::where(diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta), reduction);
}
at::Tensor& composite_smooth_l1_out(const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double beta, at::Tensor& out) {
  return write_out(out, composite_smooth_l1(self, target, reduction, beta));
}
at::Tensor composite_smooth_l1_backward(const at::Tensor& grad, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta) {
  const at::Tensor diff = self - target;
  const at::Tensor local =
      beta == 0 ? diff.sign() : at::where(diff.abs() < beta, diff / beta, diff.sign());
  return reduced_gradient(grad, local, reduction);
}
at::Tensor& composite_smooth_l1_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                             const at::Tensor& target, int64_t reduction,
                                             double beta, at::Tensor& grad_input) {
  return write_out(grad_input, composite_smooth_l1_backward(grad, self, target, reduction, beta));
}

at::Tensor composite_huber(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                           double delta) {
  const at::Tensor diff = (self - target).abs();
  return reduce(at::where(diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta), reduction);
}
at::Tensor& composite_huber_out(const at::Tensor& self, const at::Tensor& target,
                                int64_t reduction, double delta, at::Tensor& out) {
  return write_out(out, composite_huber(self, target, reduction, delta));
}
at::Tensor composite_huber_backward(const at::Tensor& grad, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction, double delta) {
  const at::Tensor diff = self - target;
  const at::Tensor local = at::where(diff.abs() <= delta, diff, diff.sign() * delta);
  return reduced_gradient(grad, local, reduction);
}
at::Tensor& composite_huber_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                         const at::Tensor& target, int64_t reduction,
                                         double delta, at::Tensor& grad_input) {
  return write_out(grad_input, composite_huber_backward(grad, self, target, reduction, delta));
}

// -- binary cross-entropy: -(t * log(x) + (1 - t) * log(1 - x)), each log
// clamped at -100 as PyTorch does, times the optional weight.

void check_bce(const char* op, const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.sizes() == target.sizes(), op, ": target ", target.sizes(), " and input ",
              self.sizes(), " must have the same size");
  // One host read, as PyTorch's CPU kernel checks every element too.
  TORCH_CHECK(!((self < 0) | (self > 1)).any().item<bool>(), op,
              ": all elements of input should be between 0 and 1");
}

at::Tensor composite_bce(const at::Tensor& self, const at::Tensor& target,
                         const std::optional<at::Tensor>& weight, int64_t reduction) {
  check_bce("binary_cross_entropy", self, target);
  at::Tensor loss = (target - 1) * at::log1p(-self).clamp_min(-100) -
                    target * self.log().clamp_min(-100);
  if (present(weight)) loss = loss * *weight;
  return reduce(loss, reduction);
}
at::Tensor& composite_bce_out(const at::Tensor& self, const at::Tensor& target,
                              const std::optional<at::Tensor>& weight, int64_t reduction,
                              at::Tensor& out) {
  return write_out(out, composite_bce(self, target, weight, reduction));
}
at::Tensor composite_bce_backward(const at::Tensor& grad, const at::Tensor& self,
                                  const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight, int64_t reduction) {
  check_bce("binary_cross_entropy_backward", self, target);
  at::Tensor local = (self - target) / ((1 - self) * self).clamp_min(1e-12);
  if (present(weight)) local = local * *weight;
  return reduced_gradient(grad, local, reduction);
}
at::Tensor& composite_bce_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                       const at::Tensor& target,
                                       const std::optional<at::Tensor>& weight,
                                       int64_t reduction, at::Tensor& grad_input) {
  return write_out(grad_input, composite_bce_backward(grad, self, target, weight, reduction));
}

// -- multi-class margin loss: for each sample n with class y,
//   sum over i != y of max(0, margin - x[y] + x[i])^p * weight[y] / C.

struct MarginTerms {
  at::Tensor input;     // [N, C]
  at::Tensor z;         // max(0, margin - x[y] + x[i]), 0 at i == y
  at::Tensor scale;     // weight[y] / C, [N, 1]
  at::Tensor is_class;  // one-hot of y, [N, C]
};

MarginTerms margin_terms(const char* op, const at::Tensor& self, const at::Tensor& target,
                         const at::Scalar& p, const at::Scalar& margin,
                         const std::optional<at::Tensor>& weight) {
  TORCH_CHECK(p.toLong() == 1 || p.toLong() == 2, op, ": only p == 1 and p == 2 supported, got ",
              p.toDouble());
  TORCH_CHECK((self.dim() <= 1 && target.numel() == 1) ||
                  (self.dim() == 2 && target.dim() == 1 && target.size(0) == self.size(0)),
              op, ": expected input [N, C] with target [N] (or [C] or a scalar with one target), ",
              "got input ", self.sizes(), " and target ", target.sizes());
  // A 0-d input is one sample of one class, a 1-D one one sample.
  const at::Tensor x = self.dim() == 2 ? self : self.reshape({1, -1});
  const int64_t classes = x.size(1);
  const at::Tensor y = target.reshape({-1, 1}).to(at::kLong);
  TORCH_CHECK(((y >= 0) & (y < classes)).all().item<bool>(), op, ": target out of range for ",
              classes, " classes");
  const at::Tensor is_class = at::zeros_like(x).scatter_(1, y, 1.0);
  const at::Tensor z =
      ((margin.toDouble() - x.gather(1, y) + x).clamp_min(0)) * (1 - is_class);
  at::Tensor scale = at::full({x.size(0), 1}, 1.0 / static_cast<double>(classes), x.options());
  if (present(weight)) scale = scale * weight->index_select(0, y.reshape({-1})).reshape({-1, 1});
  return {x, z, scale, is_class};
}

at::Tensor composite_multi_margin(const at::Tensor& self, const at::Tensor& target,
                                  const at::Scalar& p, const at::Scalar& margin,
                                  const std::optional<at::Tensor>& weight, int64_t reduction) {
  const MarginTerms t = margin_terms("multi_margin_loss", self, target, p, margin, weight);
  const at::Tensor powered = p.toLong() == 2 ? t.z * t.z : t.z;
  const at::Tensor loss = reduce((powered * t.scale).sum(1), reduction);  // [N] unreduced
  // Unreduced, the loss has the target's shape (0-d for one target), as
  // PyTorch's.
  return reduction == at::Reduction::None ? loss.reshape(target.sizes()) : loss;
}
at::Tensor& composite_multi_margin_out(const at::Tensor& self, const at::Tensor& target,
                                       const at::Scalar& p, const at::Scalar& margin,
                                       const std::optional<at::Tensor>& weight,
                                       int64_t reduction, at::Tensor& out) {
  return write_out(out, composite_multi_margin(self, target, p, margin, weight, reduction));
}
at::Tensor composite_multi_margin_backward(const at::Tensor& grad, const at::Tensor& self,
                                           const at::Tensor& target, const at::Scalar& p,
                                           const at::Scalar& margin,
                                           const std::optional<at::Tensor>& weight,
                                           int64_t reduction) {
  const MarginTerms t = margin_terms("multi_margin_loss_backward", self, target, p, margin, weight);
  // d loss / d x[i] for i != y; x[y] gets minus their sum.
  const at::Tensor slope = p.toLong() == 2 ? 2 * t.z : (t.z > 0).to(t.z.scalar_type());
  at::Tensor per_sample = grad.dim() == 0 ? grad : grad.reshape({-1, 1});
  if (reduction == at::Reduction::Mean) per_sample = per_sample / static_cast<double>(t.input.size(0));
  const at::Tensor d_other = slope * t.scale * per_sample;
  const at::Tensor d_input = d_other - t.is_class * d_other.sum(1, /*keepdim=*/true);
  return d_input.reshape(self.sizes());
}
at::Tensor& composite_multi_margin_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                                const at::Tensor& target, const at::Scalar& p,
                                                const at::Scalar& margin,
                                                const std::optional<at::Tensor>& weight,
                                                int64_t reduction, at::Tensor& grad_input) {
  return write_out(grad_input,
                   composite_multi_margin_backward(grad, self, target, p, margin, weight, reduction));
}

// -- multi-label margin loss: each sample's target lists its classes up to
// the first -1; the loss sums max(0, 1 - x[y_j] + x[i]) over the listed
// y_j and the unlisted i, divided by C.

struct MultilabelTerms {
  at::Tensor listed;     // [N, J] float: 1 where target[n, j] is a listed class
  at::Tensor index;      // [N, J] the listed classes, 0 elsewhere
  at::Tensor is_target;  // [N, C] float
  at::Tensor active;     // [N, J, C]: the pairs (y_j, i) whose hinge is positive
  at::Tensor hinge;      // [N, J, C]: their max(0, 1 - x[y_j] + x[i])
};

MultilabelTerms multilabel_terms(const char* op, const at::Tensor& self, const at::Tensor& target) {
  TORCH_CHECK(self.dim() <= 2 && target.sizes() == self.sizes(), op,
              ": expected input [C] or [N, C] (or a scalar) and a target of the same shape, got "
              "input ", self.sizes(), " and target ", target.sizes());
  // A 0-d input is one sample of one class, a 1-D one one sample.
  TORCH_CHECK(target.scalar_type() == at::kLong, op, ": expected a target of dtype int64, got ",
              target.scalar_type());
  const at::Tensor x = self.dim() == 2 ? self : self.reshape({1, -1});
  const at::Tensor y = self.dim() == 2 ? target : target.reshape({1, -1});
  const int64_t classes = x.size(1);
  TORCH_CHECK(classes > 0, op, ": expected at least one class, got input ", self.sizes());
  const at::Tensor listed = (y >= 0).cumprod(1).to(at::kBool);
  // The entry that ends the list (the first negative) must be -1.
  const at::Tensor ends = ~listed & at::cat({at::ones_like(listed.narrow(1, 0, 1)),
                                             listed.narrow(1, 0, classes - 1)}, 1);
  TORCH_CHECK(((~listed | (y < classes)) & (~ends | (y == -1))).all().item<bool>(), op,
              ": target out of range for ", classes, " classes: each entry before the first -1 ",
              "must be a class index, got target ", target.sizes());
  const at::Tensor listed_f = listed.to(x.scalar_type());
  const at::Tensor index = at::where(listed, y, at::zeros_like(y));
  const at::Tensor is_target = at::zeros_like(x).scatter_add_(1, index, listed_f).clamp_max(1);
  const at::Tensor margin = 1 - x.gather(1, index).unsqueeze(2) + x.unsqueeze(1);
  const at::Tensor pairs = listed_f.unsqueeze(2) * (1 - is_target).unsqueeze(1);
  const at::Tensor active = (margin > 0).to(x.scalar_type()) * pairs;
  return {listed_f, index, is_target, active, margin * active};
}

std::tuple<at::Tensor, at::Tensor> composite_multilabel_margin(const at::Tensor& self,
                                                               const at::Tensor& target,
                                                               int64_t reduction) {
  // IntArrayRef named: in torch 2.11 a braced list also fits sum's DimnameList.
  const MultilabelTerms t = multilabel_terms("multilabel_margin_loss", self, target);
  const at::Tensor per_sample =
      t.hinge.sum(at::IntArrayRef{1, 2}) / static_cast<double>(t.is_target.size(1));
  at::Tensor loss = reduce(per_sample, reduction);
  if (self.dim() <= 1 && reduction == at::Reduction::None) loss = loss.reshape({});
  return {loss, t.is_target.reshape(self.sizes())};
}
std::tuple<at::Tensor&, at::Tensor&> composite_multilabel_margin_out(const at::Tensor& self,
                                                                     const at::Tensor& target,
                                                                     int64_t reduction,
                                                                     at::Tensor& output,
                                                                     at::Tensor& is_target) {
  auto [loss, listed] = composite_multilabel_margin(self, target, reduction);
  write_out(output, loss);
  write_out(is_target, listed);
  return {output, is_target};
}
at::Tensor composite_multilabel_margin_backward(const at::Tensor& grad, const at::Tensor& self,
                                               const at::Tensor& target, int64_t reduction,
                                               const at::Tensor& /*is_target*/) {
  const MultilabelTerms t = multilabel_terms("multilabel_margin_loss_backward", self, target);
  // Each active pair adds 1 / C to x[i] and takes it from x[y_j].
  const at::Tensor rises = t.active.sum(1);
  const at::Tensor falls = at::zeros_like(rises).scatter_add_(1, t.index, t.active.sum(2));
  at::Tensor per_sample = grad.dim() == 0 ? grad : grad.reshape({-1, 1});
  if (reduction == at::Reduction::Mean) per_sample = per_sample / static_cast<double>(rises.size(0));
  const double classes = static_cast<double>(rises.size(1));
  return ((rises - falls) * per_sample / classes).reshape(self.sizes());
}
at::Tensor& composite_multilabel_margin_backward_out(const at::Tensor& grad,
                                                     const at::Tensor& self,
                                                     const at::Tensor& target, int64_t reduction,
                                                     const at::Tensor& is_target,
                                                     at::Tensor& grad_input) {
  return write_out(grad_input,
                   composite_multilabel_margin_backward(grad, self, target, reduction, is_target));
}

// -- group norm's backward (its forward is aten's composite of tessera
// ops): x viewed as [N, group, C / group, HxW], mean and rstd [N, group].

std::tuple<at::Tensor, at::Tensor, at::Tensor> composite_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, int64_t N, int64_t C,
    int64_t HxW, int64_t group, std::array<bool, 3> output_mask) {
  TORCH_CHECK(group > 0 && C % group == 0 && input.numel() == N * C * HxW, "native_group_norm_backward: ",
              "input ", input.sizes(), " does not split into N=", N, ", C=", C, ", HxW=", HxW,
              " with ", group, " groups");
  const int64_t D = C / group;
  const at::Tensor x = input.reshape({N, group, D, HxW});
  const at::Tensor g = grad_out.reshape({N, group, D, HxW});
  const at::Tensor rs = rstd.reshape({N, group, 1, 1}).to(input.scalar_type());
  const at::Tensor xhat = (x - mean.reshape({N, group, 1, 1}).to(input.scalar_type())) * rs;
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    const at::Tensor dxhat = present(weight) ? g * weight->reshape({1, group, D, 1}) : g;
    const at::Tensor mean_dxhat = dxhat.mean(at::IntArrayRef{2, 3}, /*keepdim=*/true);
    const at::Tensor mean_dxhat_xhat =
        (dxhat * xhat).mean(at::IntArrayRef{2, 3}, /*keepdim=*/true);
    grad_input = (rs * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat)).reshape(input.sizes());
  }
  if (output_mask[1]) grad_weight = (g * xhat).sum(at::IntArrayRef{0, 3}).reshape({C});
  if (output_mask[2]) grad_bias = g.sum(at::IntArrayRef{0, 3}).reshape({C});
  return {std::move(grad_input), std::move(grad_weight), std::move(grad_bias)};
}

}  // namespace

// -- pdist: the distances of the rows' pairs i < j, in row-major order of
// the pairs, from cdist computed directly (no GEMM expansion, which loses
// precision for near points).

at::Tensor composite_pdist_forward(const at::Tensor& self, double p) {
  TORCH_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  TORCH_CHECK(p >= 0, "pdist only supports non-negative p values, got ", p);
  const int64_t n = self.size(0);
  if (n < 2) return at::empty({0}, self.options());
  const at::Tensor distances = at::_cdist_forward(self, self, p, /*compute_mode=*/2);
  const at::Tensor pairs =
      at::triu_indices(n, n, 1, at::TensorOptions().dtype(at::kLong)).to(self.device());
  return distances.index({pairs[0], pairs[1]});
}

// -- _batch_norm_with_update: training-mode batch norm that updates the
// running statistics, as native_batch_norm does, with an empty reserve.

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> composite_batch_norm_with_update(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, at::Tensor& running_mean, at::Tensor& running_var,
    double momentum, double eps) {
  auto [out, save_mean, save_invstd] = at::native_batch_norm(
      input, weight, bias, running_mean, running_var, /*training=*/true, momentum, eps);
  return {out, save_mean, save_invstd, at::empty({0}, input.options().dtype(at::kByte))};
}

// -- _weight_norm_interface: w = v (g / ||v||), the norm over every dim
// but `dim` (nn.utils.weight_norm; wav2vec2's positional convolution),
// the norm in float32 for a bfloat16 g and in g's dtype otherwise, as
// PyTorch's CPU kernel. The backward, per slice of `dim` with
// a = sum(grad_w v): grad_g = a / norm, grad_v = (g / norm) (grad_w - v a /
// norm^2), computed in float32 for the 16-bit floats.

std::vector<int64_t> dims_except(int64_t ndim, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim; ++d) {
    if (d != dim) dims.push_back(d);
  }
  return dims;
}

at::ScalarType weight_norm_compute_type(const at::Tensor& t) {
  const auto s = t.scalar_type();
  return s == at::kHalf || s == at::kBFloat16 ? at::kFloat : s;
}

// The fused interface takes the first or the last dim only (aten's
// _weight_norm composes other dims from norm_except_dim itself).
int64_t weight_norm_dim(const char* op, const at::Tensor& v, int64_t dim) {
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1, op,
              ": the fused weight norm takes the first or the last dim, got dim ", dim,
              " for v of shape ", v.sizes());
  return dim;
}

std::tuple<at::Tensor, at::Tensor> composite_weight_norm(const at::Tensor& v, const at::Tensor& g,
                                                         int64_t dim) {
  const int64_t d = weight_norm_dim("_weight_norm_interface", v, dim);
  const at::ScalarType norm_type = g.scalar_type() == at::kBFloat16 ? at::kFloat : g.scalar_type();
  const at::Tensor norm = at::linalg_vector_norm(v.to(weight_norm_compute_type(v)), 2,
                                                 dims_except(v.dim(), d), /*keepdim=*/true);
  const at::Tensor w = (v * (g / norm.to(g.scalar_type()))).contiguous();
  return {w, norm.to(norm_type)};
}

std::tuple<at::Tensor, at::Tensor> composite_weight_norm_backward(const at::Tensor& grad_w,
                                                                  const at::Tensor& v,
                                                                  const at::Tensor& g,
                                                                  const at::Tensor& norm,
                                                                  int64_t dim) {
  const int64_t d = weight_norm_dim("_weight_norm_interface_backward", v, dim);
  const at::ScalarType c = weight_norm_compute_type(v);
  const at::Tensor gw = grad_w.to(c), vc = v.to(c), gc = g.to(c), n = norm.to(c);
  const at::Tensor a = (gw * vc).sum(dims_except(v.dim(), d), /*keepdim=*/true);
  const at::Tensor grad_g = (a / n).to(g.scalar_type()).reshape(g.sizes()).contiguous();
  const at::Tensor grad_v = ((gc / n) * (gw - vc * (a / (n * n)))).to(v.scalar_type()).contiguous();
  return {grad_v, grad_g};
}

// -- embedding_renorm_: the rows that indices name (each once) scaled to
// norm max_norm where their norm exceeds it (nn.Embedding(max_norm=...)).

at::Tensor& composite_embedding_renorm_(at::Tensor& self, const at::Tensor& indices,
                                        double max_norm, double norm_type) {
  TORCH_CHECK(self.dim() == 2, "embedding_renorm_: self must be 2-D, got ", self.sizes());
  TORCH_CHECK(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt,
              "embedding_renorm_: expected indices of type Long or Int, got ",
              indices.scalar_type());
  if (indices.numel() == 0) return self;
  const at::Tensor rows = std::get<0>(at::_unique2(indices.reshape(-1).to(at::kLong)));
  const at::Tensor selected = self.index_select(0, rows);
  const at::Tensor norms = at::linalg_vector_norm(selected, norm_type, {1}, /*keepdim=*/true);
  const at::Tensor scale =
      at::where(norms > max_norm, max_norm / (norms + 1e-7), at::ones_like(norms));
  self.index_copy_(0, rows, selected * scale);
  return self;
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("embedding_renorm_", TORCH_FN(composite_embedding_renorm_));
  m.impl("_weight_norm_interface", TORCH_FN(composite_weight_norm));
  m.impl("_weight_norm_interface_backward", TORCH_FN(composite_weight_norm_backward));
  m.impl("_pdist_forward", TORCH_FN(composite_pdist_forward));
  m.impl("_batch_norm_with_update", TORCH_FN(composite_batch_norm_with_update));
  m.impl("binary_cross_entropy", TORCH_FN(composite_bce));
  m.impl("binary_cross_entropy.out", TORCH_FN(composite_bce_out));
  m.impl("binary_cross_entropy_backward", TORCH_FN(composite_bce_backward));
  m.impl("binary_cross_entropy_backward.grad_input", TORCH_FN(composite_bce_backward_out));
  m.impl("native_group_norm_backward", TORCH_FN(composite_group_norm_backward));
  m.impl("multi_margin_loss", TORCH_FN(composite_multi_margin));
  m.impl("multi_margin_loss.out", TORCH_FN(composite_multi_margin_out));
  m.impl("multi_margin_loss_backward", TORCH_FN(composite_multi_margin_backward));
  m.impl("multi_margin_loss_backward.grad_input", TORCH_FN(composite_multi_margin_backward_out));
  m.impl("multilabel_margin_loss_forward", TORCH_FN(composite_multilabel_margin));
  m.impl("multilabel_margin_loss_forward.output", TORCH_FN(composite_multilabel_margin_out));
  m.impl("multilabel_margin_loss_backward", TORCH_FN(composite_multilabel_margin_backward));
  m.impl("multilabel_margin_loss_backward.grad_input",
         TORCH_FN(composite_multilabel_margin_backward_out));
  m.impl("glu", TORCH_FN(composite_glu));
  m.impl("glu.out", TORCH_FN(composite_glu_out));
  m.impl("glu_backward", TORCH_FN(composite_glu_backward));
  m.impl("glu_backward.grad_input", TORCH_FN(composite_glu_backward_out));
  m.impl("_prelu_kernel", TORCH_FN(composite_prelu));
  m.impl("_prelu_kernel_backward", TORCH_FN(composite_prelu_backward));
  m.impl("smooth_l1_loss", TORCH_FN(composite_smooth_l1));
  m.impl("smooth_l1_loss.out", TORCH_FN(composite_smooth_l1_out));
  m.impl("smooth_l1_loss_backward", TORCH_FN(composite_smooth_l1_backward));
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(composite_smooth_l1_backward_out));
  m.impl("huber_loss", TORCH_FN(composite_huber));
  m.impl("huber_loss.out", TORCH_FN(composite_huber_out));
  m.impl("huber_loss_backward", TORCH_FN(composite_huber_backward));
  m.impl("huber_loss_backward.out", TORCH_FN(composite_huber_backward_out));
}

}  // namespace torch_tessera
