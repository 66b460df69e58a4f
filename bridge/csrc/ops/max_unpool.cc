// max_unpool2d / max_unpool3d (nn.MaxUnpool1d/2d/3d): each input value
// scattered to the flat position its max-pool index names in a zeroed
// output plane, one tessera scatter over the [N*C, plane] view. Their
// backward (aten's formula) gathers at the same indices, natively too.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

at::Tensor unpool(const char* op, const at::Tensor& self, const at::Tensor& indices,
                  c10::IntArrayRef output_size, int64_t spatial) {
  TORCH_CHECK(indices.scalar_type() == at::kLong, op, ": elements in indices should be type "
              "int64 but got: ", indices.scalar_type());
  TORCH_CHECK(self.sizes() == indices.sizes(), op, ": Shape of input must match shape of "
              "indices, got input ", self.sizes(), " and indices ", indices.sizes());
  TORCH_CHECK(static_cast<int64_t>(output_size.size()) == spatial, op,
              ": There should be exactly ", spatial, " elements in output_size, got ",
              output_size);
  TORCH_CHECK(self.dim() == spatial + 1 || self.dim() == spatial + 2, op, ": Input to ", op,
              " should be a ", spatial + 1, "d or ", spatial + 2, "d Tensor, got ", self.sizes());
  for (const int64_t s : output_size) {
    TORCH_CHECK(s > 0, op, ": output_size must be positive, got ", output_size);
  }
  const c10::DeviceGuard guard(self.device());
  int64_t plane = 1;
  for (const int64_t s : output_size) plane *= s;
  const int64_t lead = self.dim() - spatial;  // [C] or [N, C]
  std::vector<int64_t> out_sizes(self.sizes().begin(), self.sizes().begin() + lead);
  out_sizes.insert(out_sizes.end(), output_size.begin(), output_size.end());
  int64_t rows = 1;
  for (int64_t d = 0; d < lead; ++d) rows *= self.size(d);
  const at::Tensor flat_index = indices.reshape({rows, -1});
  if (flat_index.numel() > 0) {
    const bool in_range = ((flat_index >= 0) & (flat_index < plane)).all().item<bool>();
    TORCH_CHECK(in_range, op, ": Found an invalid max index (outside an output plane of ",
                plane, " elements, output_size ", output_size, ")");
  }
  at::Tensor out = at::zeros({rows, plane}, self.options());
  out.scatter_(1, flat_index, self.reshape({rows, -1}));
  return out.view(out_sizes);
}

at::Tensor unpool2d(const at::Tensor& self, const at::Tensor& indices,
                        c10::IntArrayRef output_size) {
  return unpool("max_unpool2d", self, indices, output_size, 2);
}

at::Tensor& unpool2d_out(const at::Tensor& self, const at::Tensor& indices,
                             c10::IntArrayRef output_size, at::Tensor& out) {
  return write_out(out, unpool2d(self, indices, output_size));
}

// stride and padding only shape-check in PyTorch; the indices say where
// each value goes.
at::Tensor unpool3d(const at::Tensor& self, const at::Tensor& indices,
                        c10::IntArrayRef output_size, c10::IntArrayRef stride,
                        c10::IntArrayRef padding) {
  TORCH_CHECK(stride.size() == 3 && padding.size() == 3, "max_unpool3d: stride and padding need "
              "3 elements each, got ", stride, " and ", padding);
  for (const int64_t s : stride) {
    TORCH_CHECK(s > 0, "max_unpool3d: strides should be greater than zero, but got stride: ",
                stride);
  }
  return unpool("max_unpool3d", self, indices, output_size, 3);
}

at::Tensor& unpool3d_out(const at::Tensor& self, const at::Tensor& indices,
                             c10::IntArrayRef output_size, c10::IntArrayRef stride,
                             c10::IntArrayRef padding, at::Tensor& out) {
  return write_out(out, unpool3d(self, indices, output_size, stride, padding));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("max_unpool2d", TORCH_FN(unpool2d));
  m.impl("max_unpool2d.out", TORCH_FN(unpool2d_out));
  m.impl("max_unpool3d", TORCH_FN(unpool3d));
  m.impl("max_unpool3d.out", TORCH_FN(unpool3d_out));
}

}  // namespace
}  // namespace torch_tessera
