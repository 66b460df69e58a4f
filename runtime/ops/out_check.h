// The `out=` convention of the op front ends: foo_out(out, ...) writes the
// result of foo(...) into out, which must have the result's sizes (an empty
// out, numel 0, is first resized to them, as PyTorch's resize_output does),
// be on the inputs' device and have a dtype the result can be cast to.
#pragma once

#include <initializer_list>

#include "runtime/core/tensor.h"

namespace tessera {

// ValueError / TypeError / DeviceError naming op when out does not fit.
void check_out(const char* op, const Tensor& out, const Shape& sizes, DType result_dtype,
               Device device);

// Checks out, then copies result into it (casting); returns out.
Tensor& write_out(const char* op, Tensor& out, const Tensor& result);

// True when a kernel may write an op's result straight into out: out has
// exactly the result's sizes and dtype, is on `device`, its elements are
// distinct (non-overlapping and dense) and it shares no storage with any
// input. Otherwise the op computes a temporary and write_out()s it, which
// also reports what is wrong with out.
bool can_write_directly(const Tensor& out, const Shape& sizes, DType dtype, Device device,
                        std::initializer_list<const Tensor*> inputs);

}  // namespace tessera
