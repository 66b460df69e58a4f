// Upsampling on tessera: every aten op torch.nn.functional.interpolate
// reaches through the .vec composites but the antialiased ones (nearest
// and nearest-exact in 1-3 D, linear, bilinear, trilinear, bicubic), each
// functional, out=, backward and backward out=, over the runtime's upsample
// composite (runtime/ops/nn_upsample.cc). _upsample_bilinear2d_aa and
// _upsample_bicubic2d_aa (antialias=True) run through the CPU fallback.
#include <torch/library.h>

#include <optional>
#include <string>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Scale = std::optional<double>;
using tessera::Interpolation;

// The runtime takes the number of spatial dims from output_size; an aten op
// has one, so a wrong output_size is reported here, naming the op.
template <const char* Name>
void check_output_size(c10::IntArrayRef output_size, size_t rank, const char* suffix = "") {
  TORCH_CHECK(output_size.size() == rank, Name, suffix, ": expected output_size of ", rank,
              rank == 1 ? " element" : " elements", ", got ", output_size);
}

template <const char* Name, Interpolation Mode>
tessera::Tensor run_forward(const at::Tensor& self, c10::IntArrayRef output_size,
                            bool align_corners, const std::vector<Scale>& scales) {
  check_output_size<Name>(output_size, scales.size());
  return call_runtime([&] {
    return tessera::upsample(to_runtime(self, Name), to_runtime_shape(output_size), Mode,
                             align_corners, scales);
  });
}

template <const char* Name, Interpolation Mode>
tessera::Tensor run_backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                             c10::IntArrayRef input_size, bool align_corners,
                             const std::vector<Scale>& scales) {
  check_output_size<Name>(output_size, scales.size(), "_backward");
  const std::string op = std::string(Name) + "_backward";
  return call_runtime([&] {
    return tessera::upsample_backward(to_runtime(grad, op.c_str()), to_runtime_shape(output_size),
                                      to_runtime_shape(input_size), Mode, align_corners, scales);
  });
}

// The four kernels of the nearest ops (no align_corners): one Scale
// argument per spatial dim.
template <const char* Name, Interpolation Mode, typename... Scales>
struct NearestKernels {
  static at::Tensor forward(const at::Tensor& self, c10::IntArrayRef output_size,
                            Scales... scales) {
    const OpScope scope(self);
    return to_torch(run_forward<Name, Mode>(self, output_size, false, {scales...}));
  }
  static at::Tensor& forward_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                 Scales... scales, at::Tensor& out) {
    const OpScope scope(self);
    return write_out_exact(out, run_forward<Name, Mode>(self, output_size, false, {scales...}));
  }
  static at::Tensor backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                             c10::IntArrayRef input_size, Scales... scales) {
    const OpScope scope(grad);
    return to_torch(run_backward<Name, Mode>(grad, output_size, input_size, false, {scales...}));
  }
  static at::Tensor& backward_out(const at::Tensor& grad, c10::IntArrayRef output_size,
                                  c10::IntArrayRef input_size, Scales... scales,
                                  at::Tensor& grad_input) {
    const OpScope scope(grad);
    return write_out_exact(
        grad_input, run_backward<Name, Mode>(grad, output_size, input_size, false, {scales...}));
  }
};

// The same for the interpolating ops, which take align_corners.
template <const char* Name, Interpolation Mode, typename... Scales>
struct InterpolatingKernels {
  static at::Tensor forward(const at::Tensor& self, c10::IntArrayRef output_size,
                            bool align_corners, Scales... scales) {
    const OpScope scope(self);
    return to_torch(run_forward<Name, Mode>(self, output_size, align_corners, {scales...}));
  }
  static at::Tensor& forward_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                 bool align_corners, Scales... scales, at::Tensor& out) {
    const OpScope scope(self);
    return write_out_exact(
        out, run_forward<Name, Mode>(self, output_size, align_corners, {scales...}));
  }
  static at::Tensor backward(const at::Tensor& grad, c10::IntArrayRef output_size,
                             c10::IntArrayRef input_size, bool align_corners, Scales... scales) {
    const OpScope scope(grad);
    return to_torch(
        run_backward<Name, Mode>(grad, output_size, input_size, align_corners, {scales...}));
  }
  static at::Tensor& backward_out(const at::Tensor& grad, c10::IntArrayRef output_size,
                                  c10::IntArrayRef input_size, bool align_corners,
                                  Scales... scales, at::Tensor& grad_input) {
    const OpScope scope(grad);
    return write_out_exact(grad_input, run_backward<Name, Mode>(grad, output_size, input_size,
                                                                align_corners, {scales...}));
  }
};

template <const char* Name, typename Kernels>
void register_op(KernelTable& m) {
  const std::string name = Name;
  m.impl(Name, TORCH_FN(Kernels::forward));
  m.impl((name + ".out").c_str(), TORCH_FN(Kernels::forward_out));
  m.impl((name + "_backward").c_str(), TORCH_FN(Kernels::backward));
  m.impl((name + "_backward.grad_input").c_str(), TORCH_FN(Kernels::backward_out));
}

template <const char* Name, Interpolation Mode, typename... Scales>
void register_nearest(KernelTable& m) {
  register_op<Name, NearestKernels<Name, Mode, Scales...>>(m);
}

template <const char* Name, Interpolation Mode, typename... Scales>
void register_interpolating(KernelTable& m) {
  register_op<Name, InterpolatingKernels<Name, Mode, Scales...>>(m);
}

constexpr char kNearest1d[] = "upsample_nearest1d";
constexpr char kNearest2d[] = "upsample_nearest2d";
constexpr char kNearest3d[] = "upsample_nearest3d";
constexpr char kNearestExact1d[] = "_upsample_nearest_exact1d";
constexpr char kNearestExact2d[] = "_upsample_nearest_exact2d";
constexpr char kNearestExact3d[] = "_upsample_nearest_exact3d";
constexpr char kLinear1d[] = "upsample_linear1d";
constexpr char kBilinear2d[] = "upsample_bilinear2d";
constexpr char kTrilinear3d[] = "upsample_trilinear3d";
constexpr char kBicubic2d[] = "upsample_bicubic2d";

TESSERA_ATEN_KERNELS(m) {
  register_nearest<kNearest1d, Interpolation::kNearest, Scale>(m);
  register_nearest<kNearest2d, Interpolation::kNearest, Scale, Scale>(m);
  register_nearest<kNearest3d, Interpolation::kNearest, Scale, Scale, Scale>(m);
  register_nearest<kNearestExact1d, Interpolation::kNearestExact, Scale>(m);
  register_nearest<kNearestExact2d, Interpolation::kNearestExact, Scale, Scale>(m);
  register_nearest<kNearestExact3d, Interpolation::kNearestExact, Scale, Scale, Scale>(m);
  register_interpolating<kLinear1d, Interpolation::kLinear, Scale>(m);
  register_interpolating<kBilinear2d, Interpolation::kLinear, Scale, Scale>(m);
  register_interpolating<kTrilinear3d, Interpolation::kLinear, Scale, Scale, Scale>(m);
  register_interpolating<kBicubic2d, Interpolation::kCubic, Scale, Scale>(m);
}

}  // namespace
}  // namespace torch_tessera
