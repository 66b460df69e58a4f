// Copy: dst = src converted to dst's dtype, on one device, any dtypes, any
// strides (src may be broadcast). Behind contiguous(), clone(), to(dtype)
// and copy_ within the device; copies between devices never come here
// (they use copy_async, runtime/ops/copy.cc).
#include <cstring>

#include "devices/template/kernels/elements.h"
#include "devices/template/kernels/kernels.h"
#include "devices/template/kernels/strided_view.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::template_device {
namespace {

void copy_kernel(const KernelContext& ctx, Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const StridedView d = StridedView::of(dst), s = StridedView::of(src);
  // One block of bytes when nothing needs converting or rearranging.
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    const size_t nbytes = dst.nbytes();
    launch(ctx, "copy", [d, s, nbytes] { std::memmove(d.data, s.data, nbytes); });
    return;
  }
  dispatch_dtype(d.dtype, [&](auto dst_tag) {
    dispatch_dtype(s.dtype, [&](auto src_tag) {
      using D = decltype(dst_tag);
      using S = decltype(src_tag);
      launch(ctx, "copy", [d, s] {
        for_each_element<2>({&d, &s}, [](const auto& p) {
          *reinterpret_cast<D*>(p[0]) = convert<D>(*reinterpret_cast<const S*>(p[1]));
        });
      });
    });
  });
}

}  // namespace

void register_copy_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Copy>(type, &copy_kernel);
}

}  // namespace tessera::template_device
