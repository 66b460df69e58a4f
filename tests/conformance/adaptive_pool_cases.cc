// adaptive_avg_pool3d, adaptive_max_pool2d and adaptive_max_pool3d (with
// their backward): op cases against the naive pooling reference over
// adaptive windows [floor(i in / out), ceil((i + 1) in / out)) per dim,
// and error cases. adaptive_avg_pool2d's are in loss_pool_ext_cases.cc.
#include <cmath>
#include <limits>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pooling_cases.h"

namespace tessera::conformance {
namespace {

// dims: output_size (one entry: every spatial dim). inputs: input,
// [grad_output].
Shape output_sizes(const Sample& s, size_t rank) {
  return s.dims.size() == 1 ? Shape(rank, s.dims[0]) : s.dims;
}

PoolResult adaptive_reference(const Sample& s, size_t rank, PoolKind kind,
                              const std::vector<double>* grad) {
  const Tensor& x = s.inputs[0];
  const Shape out = output_sizes(s, rank);
  std::vector<PoolDim> dims;
  for (size_t j = 0; j < rank; ++j) {
    dims.push_back(adaptive_windows(x.size(x.dim() - static_cast<int64_t>(rank) + static_cast<int64_t>(j)), out[j]));
  }
  return pool_reference(x, dims, kind, true, 0, grad);
}

// The input with value at its first and second-to-last elements, in f64
// on the host.
Tensor with_specials(Tensor t, double first, double near_last) {
  Tensor f64 = t.to(DType::kF64).contiguous();
  f64.data<double>()[0] = first;
  f64.data<double>()[f64.numel() - 2] = near_last;
  return f64.to(t.dtype());
}

std::vector<Sample> adaptive3d_samples(DType t) {
  uint64_t seed = 701;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  auto ties = [&](const Shape& s) { return make_input(s, DType::kI64, seed++, -1, 1).to(t); };
  return {
      sample_of("[2, 3, 5, 7, 6] to (2, 3, 4): windows overlap", {in({2, 3, 5, 7, 6})}, {2, 3, 4}),
      sample_of("[1, 2, 4, 6, 8] to (2, 3, 4): divisible", {in({1, 2, 4, 6, 8})}, {2, 3, 4}),
      sample_of("unbatched [3, 4, 5, 6] to (3, 2, 4)", {in({3, 4, 5, 6})}, {3, 2, 4}),
      sample_of("upsampling [1, 2, 2, 3, 3] to (3, 5, 4)", {in({1, 2, 2, 3, 3})}, {3, 5, 4}),
      sample_of("global [2, 3, 3, 4, 5] to (1)", {in({2, 3, 3, 4, 5})}, {1}),
      sample_of("channels last [2, 3, 5, 4, 6] to (3, 3, 4)", {in({2, 5, 4, 6, 3}).permute({0, 4, 1, 2, 3})}, {3, 3, 4}),
      sample_of("depth sliced with step 2 [1, 2, 4, 5, 5] to (3, 2, 3)",
                {in({1, 2, 8, 5, 5}).slice(2, 1, std::nullopt, 2)}, {3, 2, 3}),
      sample_of("zero-size batch [0, 2, 3, 4, 4] to (2, 2, 2)", {in({0, 2, 3, 4, 4})}, {2, 2, 2}),
      sample_of("zero output (2, 0, 3)", {in({1, 2, 3, 4, 4})}, {2, 0, 3}),
      sample_of("ties [2, 2, 5, 5, 6] to (3, 2, 4)", {ties({2, 2, 5, 5, 6})}, {3, 2, 4}),
      sample_of("-inf and NaN [1, 2, 4, 4, 4] to (3, 3, 3)",
                {with_specials(in({1, 2, 4, 4, 4}), -std::numeric_limits<double>::infinity(), NAN)}, {3, 3, 3}),
  };
}

std::vector<Sample> adaptive2d_samples(DType t) {
  uint64_t seed = 801;
  auto in = [&](const Shape& s) { return make_input(s, t, seed++, -10, 10); };
  auto ties = [&](const Shape& s) { return make_input(s, DType::kI64, seed++, -1, 1).to(t); };
  return {
      sample_of("[2, 3, 7, 9] to (3, 5): windows overlap", {in({2, 3, 7, 9})}, {3, 5}),
      sample_of("[2, 3, 8, 8] to (4, 4): divisible", {in({2, 3, 8, 8})}, {4, 4}),
      sample_of("unbatched [3, 5, 6] to (2, 4)", {in({3, 5, 6})}, {2, 4}),
      sample_of("upsampling [1, 2, 3, 3] to (5, 4)", {in({1, 2, 3, 3})}, {5, 4}),
      sample_of("global [2, 4, 5, 6] to (1)", {in({2, 4, 5, 6})}, {1}),
      sample_of("transposed [2, 3, 6, 5] to (4, 3)", {in({2, 3, 5, 6}).transpose(2, 3)}, {4, 3}),
      sample_of("zero-size batch [0, 2, 4, 4] to (2, 2)", {in({0, 2, 4, 4})}, {2, 2}),
      sample_of("zero output (0, 2)", {in({1, 2, 4, 4})}, {0, 2}),
      sample_of("ties [2, 3, 7, 9] to (3, 4)", {ties({2, 3, 7, 9})}, {3, 4}),
      sample_of("-inf and NaN [1, 2, 6, 6] to (4, 4)",
                {with_specials(in({1, 2, 6, 6}), -std::numeric_limits<double>::infinity(), NAN)}, {4, 4}),
  };
}

// Backward samples: the forward's with a grad_output of the output's shape.
std::vector<Sample> backward_samples(std::vector<Sample> samples, DType t, size_t rank) {
  return with_grad_outputs(std::move(samples), t, [rank](const Sample& s) {
    return adaptive_reference(s, rank, PoolKind::kAvg, nullptr).values.sizes;
  });
}

Tolerance pool_tolerance(DType t, const Sample&) {
  Tolerance d = default_tolerance(t);
  return {d.rtol * 4, d.atol * 10};
}

// The max forward and backward cases of one rank.
OpCase adaptive_max_case(size_t rank) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [rank](DType t) { return rank == 2 ? adaptive2d_samples(t) : adaptive3d_samples(t); };
  c.run = [rank](const std::vector<Tensor>& in, const Sample& s) {
    auto [values, indices] = rank == 2 ? adaptive_max_pool2d(in[0], s.dims) : adaptive_max_pool3d(in[0], s.dims);
    return std::vector<Tensor>{values, indices};
  };
  c.reference = [rank](const Sample& s) {
    const PoolResult r = adaptive_reference(s, rank, PoolKind::kMax, nullptr);
    return std::vector<Expected>{r.values, r.indices};
  };
  return c;
}

OpCase adaptive_max_backward_case(size_t rank) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [rank](DType t) {
    return backward_samples(rank == 2 ? adaptive2d_samples(t) : adaptive3d_samples(t), t, rank);
  };
  c.run = [rank](const std::vector<Tensor>& in, const Sample& s) {
    if (rank == 2) {
      auto [values, indices] = adaptive_max_pool2d(in[0], s.dims);
      return std::vector<Tensor>{adaptive_max_pool2d_backward(in[1], in[0], indices)};
    }
    auto [values, indices] = adaptive_max_pool3d(in[0], s.dims);
    return std::vector<Tensor>{adaptive_max_pool3d_backward(in[1], in[0], indices)};
  };
  c.reference = [rank](const Sample& s) {
    const std::vector<double> g = values_of(s.inputs[1]);
    return std::vector<Expected>{adaptive_reference(s, rank, PoolKind::kMax, &g).grad_input};
  };
  c.tolerance = pool_tolerance;  // overlapping windows add gradients
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("adaptive_avg_pool3d") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = adaptive3d_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    return std::vector<Tensor>{adaptive_avg_pool3d(in[0], s.dims)};
  };
  c.reference = [](const Sample& s) {
    return std::vector<Expected>{adaptive_reference(s, 3, PoolKind::kAvg, nullptr).values};
  };
  c.tolerance = pool_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("adaptive_avg_pool3d_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) { return backward_samples(adaptive3d_samples(t), t, 3); };
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{adaptive_avg_pool3d_backward(in[1], in[0])};
  };
  c.reference = [](const Sample& s) {
    const std::vector<double> g = values_of(s.inputs[1]);
    return std::vector<Expected>{adaptive_reference(s, 3, PoolKind::kAvg, &g).grad_input};
  };
  c.tolerance = pool_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("adaptive_max_pool2d") { return adaptive_max_case(2); }
TESSERA_CONFORMANCE_OP("adaptive_max_pool2d_backward") { return adaptive_max_backward_case(2); }
TESSERA_CONFORMANCE_OP("adaptive_max_pool3d") { return adaptive_max_case(3); }
TESSERA_CONFORMANCE_OP("adaptive_max_pool3d_backward") { return adaptive_max_backward_case(3); }

TESSERA_CONFORMANCE_ERRORS("adaptive_avg_pool3d and adaptive_max_pool") {
  auto f32 = [](Device d, const Shape& s) { return ones(s, d); };
  auto i64 = [](Device d, const Shape& s, int64_t v) { return full(s, v, TensorOptions(DType::kI64, d)); };
  return std::vector<ErrorCase>{
      {"avg 3d of integers", [i64](Device d) { adaptive_avg_pool3d(i64(d, {1, 2, 3, 3, 3}, 1), {1}); },
       ErrorKind::kType, {"adaptive_avg_pool3d", "floating", "int64"}},
      {"avg 3d of a 3-D input", [f32](Device d) { adaptive_avg_pool3d(f32(d, {3, 3, 3}), {1}); },
       ErrorKind::kValue, {"adaptive_avg_pool3d", "4-D or 5-D", "[3, 3, 3]"}},
      {"avg 3d of an empty depth", [f32](Device d) { adaptive_avg_pool3d(f32(d, {1, 2, 0, 3, 3}), {2}); },
       ErrorKind::kValue, {"adaptive_avg_pool3d", "non-zero size", "[1, 2, 0, 3, 3]"}},
      {"avg 3d output_size of two", [f32](Device d) { adaptive_avg_pool3d(f32(d, {1, 2, 3, 3, 3}), {2, 2}); },
       ErrorKind::kValue, {"adaptive_avg_pool3d", "output_size", "[2, 2]"}},
      {"avg 3d negative output size",
       [f32](Device d) { adaptive_avg_pool3d(f32(d, {1, 2, 3, 3, 3}), {2, -1, 2}); }, ErrorKind::kValue,
       {"adaptive_avg_pool3d", "output_size", "[2, -1, 2]"}},
      {"avg 3d backward grad of another batch",
       [f32](Device d) { adaptive_avg_pool3d_backward(f32(d, {2, 2, 1, 1, 1}), f32(d, {1, 2, 3, 3, 3})); },
       ErrorKind::kValue, {"adaptive_avg_pool3d_backward", "[2, 2, 1, 1, 1]", "[1, 2, 3, 3, 3]"}},
      {"avg 3d backward grad of another rank",
       [f32](Device d) { adaptive_avg_pool3d_backward(f32(d, {2, 1, 1, 1}), f32(d, {1, 2, 3, 3, 3})); },
       ErrorKind::kValue, {"adaptive_avg_pool3d_backward", "[2, 1, 1, 1]", "[1, 2, 3, 3, 3]"}},
      {"max 2d of integers", [i64](Device d) { adaptive_max_pool2d(i64(d, {1, 2, 3, 3}, 1), {1}); },
       ErrorKind::kType, {"adaptive_max_pool2d", "floating", "int64"}},
      {"max 2d of an empty plane", [f32](Device d) { adaptive_max_pool2d(f32(d, {2, 3, 0}), {1}); },
       ErrorKind::kValue, {"adaptive_max_pool2d", "non-zero size", "[2, 3, 0]"}},
      {"max 2d output_size of three", [f32](Device d) { adaptive_max_pool2d(f32(d, {1, 2, 3, 3}), {1, 2, 3}); },
       ErrorKind::kValue, {"adaptive_max_pool2d", "output_size", "[1, 2, 3]"}},
      {"max 2d of a 5-D input", [f32](Device d) { adaptive_max_pool2d(f32(d, {1, 1, 2, 3, 3}), {1}); },
       ErrorKind::kValue, {"adaptive_max_pool2d", "3-D or 4-D", "[1, 1, 2, 3, 3]"}},
      {"max 3d of bool",
       [](Device d) { adaptive_max_pool3d(ones({1, 2, 2, 2}, TensorOptions(DType::kBool, d)), {1}); },
       ErrorKind::kType, {"adaptive_max_pool3d", "floating", "bool"}},
      {"max 3d of an empty channel dim", [f32](Device d) { adaptive_max_pool3d(f32(d, {1, 0, 2, 2, 2}), {1}); },
       ErrorKind::kValue, {"adaptive_max_pool3d", "non-zero size", "[1, 0, 2, 2, 2]"}},
      {"max 3d output_size of two", [f32](Device d) { adaptive_max_pool3d(f32(d, {1, 2, 3, 3, 3}), {1, 2}); },
       ErrorKind::kValue, {"adaptive_max_pool3d", "output_size", "[1, 2]"}},
      {"max 2d backward grad_output and indices of other sizes",
       [f32, i64](Device d) { adaptive_max_pool2d_backward(f32(d, {1, 2, 2, 2}), f32(d, {1, 2, 4, 4}), i64(d, {1, 2, 2, 1}, 0)); },
       ErrorKind::kValue, {"adaptive_max_pool2d_backward", "[1, 2, 2, 2]", "[1, 2, 2, 1]"}},
      {"max 3d backward grad of another channel count",
       [f32, i64](Device d) {
         adaptive_max_pool3d_backward(f32(d, {1, 3, 2, 2, 2}), f32(d, {1, 2, 4, 4, 4}), i64(d, {1, 3, 2, 2, 2}, 0));
       },
       ErrorKind::kValue, {"adaptive_max_pool3d_backward", "[1, 3, 2, 2, 2]", "[1, 2, 4, 4, 4]"}},
      {"max 2d backward index past the plane",
       [f32, i64](Device d) { adaptive_max_pool2d_backward(f32(d, {1, 1, 2, 2}), f32(d, {1, 1, 4, 4}), i64(d, {1, 1, 2, 2}, 16)); },
       ErrorKind::kIndex, {"adaptive_max_pool2d_backward", "16"}},
      {"max 3d backward negative index",
       [f32, i64](Device d) {
         adaptive_max_pool3d_backward(f32(d, {1, 1, 2, 2, 2}), f32(d, {1, 1, 4, 4, 4}), i64(d, {1, 1, 2, 2, 2}, -1));
       },
       ErrorKind::kIndex, {"adaptive_max_pool3d_backward", "-1"}},
  };
}

}  // namespace tessera::conformance
