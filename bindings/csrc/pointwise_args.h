// What the elementwise bindings (ops_pointwise.cc, tensor_operators.cc,
// ops_special.cc) share: Python numbers standing in for tensors, and the `out=` convention.
#pragma once

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/results.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_common.h"

namespace tessera_py {

// A Python number where the runtime has only a tensor form (`2 - x`,
// `tessera.add(x, 2, out=o)`): a 0-d tensor on like's device whose dtype is
// result_type(like, number). It then promotes with like exactly as the
// number would (PyTorch's "wrapped number"): int32 tensor and 2 stay int32,
// int32 tensor and 2.5 give float32, float64 tensor and 0.1 keep float64.
// The number is converted as a cast would (an integer past int32 wraps
// beside an int32 tensor, as in PyTorch; full() would refuse it). For a
// 16-bit floating result it goes in as a float32 0-d tensor, which a
// dimensioned like outranks (the result keeps like's dtype) and which the
// runtime computes with in float32, as PyTorch does (h / 1e5 is 3e-5, not
// h / inf); beside a 0-d like it is converted here.
inline tessera::Tensor scalar_operand(const tessera::Scalar& number, const tessera::Tensor& like) {
  const tessera::DType dtype = tessera::result_type(like, number);
  if (dtype != tessera::DType::kF16 && dtype != tessera::DType::kBF16) {
    return tessera::pointwise::scalar_tensor(number, dtype, like.device());
  }
  const tessera::Tensor wide =
      tessera::pointwise::scalar_tensor(number, tessera::DType::kF32, like.device());
  return like.dim() > 0 ? wide : wide.to(dtype);
}

// An op with an optional `out=`, for ops whose runtime forms are separate
// functions: into(*out) writes out when given (and the caller gets out's
// own Python object back), compute() makes a new tensor otherwise. See
// tensor_or_out (results.h).
template <typename Compute, typename Into>
py::object value_or_out(tessera::Tensor* out, Compute&& compute, Into&& into) {
  return tensor_or_out(out, [&]() -> tessera::Tensor {
    if (out == nullptr) return compute();
    into(*out);
    return *out;
  });
}

// + - * / // % ** @, their reflected and in-place forms, comparisons,
// bitwise operators and hashing on tessera.Tensor (tensor_operators.cc);
// register_pointwise_ops calls it.
void register_tensor_operators(py::module_& m);

}  // namespace tessera_py
