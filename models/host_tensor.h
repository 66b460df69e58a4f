// Small tensors the models build on the host (token ids, masks) and send
// to the device they run on.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/tensor.h"

namespace tessera::models {

// values (row-major, sizes' element count of them) as a tensor on device.
Tensor tensor_on(Device device, const std::vector<int64_t>& values, const Shape& sizes);
Tensor tensor_on(Device device, const std::vector<float>& values, const Shape& sizes);
// Bool values given as bytes (0 or 1).
Tensor bool_tensor_on(Device device, const std::vector<uint8_t>& values, const Shape& sizes);

}  // namespace tessera::models
