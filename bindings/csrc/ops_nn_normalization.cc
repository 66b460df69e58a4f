// tessera.nn.functional's normalizations: layer_norm, rms_norm and
// batch_norm over the runtime's ops; group_norm (a layer norm of each
// group), instance_norm (a batch norm of [1, N * C, ...], as PyTorch's),
// local_response_norm and normalize composed from them.
#include <algorithm>
#include <optional>

#include "bindings/csrc/linalg_composites.h"
#include "bindings/csrc/nn_args.h"
#include "bindings/csrc/results.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera_py {

namespace {

using tessera::Shape;
using tessera::Tensor;

// v [C] shaped to broadcast over dim 1 of an input with `dims` dims.
Tensor per_channel(const Tensor& v, int64_t dims) {
  Shape s(static_cast<size_t>(dims - 1), 1);
  s[0] = v.numel();
  return v.reshape(s);
}

void check_channel_param(const char* op, const char* name, const Tensor* t, int64_t channels) {
  if (t == nullptr) return;
  TESSERA_CHECK(t->dim() == 1 && t->size(0) == channels, ValueError, op, ": expected ", name,
                " of shape [", channels, "], got ", tessera::describe(*t));
}

// weight * x + bias per channel (dim 1), each when given.
Tensor affine(Tensor y, const Tensor* weight, const Tensor* bias) {
  if (weight != nullptr) y = tessera::mul(y, per_channel(*weight, y.dim()));
  if (bias != nullptr) y = tessera::add(y, per_channel(*bias, y.dim()));
  return y;
}

Tensor batch_norm(const Tensor& input, const Tensor* running_mean, const Tensor* running_var,
                  const Tensor* weight, const Tensor* bias, bool training, double momentum,
                  double eps) {
  if (training && input.dim() >= 2) {
    // PyTorch's check: a single value per channel has no variance.
    int64_t per_channel_values = input.size(0);
    for (int64_t d = 2; d < input.dim(); ++d) per_channel_values *= input.size(d);
    TESSERA_CHECK(per_channel_values != 1, ValueError,
                  "batch_norm: expected more than 1 value per channel when training, got input "
                  "of size ", tessera::shape_to_string(input.sizes()));
  }
  return std::get<0>(tessera::batch_norm(input, optional_tensor(weight), optional_tensor(bias),
                                         optional_tensor(running_mean),
                                         optional_tensor(running_var), training, momentum, eps));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor* weight,
                  const Tensor* bias, double eps) {
  const char* op = "group_norm";
  TESSERA_CHECK(input.dim() >= 2, ValueError, op,
                ": expected an input of at least 2 dims [N, C, ...], got ",
                tessera::describe(input));
  const int64_t n = input.size(0), c = input.size(1);
  TESSERA_CHECK(num_groups > 0 && c % num_groups == 0, ValueError, op,
                ": expected the number of channels of input ",
                tessera::shape_to_string(input.sizes()), " to be divisible by num_groups=",
                num_groups);
  check_channel_param(op, "weight", weight, c);
  check_channel_param(op, "bias", bias, c);
  const int64_t group_size = n * num_groups == 0 ? 0 : input.numel() / (n * num_groups);
  const Tensor grouped = input.reshape({n, num_groups, group_size});
  const Tensor y = tessera::layer_norm(grouped, {group_size}, {}, {}, eps).reshape(input.sizes());
  return affine(y, weight, bias);
}

// Each (sample, channel) normalized over its spatial values: a batch norm of
// [1, N * C, ...] with the running statistics repeated N times, whose
// updates are averaged back over N.
Tensor instance_norm(const Tensor& input, const Tensor* running_mean, const Tensor* running_var,
                     const Tensor* weight, const Tensor* bias, bool use_input_stats,
                     double momentum, double eps) {
  const char* op = "instance_norm";
  TESSERA_CHECK(input.dim() >= 3, ValueError, op,
                ": expected an input [N, C, spatial...] of at least 3 dims, got ",
                tessera::describe(input));
  const int64_t n = input.size(0), c = input.size(1);
  TESSERA_CHECK(!use_input_stats || input.numel() / std::max<int64_t>(n * c, 1) != 1, ValueError,
                op, ": expected more than 1 spatial element when training, got input of size ",
                tessera::shape_to_string(input.sizes()));
  check_channel_param(op, "weight", weight, c);
  check_channel_param(op, "bias", bias, c);
  check_channel_param(op, "running_mean", running_mean, c);
  check_channel_param(op, "running_var", running_var, c);
  Shape folded = input.sizes();
  folded.erase(folded.begin());
  folded[0] = n * c;
  folded.insert(folded.begin(), 1);
  auto repeated = [n](const Tensor* t) {
    return t != nullptr ? tessera::repeat(*t, {n}) : Tensor();
  };
  Tensor mean_n = repeated(running_mean), var_n = repeated(running_var);
  const Tensor y = std::get<0>(tessera::batch_norm(
      input.reshape(folded), repeated(weight), repeated(bias), mean_n, var_n, use_input_stats,
      momentum, eps));
  if (use_input_stats) {
    if (running_mean != nullptr) {
      Tensor(*running_mean).copy_(tessera::mean(mean_n.view({n, c}), {0}));
    }
    if (running_var != nullptr) {
      Tensor(*running_var).copy_(tessera::mean(var_n.view({n, c}), {0}));
    }
  }
  return y.reshape(input.sizes());
}

// x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta;
// the window average is an avg_pool2d over [N, 1, C, spatial] with the
// channel dim zero-padded, as PyTorch's.
Tensor local_response_norm(const Tensor& input, int64_t size, double alpha, double beta,
                           double k) {
  const char* op = "local_response_norm";
  TESSERA_CHECK(input.dim() >= 3, ValueError, op,
                ": expected 3-D or higher dimensional input, got ", tessera::describe(input));
  TESSERA_CHECK(size > 0, ValueError, op, ": size must be positive, got ", size);
  if (input.numel() == 0) return input;
  const int64_t n = input.size(0), c = input.size(1);
  const int64_t spatial = input.numel() / (n * c);
  Tensor sq = tessera::mul(input, input).reshape({n, 1, c, spatial});
  sq = tessera::constant_pad(sq, {0, 0, size / 2, (size - 1) / 2});
  Tensor div = tessera::avg_pool2d(sq, {size, 1}, {1, 1}).reshape(input.sizes());
  div = tessera::pow(tessera::add(tessera::mul(div, alpha), k), beta);
  return tessera::div(input, div);
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  const Tensor norm = vector_norm(input, p, {dim}, /*keepdim=*/true);
  return tessera::div(input, tessera::clamp_min(norm, eps).expand(input.sizes()));
}

}  // namespace

void register_nn_normalization(py::module_& f) {
  f.def("layer_norm", [](const Tensor& input, const Shape& normalized_shape, const Tensor* weight,
                         const Tensor* bias, double eps) {
    return tessera::layer_norm(input, normalized_shape, optional_tensor(weight),
                               optional_tensor(bias), eps);
  }, "input"_a, "normalized_shape"_a, "weight"_a = py::none(), "bias"_a = py::none(),
     "eps"_a = 1e-5, ReleaseGil(), "Normalizes over the last dims (normalized_shape).");
  f.def("rms_norm", [](const Tensor& input, const Shape& normalized_shape, const Tensor* weight,
                       std::optional<double> eps) {
    return tessera::rms_norm(input, normalized_shape, optional_tensor(weight), eps);
  }, "input"_a, "normalized_shape"_a, "weight"_a = py::none(), "eps"_a = py::none(),
     ReleaseGil(), "x / sqrt(mean(x^2) + eps) over the last dims; eps defaults to the dtype's "
     "machine epsilon.");
  f.def("batch_norm", &batch_norm, "input"_a, "running_mean"_a, "running_var"_a,
        "weight"_a = py::none(), "bias"_a = py::none(), "training"_a = false,
        "momentum"_a = 0.1, "eps"_a = 1e-5, ReleaseGil(),
        "Normalizes each channel (dim 1); training uses the batch's statistics and updates "
        "running_mean / running_var in place.");
  f.def("group_norm", &group_norm, "input"_a, "num_groups"_a, "weight"_a = py::none(),
        "bias"_a = py::none(), "eps"_a = 1e-5, ReleaseGil(),
        "Normalizes each group of channels of each sample.");
  f.def("instance_norm", &instance_norm, "input"_a, "running_mean"_a = py::none(),
        "running_var"_a = py::none(), "weight"_a = py::none(), "bias"_a = py::none(),
        "use_input_stats"_a = true, "momentum"_a = 0.1, "eps"_a = 1e-5, ReleaseGil(),
        "Normalizes each channel of each sample over its spatial dims.");
  f.def("local_response_norm", &local_response_norm, "input"_a, "size"_a, "alpha"_a = 1e-4,
        "beta"_a = 0.75, "k"_a = 1.0, ReleaseGil());
  f.def("normalize", [](const Tensor& input, double p, int64_t dim, double eps, Tensor* out) {
    return tensor_or_out(out, [&] {
      Tensor r = normalize(input, p, dim, eps);
      return out ? tessera::write_out("normalize", *out, r) : r;
    });
  }, "input"_a, "p"_a = 2.0, "dim"_a = 1, "eps"_a = 1e-12, "out"_a = py::none(),
     "x / max(||x||_p over dim, eps).");
}

}  // namespace tessera_py
