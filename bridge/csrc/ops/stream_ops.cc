// x.record_stream(s) for tessera tensors. PyTorch registers no PrivateUse1
// or composite kernel for aten::record_stream, and the boxed CPU fallback
// would be wrong for it (it has no tensor result and a Stream argument):
// the caching allocator must learn that `s` uses the tensor's block, so
// the block is not handed to another allocation before s's work is done.
#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "bridge/csrc/allocator.h"

namespace torch_tessera {
namespace {

void record_stream(at::Tensor& self, c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "record_stream: the tensor is on ", self.device(), " but the stream is a ",
              c10::DeviceTypeName(stream.device_type(), /*lower_case=*/true),
              " stream; pass a tessera stream");
  TORCH_CHECK(stream.device_index() == self.device().index(), "record_stream: the tensor is on ",
              self.device(), " but the stream is on ", stream.device());
  // Tensors without storage (none today) and zero-byte storages have no
  // block to protect.
  if (!self.has_storage() || self.storage().data() == nullptr) return;
  allocator().recordStream(self.storage().data_ptr(), stream);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("record_stream", &record_stream); }

}  // namespace
}  // namespace torch_tessera
