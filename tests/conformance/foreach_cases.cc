// The multi-tensor pointwise op (foreach_pointwise): one case per kernel
// family, each over a list that mixes a 0-d entry, an empty one, plain,
// transposed and strided tensors, an input broadcast to its output and
// one entry larger than the elementwise grain, into new outputs and in
// place; then the validation errors.
#include <cmath>
#include <functional>
#include <utility>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

using kernels::BinaryOp;
using kernels::PointwiseBinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;

// An op of a case: its code, arity, scalars and double reference, and
// each input's value range (divisors and square roots stay positive).
struct ListOp {
  PointwiseOpCode code;
  int arity;
  double s0, s1;
  double (*f)(const std::vector<double>& x, double s0, double s1);
  std::vector<std::pair<double, double>> ranges;
};

// The entries' layouts: the first input's (and the output's) shape and
// view, and the shape the other inputs come in (broadcast when smaller).
enum class View { kPlain, kTransposed, kStrided };
struct EntrySpec {
  Shape shape;
  View view;
  Shape others;
};

const std::vector<EntrySpec>& entry_specs() {
  static const std::vector<EntrySpec> specs = {
      {{}, View::kPlain, {}},
      {{0, 3}, View::kPlain, {0, 3}},
      {{5, 7}, View::kPlain, {5, 7}},
      {{4, 6}, View::kTransposed, {4, 6}},
      {{3, 5}, View::kStrided, {3, 5}},
      {{6, 4}, View::kPlain, {1, 4}},
      {{70000}, View::kPlain, {70000}},
  };
  return specs;
}

Tensor entry_input(const Shape& shape, View view, DType t, uint64_t seed, double lo, double hi) {
  switch (view) {
    case View::kTransposed:
      return make_input({shape[1], shape[0]}, t, seed, lo, hi).t();
    case View::kStrided:
      return make_input({shape[0], 2 * shape[1]}, t, seed, lo, hi)
          .slice(1, 0, std::nullopt, 2);
    case View::kPlain:
      break;
  }
  return make_input(shape, t, seed, lo, hi);
}

// Per entry `arity` inputs in order. dims: {arity, in_place}.
std::vector<Sample> list_samples(DType t, const ListOp& op) {
  std::vector<Sample> out;
  for (int in_place = 0; in_place < 2; ++in_place) {
    uint64_t seed = 3000 + 100 * static_cast<uint64_t>(in_place);
    std::vector<Tensor> inputs;
    for (const EntrySpec& e : entry_specs()) {
      for (int k = 0; k < op.arity; ++k) {
        const auto [lo, hi] = op.ranges[static_cast<size_t>(k)];
        inputs.push_back(k == 0 ? entry_input(e.shape, e.view, t, seed++, lo, hi)
                                : make_input(e.others, t, seed++, lo, hi));
      }
    }
    out.push_back(sample_of(in_place ? "in place: 0-d, empty, plain, transposed, strided, "
                                       "broadcast, [70000]"
                                     : "0-d, empty, plain, transposed, strided, broadcast, "
                                       "[70000]",
                            std::move(inputs), {op.arity, in_place}));
  }
  return out;
}

// A device copy with the same strides, so that the in-place run leaves
// the case's inputs as they were.
Tensor clone_keeping_strides(const Tensor& t) {
  Tensor c = empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype(), t.device()));
  c.copy_(t);
  return c;
}

OpCase list_case(ListOp op) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [op](DType t) { return list_samples(t, op); };
  c.run = [op](const std::vector<Tensor>& in, const Sample& s) {
    const auto arity = static_cast<size_t>(s.dims[0]);
    const bool in_place = s.dims[1] != 0;
    std::vector<PointwiseEntry> entries;
    for (size_t i = 0; i + arity <= in.size(); i += arity) {
      PointwiseEntry e;
      e.a = in_place ? clone_keeping_strides(in[i]) : in[i];
      e.out = in_place ? e.a : empty(in[i].sizes(), TensorOptions(in[i].dtype(), in[i].device()));
      if (arity > 1) e.b = in[i + 1];
      if (arity > 2) e.c = in[i + 2];
      e.s0 = op.s0;
      e.s1 = op.s1;
      entries.push_back(std::move(e));
    }
    foreach_pointwise("foreach_pointwise", op.code, entries);
    std::vector<Tensor> outs;
    for (const PointwiseEntry& e : entries) outs.push_back(e.out);
    return outs;
  };
  c.reference = [op](const Sample& s) {
    const auto arity = static_cast<size_t>(s.dims[0]);
    std::vector<Expected> expected;
    for (size_t i = 0; i + arity <= s.inputs.size(); i += arity) {
      const std::vector<Tensor> entry(s.inputs.begin() + static_cast<std::ptrdiff_t>(i),
                                      s.inputs.begin() + static_cast<std::ptrdiff_t>(i + arity));
      expected.push_back(map_reference(entry, entry[0].dtype(),
                                       [&op](const std::vector<double>& x) {
                                         return op.f(x, op.s0, op.s1);
                                       }));
    }
    return expected;
  };
  return c;
}

constexpr std::pair<double, double> kAny{-3, 3}, kPositive{0.5, 3}, kUnit{0, 1};

TESSERA_CONFORMANCE_OP("foreach_pointwise add alpha -0.5") {
  return list_case({BinaryOp::kAdd, 2, -0.5, 0,
                    [](const std::vector<double>& x, double a, double) { return x[0] + a * x[1]; },
                    {kAny, kAny}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise div") {
  return list_case({BinaryOp::kDiv, 2, 1, 0,
                    [](const std::vector<double>& x, double, double) { return x[0] / x[1]; },
                    {kAny, kPositive}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise sqrt") {
  return list_case({UnaryOp::kSqrt, 1, 0, 0,
                    [](const std::vector<double>& x, double, double) { return std::sqrt(x[0]); },
                    {kPositive}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise clamp [-1, 0.5]") {
  return list_case({UnaryOp::kClamp, 1, -1, 0.5,
                    [](const std::vector<double>& x, double lo, double hi) {
                      return std::fmin(std::fmax(x[0], lo), hi);
                    },
                    {kAny}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise maximum") {
  return list_case({PointwiseBinaryOp::kMaximum, 2, 0, 0,
                    [](const std::vector<double>& x, double, double) {
                      return std::fmax(x[0], x[1]);
                    },
                    {kAny, kAny}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise addcdiv value -0.5") {
  return list_case({TernaryOp::kAddcdiv, 3, -0.5, 0,
                    [](const std::vector<double>& x, double v, double) {
                      return x[0] + v * x[1] / x[2];
                    },
                    {kAny, kAny, kPositive}});
}

TESSERA_CONFORMANCE_OP("foreach_pointwise lerp") {
  return list_case({TernaryOp::kLerp, 3, 0, 0,
                    [](const std::vector<double>& x, double, double) {
                      return x[0] + x[2] * (x[1] - x[0]);
                    },
                    {kAny, kAny, kUnit}});
}

// -- Errors: every entry is checked before any runs.

Tensor f32(Device d, const Shape& s) { return ones(s, TensorOptions(DType::kF32, d)); }

void call_add(Device d, const std::function<void(std::vector<PointwiseEntry>&)>& edit) {
  std::vector<PointwiseEntry> entries(2);
  for (PointwiseEntry& e : entries) {
    e.a = f32(d, {2, 3});
    e.b = f32(d, {2, 3});
    e.out = f32(d, {2, 3});
    e.s0 = 1;
  }
  edit(entries);
  foreach_pointwise("_foreach_add", BinaryOp::kAdd, entries);
}

TESSERA_CONFORMANCE_ERRORS("foreach_pointwise") {
  return std::vector<ErrorCase>{
      {"an input of another dtype",
       [](Device d) {
         call_add(d, [d](auto& e) { e[1].b = ones({2, 3}, TensorOptions(DType::kF64, d)); });
       },
       ErrorKind::kType, {"_foreach_add", "entry 1", "second input", "float64[2, 3]"}},
      {"an input that does not broadcast to its output",
       [](Device d) { call_add(d, [d](auto& e) { e[0].b = f32(d, {3, 2}); }); },
       ErrorKind::kValue, {"_foreach_add", "entry 0", "[3, 2]", "[2, 3]"}},
      {"an undefined input",
       [](Device d) { call_add(d, [](auto& e) { e[1].b = Tensor(); }); }, ErrorKind::kValue,
       {"_foreach_add", "entry 1", "undefined"}},
      {"integer tensors",
       [](Device d) {
         call_add(d, [d](auto& e) {
           for (PointwiseEntry& x : e) {
             x.a = x.b = x.out = zeros({2}, TensorOptions(DType::kI32, d));
           }
         });
       },
       ErrorKind::kType, {"_foreach_add", "floating", "int32[2]"}},
      {"two entries writing one tensor",
       [](Device d) { call_add(d, [](auto& e) { e[1].out = e[0].out; }); }, ErrorKind::kValue,
       {"_foreach_add", "shares memory"}},
      {"an entry reading another entry's output",
       [](Device d) { call_add(d, [](auto& e) { e[1].b = e[0].out; }); }, ErrorKind::kValue,
       {"_foreach_add", "shares memory"}},
      {"a bool-valued op",
       [](Device d) {
         std::vector<PointwiseEntry> entries(1);
         entries[0].a = entries[0].out = f32(d, {2});
         foreach_pointwise("_foreach_isnan", UnaryOp::kIsnan, entries);
       },
       ErrorKind::kValue, {"_foreach_isnan", "no multi-tensor form"}},
  };
}

}  // namespace
}  // namespace tessera::conformance
