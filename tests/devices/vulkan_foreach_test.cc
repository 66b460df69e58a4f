// The Vulkan device's multi-tensor kernel (devices/vulkan/kernels/
// foreach.cc) against its single-tensor kernels: every entry of a list run
// as one dispatch must give the same bits as the entry run alone, for ops
// of each family, lists of many small and a few large tensors (several
// chunks each), inputs broadcast from one element, in-place entries, and
// entries the shaders cannot read (a transposed one) run beside them; f32
// lists (foreach_f32.comp) and f16 and bf16 ones (foreach.comp). Skipped
// without a Vulkan device.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/ops/foreach_ops.h"
#include "runtime/tessera.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/ops/reference.h"
#include "tests/support/skip.h"

using namespace tessera;
using namespace tessera::vulkan_testing;
using kernels::BinaryOp;
using kernels::PointwiseBinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;

namespace {

struct ListCase {
  std::string name;
  PointwiseOpCode code;
  int arity;
  double lo, hi;  // the inputs' range
  Scalar s0 = 0, s1 = 0;
};

Tensor input(const Shape& shape, DType dtype, uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  Tensor t = rand(shape, TensorOptions(DType::kF32, host_device()), &gen);
  return add(mul(t, hi - lo), lo).to(dtype).to(gpu());
}

// The largest |x - y| - tol * (1 + |y|) over two f32 tensors of one shape.
bool close(const Tensor& x, const Tensor& y, double tol) {
  const Tensor a = x.to(host_device()).contiguous(), b = y.to(host_device()).contiguous();
  if (a.sizes() != b.sizes()) return false;
  const auto* pa = static_cast<const float*>(a.data_ptr());
  const auto* pb = static_cast<const float*>(b.data_ptr());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::fabs(pa[i] - pb[i]) > tol * (1 + std::fabs(pb[i]))) return false;
  }
  return true;
}

// The list: many small entries, a few spanning several chunks, an empty one,
// a 0-d one; every third entry's second input is one element broadcast.
std::vector<PointwiseEntry> make_entries(const ListCase& c, DType dtype, bool in_place,
                                         bool with_views) {
  const std::vector<Shape> shapes = {{}, {0}, {1}, {37}, {5, 7}, {1000}, {4097}, {70000},
                                     {3, 300}, {12}, {129, 3}, {65}};
  std::vector<PointwiseEntry> entries;
  uint64_t seed = 11;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& shape = shapes[i];
    PointwiseEntry e;
    auto in = [&](const Shape& s) { return input(s, dtype, ++seed, c.lo, c.hi); };
    e.a = in(shape);
    if (with_views && i == 4) e.a = in({7, 5}).t();  // not contiguous
    if (c.arity >= 2) e.b = i % 3 == 2 ? in({}).expand(shape) : in(shape);
    if (c.arity >= 3) e.c = i % 4 == 1 ? in({}).expand(shape) : in(shape);
    e.out = in_place ? e.a : empty(shape, TensorOptions(dtype, gpu()));
    e.s0 = c.s0;
    e.s1 = c.s1;
    entries.push_back(e);
  }
  return entries;
}

// Each entry alone on the single-tensor kernels, into fresh outputs (or
// fresh copies of self for in place).
std::vector<Tensor> expected(const ListCase& c, const std::vector<PointwiseEntry>& entries,
                             bool in_place) {
  std::vector<Tensor> outs;
  for (const PointwiseEntry& e : entries) {
    PointwiseEntry alone = e;
    alone.a = e.a.clone();
    alone.out = in_place ? alone.a : empty(e.out.sizes(), TensorOptions(e.out.dtype(), gpu()));
    run_pointwise_entry(gpu(), c.code, alone);
    outs.push_back(alone.out);
  }
  return outs;
}

bool same_bits(const Tensor& x, const Tensor& y) {
  const Tensor a = x.to(host_device()).contiguous(), b = y.to(host_device()).contiguous();
  if (a.sizes() != b.sizes()) return false;
  // An empty tensor has no memory (data_ptr may be null, which memcmp may not take).
  return a.nbytes() == 0 ||
         std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.nbytes())) == 0;
}

const std::vector<ListCase>& cases() {
  static const std::vector<ListCase> list = {
      {"add alpha", BinaryOp::kAdd, 2, -2, 2, -0.5},
      {"sub", BinaryOp::kSub, 2, -2, 2, 1},
      {"mul", BinaryOp::kMul, 2, -2, 2},
      {"div", BinaryOp::kDiv, 2, 0.5, 3},
      {"sqrt", UnaryOp::kSqrt, 1, 0, 4},
      {"exp", UnaryOp::kExp, 1, -3, 3},
      {"neg", UnaryOp::kNeg, 1, -3, 3},
      {"clamp", UnaryOp::kClamp, 1, -3, 3, -1, 0.5},
      {"clamp_min", UnaryOp::kClampMin, 1, -3, 3, 0.25},
      {"maximum", PointwiseBinaryOp::kMaximum, 2, -2, 2},
      {"minimum", PointwiseBinaryOp::kMinimum, 2, -2, 2},
      {"pow", PointwiseBinaryOp::kPow, 2, 0.5, 2},
      {"fmod", PointwiseBinaryOp::kFmod, 2, 0.5, 3},
      {"threshold_backward", PointwiseBinaryOp::kThresholdBackward, 2, -1, 1, 0.1},
      {"lerp", TernaryOp::kLerp, 3, -1, 1},
      {"addcmul", TernaryOp::kAddcmul, 3, -2, 2, 0.75},
      {"addcdiv", TernaryOp::kAddcdiv, 3, 0.5, 2, -0.5},
  };
  return list;
}

}  // namespace

TEST_CASE("vulkan foreach: one dispatch gives each entry's single-kernel bits", "[vulkan]") {
  REQUIRE_VULKAN();
  for (const ListCase& c : cases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (bool in_place : {false, true}) {
        for (bool with_views : {false, true}) {
          INFO(c.name << " " << dtype_name(dtype) << (in_place ? " in place" : "")
                      << (with_views ? " with a view" : ""));
          std::vector<PointwiseEntry> entries = make_entries(c, dtype, in_place, with_views);
          const std::vector<Tensor> want = expected(c, entries, in_place);
          const int64_t fallbacks = fallback_count("foreach_pointwise");
          foreach_pointwise("vulkan_foreach_test", c.code, entries);
          CHECK(fallback_count("foreach_pointwise") == fallbacks);
          for (size_t i = 0; i < entries.size(); ++i) {
            INFO("entry " << i << " " << describe(entries[i].out));
            CHECK(same_bits(entries[i].out, want[i]));
          }
        }
      }
    }
  }
}

TEST_CASE("vulkan foreach: matches the CPU device", "[vulkan]") {
  REQUIRE_VULKAN();
  const ListCase c{"addcdiv", TernaryOp::kAddcdiv, 3, 0.5, 2, 0.3};
  std::vector<PointwiseEntry> entries = make_entries(c, DType::kF32, false, true);
  std::vector<PointwiseEntry> on_cpu;
  for (const PointwiseEntry& e : entries) {
    PointwiseEntry h;
    h.a = e.a.to(host_device());
    h.b = e.b.to(host_device());
    h.c = e.c.to(host_device());
    h.out = empty(e.out.sizes(), TensorOptions(DType::kF32, host_device()));
    h.s0 = e.s0;
    on_cpu.push_back(h);
  }
  foreach_pointwise("vulkan_foreach_test", c.code, entries);
  foreach_pointwise("vulkan_foreach_test", c.code, on_cpu);
  for (size_t i = 0; i < entries.size(); ++i) {
    INFO("entry " << i);
    CHECK(close(entries[i].out, on_cpu[i].out, 1e-6));
  }
}
