// Shared machinery of the pointwise front ends: the three call forms of an
// op (functional, in-place on self, and out=) reduced to one helper, so
// that each op only states its result dtype and which kernel computes it.
#pragma once

#include <functional>
#include <initializer_list>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

namespace tessera::pointwise {

enum class Form { kFunctional, kInPlace, kOut };

// Where a result goes: a new tensor, self (in-place) or out.
struct Target {
  Form form = Form::kFunctional;
  Tensor* dst = nullptr;  // self or out; null for the functional form
};

inline Target functional() { return {}; }
inline Target in_place(Tensor& self) { return {Form::kInPlace, &self}; }
inline Target into(Tensor& out) { return {Form::kOut, &out}; }

// Computes a result of `dtype` and `shape` on `device` through
// `compute(dst)`, which writes every element of dst (a tensor of exactly
// that dtype and shape). For the in-place and out forms it first checks, as
// PyTorch does, that the result casts to the target's dtype, that the
// target has the result's shape and device, and that it overlaps no input
// partially; a target of another dtype gets the result through a cast copy.
// Returns the tensor that holds the result.
Tensor& deliver(const char* op, Target target, const Shape& shape, DType dtype, Device device,
                std::initializer_list<const Tensor*> inputs,
                const std::function<void(Tensor& dst)>& compute);

// The result of the functional form is held here so deliver can return a
// reference for every form.
Tensor deliver_value(const char* op, Target target, const Shape& shape, DType dtype,
                     Device device, std::initializer_list<const Tensor*> inputs,
                     const std::function<void(Tensor& dst)>& compute);

// A Scalar operand as a 0-d tensor of dtype on device (its value converted
// as a cast would, as PyTorch's wrapped numbers).
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device);

// True when an op whose result is the 16-bit float `dtype` must take the
// Scalar operand in float32: kernels compute 16-bit floats in float, as
// PyTorch's opmath does, but they receive the Scalar as a tensor of the
// result's dtype, which would round it first (1e5 overflows float16 to
// inf, 1e-8 flushes to 0, 0.1 loses bits). False for any other dtype and
// for values the 16-bit dtype holds exactly.
bool scalar_needs_float32(DType dtype, const Scalar& value);

// "float32[2, 3] on cpu:0" or "scalar 2.5".
std::string describe_scalar(const Scalar& s);

}  // namespace tessera::pointwise
