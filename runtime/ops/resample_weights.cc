#include "runtime/ops/resample_weights.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace tessera::resample {

namespace {

// ATen's compute_scales_value: 1 / scale when given and positive (a NaN or
// non-positive scale counts as none), else in / out.
template <typename C>
C scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<C>(1.0 / *scale)
                             : static_cast<C>(in) / static_cast<C>(out);
}

// ATen's area_pixel_compute_scale.
template <typename C>
C area_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
  return scales_value<C>(scale, in, out);
}

// ATen's area_pixel_compute_source_index: the source coordinate of output
// i, pixel centers mapped onto pixel centers. Linear clamps it at 0 (both
// of its sources are then 0); cubic keeps it, its weights depend on it.
template <typename C>
C source_coordinate(C scale, int64_t i, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<C>(i);
  const C src = scale * (static_cast<C>(i) + C(0.5)) - C(0.5);
  return !cubic && src < C(0) ? C(0) : src;
}

// ATen's guard_index_and_lambda: the source below `real` (floored in
// float, as ATen's floorf does for double too; kept below in) and the
// fraction past it, in [0, 1].
template <typename C>
std::pair<int64_t, C> floor_and_fraction(C real, int64_t in) {
  const int64_t index =
      std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
  return {index, std::min(std::max(real - static_cast<C>(index), C(0)), C(1))};
}

Groups nearest_taps(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  Groups groups(static_cast<size_t>(out));
  const float s = scales_value<float>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    int64_t source;
    if (exact) {
      // (i + 0.5) is a double in ATen, so the product is too; floorf then
      // rounds it to float.
      const double real = (static_cast<double>(i) + 0.5) * static_cast<double>(s);
      source = static_cast<int64_t>(std::floor(static_cast<float>(real)));
    } else if (out == in) {
      source = i;
    } else if (out - in == in) {
      source = i >> 1;
    } else {
      source = static_cast<int64_t>(std::floor(static_cast<float>(i) * s));
    }
    groups[static_cast<size_t>(i)] = {{std::min(source, in - 1)}};
  }
  return groups;
}

template <typename C>
Groups linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Groups groups(static_cast<size_t>(out));
  const C ratio = area_scale<C>(in, out, align_corners, scale);
  for (int64_t i = 0; i < out; ++i) {
    auto& group = groups[static_cast<size_t>(i)];
    if (out == in) {  // a copy (ATen's lambdas 1 and 0 on one source)
      group = {{i, 1.0}};
      continue;
    }
    const auto [i0, lambda1] =
        floor_and_fraction(source_coordinate(ratio, i, align_corners, false), in);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    group = {{i0, static_cast<double>(C(1) - lambda1)}, {i1, static_cast<double>(lambda1)}};
  }
  return groups;
}

// ATen's get_cubic_upsample_coefficients: the weights of the sources at
// offsets -1, 0, 1, 2 from the one below the coordinate, t past it. The
// arguments are formed in double and rounded to C, as ATen's
// `x + 1.0` and `1.0 - t` are.
template <typename C>
std::array<C, 4> cubic_weights(C t) {
  constexpr C A = C(-0.75);
  const auto near = [](C x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };  // |x| <= 1
  const auto far = [](C x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  const C t2 = static_cast<C>(1.0 - static_cast<double>(t));
  return {far(static_cast<C>(static_cast<double>(t) + 1.0)), near(t), near(t2),
          far(static_cast<C>(static_cast<double>(t2) + 1.0))};
}

template <typename C>
Groups cubic_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Groups groups(static_cast<size_t>(out));
  const C ratio = area_scale<C>(in, out, align_corners, scale);
  for (int64_t i = 0; i < out; ++i) {
    const auto [below, t] = floor_and_fraction(source_coordinate(ratio, i, align_corners, true), in);
    const std::array<C, 4> w = cubic_weights(t);
    auto& group = groups[static_cast<size_t>(i)];
    for (int64_t k = 0; k < 4; ++k) {
      // ATen's upsample_get_value_bounded: sources past a border read it.
      const int64_t source = std::clamp<int64_t>(below - 1 + k, 0, in - 1);
      group.push_back({source, static_cast<double>(w[static_cast<size_t>(k)])});
    }
  }
  return groups;
}

}  // namespace

Groups interpolation_taps(Interpolation mode, DType compute, int64_t in, int64_t out,
                          bool align_corners, std::optional<double> scale) {
  const bool f64 = compute == DType::kF64;
  switch (mode) {
    case Interpolation::kNearest:
      return nearest_taps(in, out, scale, false);
    case Interpolation::kNearestExact:
      return nearest_taps(in, out, scale, true);
    case Interpolation::kLinear:
      return f64 ? linear_taps<double>(in, out, align_corners, scale)
                 : linear_taps<float>(in, out, align_corners, scale);
    case Interpolation::kCubic:
      return f64 ? cubic_taps<double>(in, out, align_corners, scale)
                 : cubic_taps<float>(in, out, align_corners, scale);
  }
  return {};
}

bool is_identity(const Groups& groups, int64_t in) {
  if (static_cast<int64_t>(groups.size()) != in) return false;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    if (g.size() != 1 || g[0].index != static_cast<int64_t>(i) || g[0].weight != 1.0) return false;
  }
  return true;
}

}  // namespace tessera::resample
