// Running extremes and order statistics on tessera: cummax / cummin (aten's
// cummax allocates the outputs and calls _cummax_helper), kthvalue and
// median, over the runtime's composites (stable sort, NaN last).
#include <torch/library.h>

#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Pair = std::tuple<tessera::Tensor, tessera::Tensor>;

std::tuple<at::Tensor, at::Tensor> fresh_pair(const Pair& r) {
  return {to_torch(std::get<0>(r)), to_torch(std::get<1>(r))};
}

std::tuple<at::Tensor&, at::Tensor&> into_pair(at::Tensor& values, at::Tensor& indices,
                                               const Pair& r) {
  write_out_exact(values, std::get<0>(r));
  write_out_exact(indices, std::get<1>(r));
  return {values, indices};
}

// values and indices arrive allocated with self's sizes.
template <bool kMax>
void cumulative_extreme_helper(const at::Tensor& self, at::Tensor& values, at::Tensor& indices,
                               int64_t dim) {
  const OpScope scope(self);
  const char* op = kMax ? "cummax" : "cummin";
  const Pair r = call_runtime([&] {
    const tessera::Tensor x = to_runtime(self, op);
    return kMax ? tessera::cummax(x, dim) : tessera::cummin(x, dim);
  });
  into_pair(values, indices, r);
}

std::tuple<at::Tensor, at::Tensor> kthvalue(const at::Tensor& self, int64_t k, int64_t dim,
                                            bool keepdim) {
  const OpScope scope(self);
  return fresh_pair(call_runtime(
      [&] { return tessera::kthvalue(to_runtime(self, "kthvalue"), k, dim, keepdim); }));
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out(const at::Tensor& self, int64_t k, int64_t dim,
                                                  bool keepdim, at::Tensor& values,
                                                  at::Tensor& indices) {
  const OpScope scope(self);
  return into_pair(values, indices, call_runtime([&] {
                     return tessera::kthvalue(to_runtime(self, "kthvalue"), k, dim, keepdim);
                   }));
}

at::Tensor median_all(const at::Tensor& self) {
  const OpScope scope(self);
  return fresh([&] { return tessera::median(to_runtime(self, "median")); });
}

std::tuple<at::Tensor, at::Tensor> median_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  const OpScope scope(self);
  return fresh_pair(
      call_runtime([&] { return tessera::median(to_runtime(self, "median"), dim, keepdim); }));
}

std::tuple<at::Tensor&, at::Tensor&> median_dim_out(const at::Tensor& self, int64_t dim,
                                                    bool keepdim, at::Tensor& values,
                                                    at::Tensor& indices) {
  const OpScope scope(self);
  return into_pair(values, indices, call_runtime([&] {
                     return tessera::median(to_runtime(self, "median"), dim, keepdim);
                   }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_cummax_helper", TORCH_FN(cumulative_extreme_helper<true>));
  m.impl("_cummin_helper", TORCH_FN(cumulative_extreme_helper<false>));
  m.impl("kthvalue", TORCH_FN(kthvalue));
  m.impl("kthvalue.values", TORCH_FN(kthvalue_out));
  m.impl("median", TORCH_FN(median_all));
  m.impl("median.dim", TORCH_FN(median_dim));
  m.impl("median.dim_values", TORCH_FN(median_dim_out));
}

}  // namespace
}  // namespace torch_tessera
