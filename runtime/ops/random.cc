#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {
void check_floating(const char* op, const Tensor& t) {
  TESSERA_CHECK(is_floating(t.dtype()), TypeError, op, ": expected a floating dtype, got ",
                describe(t));
}
}  // namespace

Tensor& uniform_(Tensor& t, double low, double high, Generator* gen) {
  check_floating("uniform_", t);
  TESSERA_CHECK(low <= high, ValueError, "uniform_: expects low <= high, got low=", low,
                ", high=", high);
  Generator& g = gen ? *gen : default_generator(t.device());
  PhiloxState state = g.reserve(static_cast<uint64_t>(t.numel()));
  if (t.numel() > 0) call_kernel<kernels::Uniform>(t.device(), t, state, low, high);
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  check_floating("normal_", t);
  TESSERA_CHECK(std >= 0, ValueError, "normal_: expects std >= 0.0, got std=", std);
  Generator& g = gen ? *gen : default_generator(t.device());
  PhiloxState state = g.reserve(static_cast<uint64_t>(t.numel()));
  if (t.numel() > 0) call_kernel<kernels::Normal>(t.device(), t, state, mean, std);
  return t;
}

Tensor rand(const Shape& sizes, TensorOptions options, Generator* gen) {
  Tensor t = empty(sizes, options);
  check_floating("rand", t);
  return uniform_(t, 0.0, 1.0, gen);
}

Tensor randn(const Shape& sizes, TensorOptions options, Generator* gen) {
  Tensor t = empty(sizes, options);
  check_floating("randn", t);
  return normal_(t, 0.0, 1.0, gen);
}

}  // namespace tessera
