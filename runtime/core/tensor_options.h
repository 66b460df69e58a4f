#pragma once

#include <optional>

#include "runtime/core/device.h"
#include "runtime/core/dtype.h"

namespace tessera {

// dtype and device of a new tensor. No dtype means the op's default
// (float32 for most factories, inferred for arange and full); the default
// device is the host device (the registered "cpu").
struct TensorOptions {
  std::optional<DType> dtype;
  Device device = host_device();

  DType dtype_or(DType fallback) const { return dtype.value_or(fallback); }

  TensorOptions() = default;
  TensorOptions(DType t) : dtype(t) {}    // NOLINT: allows zeros({2}, DType::kI64)
  TensorOptions(Device d) : device(d) {}  // NOLINT
  TensorOptions(DType t, Device d) : dtype(t), device(d) {}
};

}  // namespace tessera
