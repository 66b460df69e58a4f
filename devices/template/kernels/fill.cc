// Fill: out[...] = value, every dtype, any strides. Behind zeros, ones,
// full, fill_ and zero_, and the scalar operands of binary ops.
#include "devices/template/kernels/kernels.h"
#include "devices/template/kernels/strided_view.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::template_device {
namespace {

void fill_kernel(const KernelContext& ctx, Tensor& out, Scalar value) {
  if (out.numel() == 0) return;
  const StridedView o = StridedView::of(out);
  dispatch_dtype(o.dtype, [&](auto tag) {
    using T = decltype(tag);
    // Converted now: the task needs only the element value.
    const T v = value.to<T>();
    launch(ctx, "fill", [o, v] {
      for_each_element<1>({&o}, [v](const auto& p) { *reinterpret_cast<T*>(p[0]) = v; });
    });
  });
}

}  // namespace

void register_fill_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Fill>(type, &fill_kernel);
}

}  // namespace tessera::template_device
