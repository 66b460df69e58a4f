// upsample / upsample_backward (every mode of F.interpolate but antialias:
// nearest 1-D and 3-D, nearest-exact 1-3 D, linear 1-D, trilinear 3-D,
// bicubic 2-D) against a direct N-d reference: each output sums, over every
// combination of per-dim taps, the product of their weights times the
// input (the implementation instead resizes one dim at a time). Taps follow
// PyTorch's index arithmetic (UpSample.h) in float, double for float64.
// The named 2-D ops (upsample_nearest2d, upsample_bilinear2d) are in
// resample_cases.cc. Error cases last.
#include <algorithm>
#include <cmath>
#include <optional>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

using Mode = Interpolation;

bool interpolates(Mode mode) { return mode == Mode::kLinear || mode == Mode::kCubic; }

// dims: the output's spatial sizes; scalars: one scale per spatial dim (0:
// none); flag: align_corners (interpolating modes only).
std::vector<Sample> interpolate_samples(size_t rank, bool interp, DType t) {
  uint64_t seed = 901;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  const bool align = interp;
  std::vector<Sample> out;
  if (rank == 1) {
    out = {
        sample_of("[2, 3, 5] to 9", {in({2, 3, 5})}, {9}, {0.0}),
        sample_of("[1, 2, 7] to 3, align_corners", {in({1, 2, 7})}, {3}, {0.0}, align),
        sample_of("scale 1.7, [1, 2, 4] to 6", {in({1, 2, 4})}, {6}, {1.7}),
        sample_of("scale 0.6, [1, 2, 5] to 3", {in({1, 2, 5})}, {3}, {0.6}),
        sample_of("same size (copy)", {in({1, 2, 4})}, {4}, {0.0}),
        sample_of("to one, align_corners", {in({1, 2, 4})}, {1}, {0.0}, align),
        sample_of("transposed [2, 3, 6] to 11", {in({2, 6, 3}).transpose(1, 2)}, {11}, {0.0}),
        sample_of("zero batch", {in({0, 2, 3})}, {6}, {0.0}),
    };
  } else if (rank == 2) {
    out = {
        sample_of("[2, 3, 4, 5] to (8, 10)", {in({2, 3, 4, 5})}, {8, 10}, {0.0, 0.0}),
        sample_of("[1, 2, 5, 7] to (7, 3), align_corners", {in({1, 2, 5, 7})}, {7, 3}, {0.0, 0.0}, align),
        sample_of("scales 1.7, 2.5 to (6, 10)", {in({1, 1, 4, 4})}, {6, 10}, {1.7, 2.5}),
        sample_of("same size, scales 1.5, 0.8", {in({1, 2, 4, 4})}, {4, 4}, {1.5, 0.8}),
        sample_of("to one pixel, align_corners", {in({1, 2, 3, 4})}, {1, 1}, {0.0, 0.0}, align),
        sample_of("channels last [2, 3, 5, 4] to (9, 7)", {in({2, 5, 4, 3}).permute({0, 3, 1, 2})}, {9, 7}, {0.0, 0.0}),
        sample_of("zero batch", {in({0, 2, 3, 3})}, {6, 6}, {0.0, 0.0}),
    };
  } else {
    out = {
        sample_of("[1, 2, 3, 4, 5] to (5, 3, 7)", {in({1, 2, 3, 4, 5})}, {5, 3, 7}, {0.0, 0.0, 0.0}),
        sample_of("[2, 1, 4, 3, 2] to (2, 6, 5), align_corners", {in({2, 1, 4, 3, 2})}, {2, 6, 5}, {0.0, 0.0, 0.0}, align),
        sample_of("scales 1.5, 0.6, 2 to (3, 3, 6)", {in({1, 2, 2, 5, 3})}, {3, 3, 6}, {1.5, 0.6, 2.0}),
        sample_of("same size (copy)", {in({1, 1, 2, 3, 2})}, {2, 3, 2}, {0.0, 0.0, 0.0}),
        sample_of("channels last [1, 2, 4, 3, 5] to (6, 6, 4)", {in({1, 4, 3, 5, 2}).permute({0, 4, 1, 2, 3})}, {6, 6, 4}, {0.0, 0.0, 0.0}),
        sample_of("zero batch", {in({0, 2, 2, 2, 2})}, {3, 3, 3}, {0.0, 0.0, 0.0}),
    };
  }
  if (t == DType::kF32 && rank == 3) {
    out.push_back(sample_of("larger [2, 4, 8, 8, 8] to (16, 12, 16)", {in({2, 4, 8, 8, 8})}, {16, 12, 16}, {0.0, 0.0, 0.0}));
  }
  return out;
}

std::vector<std::optional<double>> scales_of(const Sample& s) {
  std::vector<std::optional<double>> scales;
  for (const Scalar& v : s.scalars) {
    const double d = v.to<double>();
    scales.push_back(d > 0 ? std::optional<double>(d) : std::nullopt);
  }
  return scales;
}

struct Tap {
  int64_t index;
  double weight;
};

// The Keys cubic convolution kernel with A = -0.75 at distance x.
double cubic_kernel(double x) {
  const double a = -0.75;
  x = std::abs(x);
  if (x <= 1) return (a + 2) * x * x * x - (a + 3) * x * x + 1;
  if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
  return 0;
}

// PyTorch's taps of output i along a dim resized from `in` to `out`, its
// coordinates computed in C (float, double for float64).
template <typename C>
std::vector<Tap> taps_ref(Mode mode, int64_t in, int64_t out, int64_t i, bool align,
                          std::optional<double> scale) {
  const bool given = scale && *scale > 0;
  if (mode == Mode::kNearest || mode == Mode::kNearestExact) {
    const float s = given ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
    int64_t src;
    if (mode == Mode::kNearestExact) src = static_cast<int64_t>(std::floor(static_cast<float>((i + 0.5) * s)));
    else if (in == out) src = i;
    else if (out == 2 * in) src = i / 2;
    else src = static_cast<int64_t>(std::floor(static_cast<float>(i) * s));
    return {{std::min(src, in - 1), 1.0}};
  }
  if (mode == Mode::kLinear && in == out) return {{i, 1.0}};
  const C ratio = align ? (out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0))
                        : given ? static_cast<C>(1.0 / *scale) : static_cast<C>(in) / static_cast<C>(out);
  C real = align ? ratio * static_cast<C>(i) : ratio * (static_cast<C>(i) + C(0.5)) - C(0.5);
  if (mode == Mode::kLinear && real < 0) real = 0;
  const int64_t below = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
  const double t = std::clamp(static_cast<double>(real - static_cast<C>(below)), 0.0, 1.0);
  if (mode == Mode::kLinear) return {{below, 1 - t}, {std::min(below + 1, in - 1), t}};
  std::vector<Tap> taps;
  for (int64_t k = -1; k <= 2; ++k) {
    taps.push_back({std::clamp<int64_t>(below + k, 0, in - 1), cubic_kernel(t - static_cast<double>(k))});
  }
  return taps;
}

// Forward values (grad == nullptr) or the input gradient for *grad.
Expected interpolate_reference(const Sample& s, Mode mode, const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const Nd input(x);
  const size_t rank = s.dims.size();
  const auto scales = scales_of(s);
  Shape out_shape = {x.size(0), x.size(1)};
  for (int64_t o : s.dims) out_shape.push_back(o);
  // PyTorch's bicubic backward copies the gradient when no size changes.
  bool same_size = true;
  for (size_t d = 0; d < rank; ++d) same_size = same_size && x.size(2 + d) == s.dims[d];
  if (grad && mode == Mode::kCubic && same_size) return Expected{x.sizes(), x.dtype(), *grad};

  std::vector<std::vector<std::vector<Tap>>> taps(rank);  // [dim][output index]
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t i = 0; i < s.dims[d]; ++i) {
      const int64_t in = x.size(2 + d);
      taps[d].push_back(x.dtype() == DType::kF64
                            ? taps_ref<double>(mode, in, s.dims[d], i, s.flag, scales[d])
                            : taps_ref<float>(mode, in, s.dims[d], i, s.flag, scales[d]));
    }
  }
  Expected out{out_shape, x.dtype(), {}};
  std::vector<double> gin(input.v.size(), 0.0);
  for_each_coord(out_shape, [&](const Shape& o) {
    const double g = grad ? (*grad)[out.values.size()] : 0.0;
    double value = 0;
    // Every combination of one tap per dim (an odometer over the taps).
    std::vector<size_t> pick(rank, 0);
    while (true) {
      Shape at = {o[0], o[1]};
      double w = 1;
      for (size_t d = 0; d < rank; ++d) {
        const Tap& tap = taps[d][static_cast<size_t>(o[2 + d])][pick[d]];
        at.push_back(tap.index);
        w *= tap.weight;
      }
      value += w * input.at(at);
      if (grad) gin[static_cast<size_t>(input.offset(at))] += w * g;
      size_t d = rank;
      while (d > 0 && ++pick[d - 1] == taps[d - 1][static_cast<size_t>(o[1 + d])].size()) pick[--d] = 0;
      if (d == 0) break;
    }
    out.values.push_back(round_to_dtype(value, x.dtype()));
  });
  if (!grad) return out;
  for (double& g : gin) g = round_to_dtype(g, x.dtype());
  return Expected{x.sizes(), x.dtype(), gin};
}

Tolerance interpolate_tolerance(DType t, const Sample&) {
  Tolerance d = default_tolerance(t);
  return Tolerance{d.rtol * 4, d.atol * 10};
}

OpCase interpolate_case(Mode mode, size_t rank, bool backward) {
  OpCase c;
  c.dtypes = backward || interpolates(mode) ? floating_dtypes() : all_dtypes();
  c.samples = [mode, rank](DType t) { return interpolate_samples(rank, interpolates(mode), t); };
  c.run = [mode, backward](const std::vector<Tensor>& in, const Sample& s) {
    const Tensor y = upsample(in[0], s.dims, mode, s.flag, scales_of(s));
    if (!backward) return std::vector<Tensor>{y};
    // grad_output = the forward's values: deterministic and varied.
    return std::vector<Tensor>{upsample_backward(y, s.dims, in[0].sizes(), mode, s.flag, scales_of(s))};
  };
  c.reference = [mode, backward](const Sample& s) {
    const Expected y = interpolate_reference(s, mode, nullptr);
    return std::vector<Expected>{backward ? interpolate_reference(s, mode, &y.values) : y};
  };
  c.tolerance = interpolate_tolerance;
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("upsample_nearest1d") { return interpolate_case(Mode::kNearest, 1, false); }
TESSERA_CONFORMANCE_OP("upsample_nearest1d_backward") { return interpolate_case(Mode::kNearest, 1, true); }
TESSERA_CONFORMANCE_OP("upsample_nearest3d") { return interpolate_case(Mode::kNearest, 3, false); }
TESSERA_CONFORMANCE_OP("upsample_nearest3d_backward") { return interpolate_case(Mode::kNearest, 3, true); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact1d") { return interpolate_case(Mode::kNearestExact, 1, false); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact1d_backward") { return interpolate_case(Mode::kNearestExact, 1, true); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact2d") { return interpolate_case(Mode::kNearestExact, 2, false); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact2d_backward") { return interpolate_case(Mode::kNearestExact, 2, true); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact3d") { return interpolate_case(Mode::kNearestExact, 3, false); }
TESSERA_CONFORMANCE_OP("_upsample_nearest_exact3d_backward") { return interpolate_case(Mode::kNearestExact, 3, true); }
TESSERA_CONFORMANCE_OP("upsample_linear1d") { return interpolate_case(Mode::kLinear, 1, false); }
TESSERA_CONFORMANCE_OP("upsample_linear1d_backward") { return interpolate_case(Mode::kLinear, 1, true); }
TESSERA_CONFORMANCE_OP("upsample_trilinear3d") { return interpolate_case(Mode::kLinear, 3, false); }
TESSERA_CONFORMANCE_OP("upsample_trilinear3d_backward") { return interpolate_case(Mode::kLinear, 3, true); }
TESSERA_CONFORMANCE_OP("upsample_bicubic2d") { return interpolate_case(Mode::kCubic, 2, false); }
TESSERA_CONFORMANCE_OP("upsample_bicubic2d_backward") { return interpolate_case(Mode::kCubic, 2, true); }

TESSERA_CONFORMANCE_ERRORS("upsample") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  return std::vector<ErrorCase>{
      {"trilinear of a 4-D input", [f32](Device d) { upsample(f32(d, {1, 1, 2, 2}), {4, 4, 4}, Mode::kLinear); },
       ErrorKind::kValue, {"upsample_trilinear3d", "5-D", "(N, C, D, H, W)"}},
      {"output_size of 4 elements", [f32](Device d) { upsample(f32(d, {1, 1, 2, 2, 2, 2}), {4, 4, 4, 4}, Mode::kNearest); },
       ErrorKind::kValue, {"upsample", "1, 2 or 3 elements"}},
      {"a size of 0", [f32](Device d) { upsample(f32(d, {1, 1, 2, 2, 2}), {2, 0, 2}, Mode::kNearest); },
       ErrorKind::kValue, {"upsample_nearest3d", "greater than 0", "(D: 2, H: 0, W: 2)"}},
      {"two scales for one dim",
       [f32](Device d) { upsample(f32(d, {1, 1, 4}), {8}, Mode::kLinear, false, {2.0, 2.0}); },
       ErrorKind::kValue, {"upsample_linear1d", "expected 1 scale", "got 2"}},
      {"align_corners with nearest-exact",
       [f32](Device d) { upsample(f32(d, {1, 1, 4, 4}), {8, 8}, Mode::kNearestExact, true); },
       ErrorKind::kValue, {"_upsample_nearest_exact2d", "align_corners"}},
      {"bicubic of integers",
       [](Device d) { upsample(ones({1, 1, 2, 2}, TensorOptions(DType::kI32, d)), {4, 4}, Mode::kCubic); },
       ErrorKind::kType, {"upsample_bicubic2d", "floating", "int32"}},
      {"output size overflowing the element count",
       [f32](Device d) { upsample(f32(d, {4, 1, 2}), {int64_t{1} << 62}, Mode::kNearest); },
       ErrorKind::kValue, {"upsample_nearest1d", "overflow"}},
      {"backward with grad_output of another shape",
       [f32](Device d) { upsample_backward(f32(d, {1, 1, 5}), {4}, {1, 1, 3}, Mode::kLinear); },
       ErrorKind::kValue, {"upsample_linear1d_backward", "grad_output", "[1, 1, 4]"}},
      {"backward input_size of the wrong rank",
       [f32](Device d) { upsample_backward(f32(d, {1, 1, 4, 4}), {4, 4}, {1, 4, 4}, Mode::kCubic); },
       ErrorKind::kValue, {"upsample_bicubic2d_backward", "4-D"}},
      {"backward of integers",
       [](Device d) { upsample_backward(ones({1, 1, 4}, TensorOptions(DType::kI64, d)), {4}, {1, 1, 2}, Mode::kNearest); },
       ErrorKind::kType, {"upsample_nearest1d_backward", "floating"}},
  };
}

}  // namespace tessera::conformance
