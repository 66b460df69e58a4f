// Shared checks of the op front ends: broadcasting, result types, casts,
// and device agreement.
#pragma once

#include "runtime/core/tensor.h"

namespace tessera {

// torch.can_cast: floating -> integral and non-bool -> bool are not allowed
// for in-place results.
bool can_cast(DType from, DType to);

// ValueError when value is out of dtype's range (a finite float beyond a
// float type's max, or a number an integer type cannot hold), as PyTorch.
void check_scalar_fits(const char* op, const Scalar& value, DType dtype);

// Checks that a and b are on one device and returns it. A 0-d tensor on the
// host may join a tensor on another device (as PyTorch allows for CPU
// scalars); `moved` then receives the other operand's device.
Device common_device(const char* op, const Tensor& a, const Tensor& b);

// The operand moved to device and converted to dtype if needed.
Tensor prepare_operand(const Tensor& t, Device device, DType dtype);

}  // namespace tessera
