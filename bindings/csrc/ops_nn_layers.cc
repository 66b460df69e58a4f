// tessera.nn.functional: linear and bilinear, embedding and one_hot,
// scaled_dot_product_attention, dropout (element- and channel-wise, alpha),
// resampling (interpolate, pad, unfold / fold, pixel and channel shuffles).
// Composed here from the runtime's ops where the runtime has no single op
// (bilinear, the non-constant pad modes, the shuffles, channel dropout).
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings/csrc/linalg_composites.h"
#include "bindings/csrc/nn_args.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Generator;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;

// -- Linear layers and embeddings -------------------------------------------

// y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]: one product of x1 by
// W laid out as [in1, out * in2], then a sum against x2 over j.
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor* bias) {
  const char* op = "bilinear";
  TESSERA_CHECK(weight.dim() == 3, ValueError, op, ": expected a 3-D weight, got ",
                tessera::describe(weight));
  TESSERA_CHECK(x1.dim() >= 1 && x2.dim() == x1.dim(), ValueError, op,
                ": expected inputs with the same number of dims, got ", tessera::describe(x1),
                " and ", tessera::describe(x2));
  const Shape lead(x1.sizes().begin(), x1.sizes().end() - 1);
  TESSERA_CHECK(Shape(x2.sizes().begin(), x2.sizes().end() - 1) == lead &&
                    x1.size(-1) == weight.size(1) && x2.size(-1) == weight.size(2),
                ValueError, op, ": input1 ", tessera::shape_to_string(x1.sizes()), " and input2 ",
                tessera::shape_to_string(x2.sizes()),
                " must share their leading sizes and match weight ",
                tessera::shape_to_string(weight.sizes()), " in their last dims");
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  const Tensor w = weight.permute({1, 0, 2}).reshape({in1, out * in2});
  Shape split = lead;
  split.insert(split.end(), {out, in2});
  Tensor y = tessera::sum(tessera::mul(tessera::matmul(x1, w).reshape(split), x2.unsqueeze(-2)),
                          {-1});
  return bias != nullptr ? tessera::add(y, *bias) : y;
}

// The rows of weight that input refers to, scaled in place to a norm_type
// norm of at most max_norm (torch.embedding_renorm_).
void renorm_rows(Tensor weight, const Tensor& input, double max_norm, double norm_type) {
  const int64_t rows = weight.size(0);
  Tensor referenced = tessera::scatter(
      tessera::zeros({rows}, TensorOptions(DType::kBool, weight.device())), 0,
      input.reshape({-1}).to(DType::kI64), Scalar(true));
  const Tensor norms = vector_norm(weight, norm_type, {1}, /*keepdim=*/true);
  const Tensor scale = tessera::mul(tessera::reciprocal(tessera::add(norms, 1e-7)), max_norm);
  const Tensor shrink = tessera::logical_and(referenced.unsqueeze(1), tessera::gt(norms, max_norm));
  weight.mul_(tessera::where(shrink, scale, Scalar(1.0)));
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type) {
  const char* op = "embedding";
  TESSERA_CHECK(weight.dim() == 2, ValueError, op, ": weight must be 2-D, got ",
                tessera::describe(weight));
  if (padding_idx) {
    TESSERA_CHECK(*padding_idx >= -weight.size(0) && *padding_idx < weight.size(0), ValueError,
                  op, ": padding_idx ", *padding_idx, " must be within num_embeddings (",
                  weight.size(0), ")");
  }
  if (max_norm) renorm_rows(weight, input, *max_norm, norm_type);
  // padding_idx only keeps that row's gradient 0: the forward reads it too.
  return tessera::embedding(weight, input, -1);
}

// torch.nn.functional.embedding_bag: the runtime's embedding_bag (its
// output; the other results serve autograd, which the module has none of).
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor* offsets,
                     std::optional<double> max_norm, double norm_type, const std::string& mode,
                     const Tensor* per_sample_weights, bool include_last_offset,
                     std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  tessera::EmbeddingBagMode bag_mode = tessera::EmbeddingBagMode::kMean;
  if (mode == "sum") {
    bag_mode = tessera::EmbeddingBagMode::kSum;
  } else if (mode == "max") {
    bag_mode = tessera::EmbeddingBagMode::kMax;
  } else {
    TESSERA_CHECK(mode == "mean", ValueError, op, ": mode must be 'sum', 'mean' or 'max', got '",
                  mode, "'");
  }
  if (max_norm) renorm_rows(weight, input, *max_norm, norm_type);
  return tessera::embedding_bag(weight, input, optional_tensor(offsets), bag_mode,
                                optional_tensor(per_sample_weights), include_last_offset,
                                padding_idx)
      .output;
}

// -- Attention ----------------------------------------------------------------

// Grouped-query attention: each of key's heads serves query.size(-3) /
// key.size(-3) query heads in a row (repeat_interleave on the head dim).
Tensor repeat_heads(const Tensor& t, int64_t heads, const char* name) {
  const char* op = "scaled_dot_product_attention";
  TESSERA_CHECK(t.dim() >= 3, ValueError, op, ": enable_gqa needs a head dim (3 or more dims) in ",
                name, ", got ", tessera::describe(t));
  const int64_t have = t.size(-3);
  if (have == heads) return t;
  TESSERA_CHECK(have > 0 && heads % have == 0, ValueError, op, ": query's ", heads,
                " heads are not a multiple of ", name, "'s ", have);
  Tensor index = tessera::empty({heads}, TensorOptions(DType::kI64, tessera::host_device()));
  for (int64_t h = 0; h < heads; ++h) index.data<int64_t>()[h] = h / (heads / have);
  return tessera::index_select(t, t.dim() - 3, index.to(t.device()));
}

Tensor attention(const Tensor& query, const Tensor& key, const Tensor& value,
                 const Tensor* attn_mask, double dropout_p, bool is_causal,
                 std::optional<double> scale, bool enable_gqa) {
  if (!enable_gqa || query.dim() < 3) {
    return tessera::scaled_dot_product_attention(query, key, value, optional_tensor(attn_mask),
                                                 dropout_p, is_causal, scale);
  }
  const int64_t heads = query.size(-3);
  return tessera::scaled_dot_product_attention(query, repeat_heads(key, heads, "key"),
                                               repeat_heads(value, heads, "value"),
                                               optional_tensor(attn_mask), dropout_p, is_causal,
                                               scale);
}

// -- Dropout ------------------------------------------------------------------

void check_probability(const char* op, double p) {
  TESSERA_CHECK(p >= 0 && p <= 1, ValueError, op,
                ": dropout probability has to be between 0 and 1, but got ", p);
}

// Whole channels zeroed: one keep / (1 - p) factor per (sample, channel),
// broadcast over the spatial dims. A batched input has rank + 2 dims, an
// unbatched one rank + 1 (dropout2d reads a 3-D input as [N, C, L], as
// PyTorch does).
Tensor feature_dropout(const char* op, const Tensor& input, double p, bool training,
                       Generator* gen, int64_t rank) {
  check_probability(op, p);
  const bool batched = input.dim() == rank + 2 || (rank == 2 && input.dim() == 3);
  TESSERA_CHECK(batched || input.dim() == rank + 1, ValueError, op, ": expected ", rank + 1,
                "-D or ", rank + 2, "-D input, got ", tessera::describe(input));
  TESSERA_CHECK(tessera::is_floating(input.dtype()), TypeError, op,
                ": expected a floating input, got ", tessera::describe(input));
  if (!training || p == 0) return input;
  if (p == 1) return tessera::mul(input, 0);
  Shape noise_shape(static_cast<size_t>(input.dim()), 1);
  const int64_t channel_dims = batched ? 2 : 1;
  for (int64_t d = 0; d < channel_dims; ++d) noise_shape[d] = input.size(d);
  const Tensor keep = tessera::bernoulli(
      tessera::empty(noise_shape, TensorOptions(input.dtype(), input.device())), 1.0 - p, gen);
  return tessera::mul(input, tessera::div(keep, 1.0 - p));
}

// SELU's dropout: dropped elements take SELU's negative saturation value,
// then an affine map keeps the mean and variance (PyTorch's constants).
Tensor alpha_dropout(const Tensor& input, double p, bool training, Generator* gen) {
  check_probability("alpha_dropout", p);
  TESSERA_CHECK(tessera::is_floating(input.dtype()), TypeError,
                "alpha_dropout: expected a floating input, got ", tessera::describe(input));
  if (!training || p == 0) return input;
  if (p == 1) return tessera::mul(input, 0);
  constexpr double kAlpha = 1.7580993408473766;  // SELU's scale * alpha
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  const Tensor keep = tessera::bernoulli(input, 1.0 - p, gen);
  // keep * a * x + (keep - 1) * alpha * a + alpha * a * p
  const Tensor b = tessera::add(tessera::mul(tessera::sub(keep, 1), kAlpha * a), kAlpha * a * p);
  return tessera::add(tessera::mul(input, tessera::mul(keep, a)), b);
}

// -- Resampling ---------------------------------------------------------------

using ScaleFactor = std::variant<double, std::vector<double>>;

Tensor interpolate(const Tensor& input, const std::optional<Shape>& size,
                   const std::optional<ScaleFactor>& scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                   bool antialias) {
  const char* op = "interpolate";
  const int64_t rank = input.dim() - 2;
  TESSERA_CHECK(rank >= 1 && rank <= 3, ValueError, op,
                ": expected 3-D, 4-D or 5-D input [N, C, spatial...], got ",
                tessera::describe(input));
  using tessera::Interpolation;
  Interpolation kind = Interpolation::kNearest;
  int64_t needs_rank = 0;  // 0: any
  if (mode == "nearest") {
    kind = Interpolation::kNearest;
  } else if (mode == "nearest-exact") {
    kind = Interpolation::kNearestExact;
  } else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") {
    kind = Interpolation::kLinear;
    needs_rank = mode == "linear" ? 1 : mode == "bilinear" ? 2 : 3;
  } else if (mode == "bicubic") {
    kind = Interpolation::kCubic;
    needs_rank = 2;
  } else {
    TESSERA_CHECK(mode == "area", ValueError, op, ": unknown mode '", mode,
                  "' (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)");
  }
  TESSERA_CHECK(needs_rank == 0 || needs_rank == rank, ValueError, op, ": mode '", mode,
                "' needs ", needs_rank + 2, "-D input, got ", tessera::describe(input));
  const bool interpolating = kind == Interpolation::kLinear || kind == Interpolation::kCubic;
  TESSERA_CHECK(interpolating || !align_corners, ValueError, op,
                ": align_corners can only be set with the interpolating modes (linear, "
                "bilinear, bicubic, trilinear), got mode '", mode, "'");
  TESSERA_CHECK(!antialias || mode == "bilinear" || mode == "bicubic", ValueError, op,
                ": antialias is restricted to the bilinear and bicubic modes");
  TESSERA_CHECK(!antialias, NotImplementedError, op,
                ": antialias=True is not implemented by the runtime");
  TESSERA_CHECK(size.has_value() != scale_factor.has_value(), ValueError, op,
                size ? ": only one of size or scale_factor should be defined"
                     : ": either size or scale_factor should be defined");
  TESSERA_CHECK(!(size && recompute_scale_factor.has_value()), ValueError, op,
                ": recompute_scale_factor is not meaningful with an explicit size");

  const size_t n = static_cast<size_t>(rank);
  Shape output_size;
  std::vector<std::optional<double>> scales;
  if (size) {
    output_size = spatial_arg(*size, n, op, "size");
  } else {
    std::vector<double> factors;
    if (const double* s = std::get_if<double>(&*scale_factor)) {
      factors.assign(n, *s);
    } else {
      factors = std::get<std::vector<double>>(*scale_factor);
      TESSERA_CHECK(factors.size() == n, ValueError, op, ": scale_factor must be a number or ",
                    n, " numbers, got ", factors.size());
    }
    for (size_t d = 0; d < n; ++d) {
      const double in = static_cast<double>(input.size(static_cast<int64_t>(2 + d)));
      output_size.push_back(static_cast<int64_t>(std::floor(in * factors[d])));
      // The kernels take the given factors unless asked to recompute them
      // from the sizes.
      if (!recompute_scale_factor.value_or(false)) scales.push_back(factors[d]);
    }
  }
  if (mode == "area") {
    if (rank == 1) {
      return tessera::adaptive_avg_pool2d(input.unsqueeze(-2), {1, output_size[0]}).squeeze(-2);
    }
    return rank == 2 ? tessera::adaptive_avg_pool2d(input, output_size)
                     : tessera::adaptive_avg_pool3d(input, output_size);
  }
  return tessera::upsample(input, output_size, kind, align_corners.value_or(false), scales);
}

// Indices into a dim of `size` for pad's reflect / replicate / circular
// modes: position i of the padded dim (from -before) reads source index[i].
Tensor pad_index(const std::string& mode, int64_t size, int64_t before, int64_t after,
                 tessera::Device device) {
  const char* op = "pad";
  TESSERA_CHECK(before >= 0 && after >= 0, ValueError, op, ": mode '", mode,
                "' takes non-negative padding, got (", before, ", ", after, ")");
  if (mode == "reflect") {
    TESSERA_CHECK(before < size && after < size, ValueError, op, ": padding (", before, ", ",
                  after, ") should be less than the size ", size, " of the padded dim");
  } else if (mode == "circular") {
    TESSERA_CHECK(before <= size && after <= size, ValueError, op, ": padding (", before, ", ",
                  after, ") should be at most the size ", size, " of the padded dim");
  } else {
    TESSERA_CHECK(size > 0, ValueError, op, ": mode 'replicate' cannot pad an empty dim");
  }
  const int64_t n = size + before + after;
  Tensor index = tessera::empty({n}, TensorOptions(DType::kI64, tessera::host_device()));
  int64_t* out = index.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = k - before;
    if (mode == "reflect") {
      out[k] = i < 0 ? -i : i >= size ? 2 * (size - 1) - i : i;
    } else if (mode == "replicate") {
      out[k] = i < 0 ? 0 : i >= size ? size - 1 : i;
    } else {
      out[k] = ((i % size) + size) % size;
    }
  }
  return index.to(device);
}

Tensor pad(const Tensor& input, const Shape& pad, const std::string& mode,
           std::optional<Scalar> value) {
  const char* op = "pad";
  TESSERA_CHECK(pad.size() % 2 == 0, ValueError, op,
                ": padding length must be divisible by 2, got ", tessera::shape_to_string(pad));
  const int64_t pairs = static_cast<int64_t>(pad.size() / 2);
  TESSERA_CHECK(pairs <= input.dim(), ValueError, op, ": padding length too large: ",
                tessera::shape_to_string(pad), " for ", tessera::describe(input));
  if (mode == "constant") return tessera::constant_pad(input, pad, value.value_or(Scalar(0)));
  TESSERA_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", ValueError, op,
                ": unknown mode '", mode, "' (constant, reflect, replicate, circular)");
  TESSERA_CHECK(!value || value->to<double>() == 0, ValueError, op, ": mode '", mode,
                "' doesn't take a value argument");
  TESSERA_CHECK(pairs <= 3 && (input.dim() == pairs + 1 || input.dim() == pairs + 2), ValueError,
                op, ": mode '", mode, "' pads the last 1 to 3 dims of an input with 1 or 2 more "
                "(batch and channel); got padding ", tessera::shape_to_string(pad), " for ",
                tessera::describe(input));
  Tensor x = input;
  for (int64_t j = 0; j < pairs; ++j) {
    const int64_t dim = input.dim() - 1 - j;
    x = tessera::index_select(x, dim, pad_index(mode, x.size(dim), pad[2 * j], pad[2 * j + 1],
                                                input.device()));
  }
  return x;
}

// [*, C * r^2, H, W] -> [*, C, H * r, W * r] and back.
Tensor pixel_shuffle(const Tensor& input, int64_t r, bool inverse) {
  const char* op = inverse ? "pixel_unshuffle" : "pixel_shuffle";
  TESSERA_CHECK(input.dim() >= 3, ValueError, op, ": expected at least 3 dims, got ",
                tessera::describe(input));
  TESSERA_CHECK(r > 0, ValueError, op, ": the factor must be positive, got ", r);
  const int64_t b = input.dim() - 3;
  const int64_t c = input.size(-3), h = input.size(-2), w = input.size(-1);
  Shape batch(input.sizes().begin(), input.sizes().begin() + b);
  auto with_batch = [&](std::initializer_list<int64_t> rest) {
    Shape s = batch;
    s.insert(s.end(), rest);
    return s;
  };
  auto perm = [&](std::initializer_list<int64_t> rest) {
    Shape p;
    for (int64_t d = 0; d < b; ++d) p.push_back(d);
    for (int64_t d : rest) p.push_back(b + d);
    return p;
  };
  if (!inverse) {
    TESSERA_CHECK(c % (r * r) == 0, ValueError, op, ": pixel_shuffle expects its input's "
                  "channels (", c, ") to be divisible by the square of upscale_factor (", r, ")");
    const int64_t oc = c / (r * r);
    return input.reshape(with_batch({oc, r, r, h, w}))
        .permute(perm({0, 3, 1, 4, 2}))
        .reshape(with_batch({oc, h * r, w * r}));
  }
  TESSERA_CHECK(h % r == 0 && w % r == 0, ValueError, op, ": pixel_unshuffle expects height (",
                h, ") and width (", w, ") to be divisible by downscale_factor (", r, ")");
  return input.reshape(with_batch({c, h / r, r, w / r, r}))
      .permute(perm({0, 2, 4, 1, 3}))
      .reshape(with_batch({c * r * r, h / r, w / r}));
}

Tensor channel_shuffle(const Tensor& input, int64_t groups) {
  const char* op = "channel_shuffle";
  TESSERA_CHECK(input.dim() >= 3, ValueError, op, ": expected at least 3 dims, got ",
                tessera::describe(input));
  TESSERA_CHECK(groups > 0 && input.size(1) % groups == 0, ValueError, op,
                ": number of channels (", input.size(1), ") must be divisible by groups (",
                groups, ")");
  Shape split = input.sizes();
  split[1] = input.size(1) / groups;
  split.insert(split.begin() + 1, groups);
  return input.reshape(split).transpose(1, 2).reshape(input.sizes());
}

}  // namespace

void register_nn_layers(py::module_& f) {
  f.def("linear", [](const Tensor& input, const Tensor& weight, const Tensor* bias) {
    return tessera::linear(input, weight, optional_tensor(bias));
  }, "input"_a, "weight"_a, "bias"_a = py::none(), ReleaseGil(),
     "input [..., in] @ weight [out, in]^T + bias [out].");
  f.def("bilinear", &bilinear, "input1"_a, "input2"_a, "weight"_a, "bias"_a = py::none(),
        ReleaseGil(), "input1 [..., in1] W [out, in1, in2] input2 [..., in2] + bias [out].");
  f.def("embedding", [](const Tensor& input, const Tensor& weight,
                        std::optional<int64_t> padding_idx, std::optional<double> max_norm,
                        double norm_type, bool, bool) {
    return embedding(input, weight, padding_idx, max_norm, norm_type);
  }, "input"_a, "weight"_a, "padding_idx"_a = py::none(), "max_norm"_a = py::none(),
     "norm_type"_a = 2.0, "scale_grad_by_freq"_a = false, "sparse"_a = false, ReleaseGil(),
     "The rows of weight [V, D] at input's indices -> [..., D]. max_norm first rescales, in "
     "place, the referenced rows whose norm exceeds it; scale_grad_by_freq and sparse only "
     "concern gradients.");
  f.def("embedding_bag", [](const Tensor& input, const Tensor& weight, const Tensor* offsets,
                            std::optional<double> max_norm, double norm_type, bool,
                            const std::string& mode, bool, const Tensor* per_sample_weights,
                            bool include_last_offset, std::optional<int64_t> padding_idx) {
    return embedding_bag(input, weight, offsets, max_norm, norm_type, mode, per_sample_weights,
                         include_last_offset, padding_idx);
  }, "input"_a, "weight"_a, "offsets"_a = py::none(), "max_norm"_a = py::none(),
     "norm_type"_a = 2.0, "scale_grad_by_freq"_a = false, "mode"_a = "mean", "sparse"_a = false,
     "per_sample_weights"_a = py::none(), "include_last_offset"_a = false,
     "padding_idx"_a = py::none(), ReleaseGil(),
     "Sums, means or maxima of bags of weight's rows [V, D] -> [bags, D]. input is 1-D with "
     "offsets (bag b is input[offsets[b]:offsets[b + 1]]) or 2-D (a bag per row); indices "
     "equal to padding_idx are left out; empty bags give zeros. per_sample_weights (mode "
     "'sum') scale each row.");
  f.def("one_hot", &tessera::one_hot, "tensor"_a, "num_classes"_a = -1, ReleaseGil(),
        "int64 one-hot encoding; num_classes=-1 takes max(tensor) + 1.");
  f.def("scaled_dot_product_attention", &attention, "query"_a, "key"_a, "value"_a,
        "attn_mask"_a = py::none(), "dropout_p"_a = 0.0, "is_causal"_a = false,
        "scale"_a = py::none(), "enable_gqa"_a = false, ReleaseGil(),
        "softmax(query key^T * scale + mask) value; a bool attn_mask is true where to attend.");

  f.def("dropout", [](Tensor& input, double p, bool training, bool inplace, Generator* gen) {
    return result_or_copy_into(input, inplace, [&] {
      return tessera::dropout(input, p, training, gen);
    });
  }, "input"_a, "p"_a = 0.5, "training"_a = true, "inplace"_a = false, py::kw_only(),
     "generator"_a = py::none(), "Zeroes each element with probability p and scales the rest "
     "by 1 / (1 - p) when training.");
  const char* const feature_names[] = {"dropout1d", "dropout2d", "dropout3d"};
  for (int64_t rank = 1; rank <= 3; ++rank) {
    const char* name = feature_names[rank - 1];
    f.def(name, [name, rank](Tensor& input, double p, bool training, bool inplace,
                             Generator* gen) {
      return result_or_copy_into(input, inplace, [&] {
        return feature_dropout(name, input, p, training, gen, rank);
      });
    }, "input"_a, "p"_a = 0.5, "training"_a = true, "inplace"_a = false, py::kw_only(),
       "generator"_a = py::none(), "Zeroes whole channels with probability p.");
  }
  f.def("alpha_dropout", [](Tensor& input, double p, bool training, bool inplace,
                            Generator* gen) {
    return result_or_copy_into(input, inplace, [&] {
      return alpha_dropout(input, p, training, gen);
    });
  }, "input"_a, "p"_a = 0.5, "training"_a = false, "inplace"_a = false, py::kw_only(),
     "generator"_a = py::none(), "Dropout that keeps SELU's mean and variance.");

  f.def("interpolate", &interpolate, "input"_a, "size"_a = py::none(),
        "scale_factor"_a = py::none(), "mode"_a = "nearest", "align_corners"_a = py::none(),
        "recompute_scale_factor"_a = py::none(), "antialias"_a = false, ReleaseGil(),
        "Resizes [N, C, spatial...] to size, or by scale_factor (output = floor(in * scale)); "
        "modes nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area.");
  f.def("upsample", [](const Tensor& input, const std::optional<Shape>& size,
                       const std::optional<ScaleFactor>& scale_factor, const std::string& mode,
                       std::optional<bool> align_corners) {
    return interpolate(input, size, scale_factor, mode, align_corners, std::nullopt, false);
  }, "input"_a, "size"_a = py::none(), "scale_factor"_a = py::none(), "mode"_a = "nearest",
     "align_corners"_a = py::none(), ReleaseGil(), "interpolate (the older name).");
  f.def("upsample_nearest", [](const Tensor& input, const std::optional<Shape>& size,
                               const std::optional<ScaleFactor>& scale_factor) {
    return interpolate(input, size, scale_factor, "nearest", std::nullopt, std::nullopt, false);
  }, "input"_a, "size"_a = py::none(), "scale_factor"_a = py::none(), ReleaseGil());
  f.def("upsample_bilinear", [](const Tensor& input, const std::optional<Shape>& size,
                                const std::optional<ScaleFactor>& scale_factor) {
    return interpolate(input, size, scale_factor, "bilinear", true, std::nullopt, false);
  }, "input"_a, "size"_a = py::none(), "scale_factor"_a = py::none(), ReleaseGil(),
     "interpolate(mode='bilinear', align_corners=True).");
  f.def("pad", &pad, "input"_a, "pad"_a, "mode"_a = "constant", "value"_a = py::none(),
        ReleaseGil(), "pad holds (before, after) pairs from the last dim; modes constant "
        "(negative amounts crop), reflect, replicate, circular.");
  f.def("unfold", [](const Tensor& input, const Shape& kernel_size, const Shape& dilation,
                     const Shape& padding, const Shape& stride) {
    return tessera::im2col(input, kernel_size, dilation, padding, stride);
  }, "input"_a, "kernel_size"_a, "dilation"_a = 1, "padding"_a = 0, "stride"_a = 1,
     ReleaseGil(), "The sliding blocks of [N, C, H, W] as columns [N, C * kh * kw, L].");
  f.def("fold", [](const Tensor& input, const Shape& output_size, const Shape& kernel_size,
                   const Shape& dilation, const Shape& padding, const Shape& stride) {
    return tessera::col2im(input, output_size, kernel_size, dilation, padding, stride);
  }, "input"_a, "output_size"_a, "kernel_size"_a, "dilation"_a = 1, "padding"_a = 0,
     "stride"_a = 1, ReleaseGil(), "unfold's adjoint: sums the columns back into [N, C, H, W].");
  f.def("pixel_shuffle", [](const Tensor& input, int64_t upscale_factor) {
    return pixel_shuffle(input, upscale_factor, false);
  }, "input"_a, "upscale_factor"_a, ReleaseGil(), "[*, C r^2, H, W] -> [*, C, H r, W r].");
  f.def("pixel_unshuffle", [](const Tensor& input, int64_t downscale_factor) {
    return pixel_shuffle(input, downscale_factor, true);
  }, "input"_a, "downscale_factor"_a, ReleaseGil(), "[*, C, H r, W r] -> [*, C r^2, H, W].");
  f.def("channel_shuffle", &channel_shuffle, "input"_a, "groups"_a, ReleaseGil());
}

}  // namespace tessera_py
