#include "models/host_tensor.h"

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera::models {

namespace {

Tensor upload(Device device, const void* data, size_t count, DType dtype, const Shape& sizes) {
  Tensor host = empty(sizes, TensorOptions(dtype, host_device()));
  TESSERA_CHECK(static_cast<size_t>(host.numel()) == count, ValueError, "tensor_on: ", count,
                " values for the shape ", shape_to_string(sizes));
  if (count > 0) std::memcpy(host.data_ptr(), data, host.nbytes());
  return host.to(device);
}

}  // namespace

Tensor tensor_on(Device device, const std::vector<int64_t>& values, const Shape& sizes) {
  return upload(device, values.data(), values.size(), DType::kI64, sizes);
}

Tensor tensor_on(Device device, const std::vector<float>& values, const Shape& sizes) {
  return upload(device, values.data(), values.size(), DType::kF32, sizes);
}

Tensor bool_tensor_on(Device device, const std::vector<uint8_t>& values, const Shape& sizes) {
  return upload(device, values.data(), values.size(), DType::kBool, sizes);
}

}  // namespace tessera::models
