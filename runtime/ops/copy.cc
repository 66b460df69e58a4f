// copy_: broadcast, dtype cast and cross-device transfer. Within a device
// the Copy kernel does the work. Across devices only the device's raw
// copies are used: the bytes spanned by a strided tensor move as one block
// and the strided part runs on the host, so a device needs no Copy kernel
// for transfers to work (and the CPU fallback, which moves tensors with
// copy_, never recurses). Two devices of one type that can copy between
// themselves (copy_peer_async) skip the host.
#include <algorithm>

#include "runtime/alloc/pinned_host_allocator.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/device/fault_injection.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// The storage bytes a tensor's elements span: [first, first + count).
struct Span {
  int64_t first_element = 0;  // storage offset of the lowest element
  int64_t num_elements = 0;
};

Span span_of(const Tensor& t) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.sizes()[d] - 1) * t.strides()[d];
  return Span{t.storage_offset(), last - t.storage_offset() + 1};
}

// The same layout as t, over a host copy of the bytes t spans.
Tensor span_to_host(const Tensor& t) {
  Span span = span_of(t);
  size_t nbytes = static_cast<size_t>(span.num_elements) * t.itemsize();
  Device host = host_device();
  StoragePtr storage = allocate_storage(host, nbytes);
  DeviceInterface& iface = device_interface(t.device());
  iface.copy_sync(CopyKind::kDeviceToHost, storage->data(), t.data_ptr(), nbytes,
                  t.device().index, current_stream(t.device()).native());
  return Tensor::from_storage(storage, t.dtype(), t.sizes(), t.strides(), 0);
}

void host_span_to_device(const Tensor& host_view, const Tensor& dst) {
  Span span = span_of(dst);
  size_t nbytes = static_cast<size_t>(span.num_elements) * dst.itemsize();
  DeviceInterface& iface = device_interface(dst.device());
  iface.copy_sync(CopyKind::kHostToDevice, dst.data_ptr(), host_view.data_ptr(), nbytes,
                  dst.device().index, current_stream(dst.device()).native());
}

// Between two devices of one type without the host, where the device can:
// src's writes are completed first, then the bytes move on dst's stream
// (into a staging tensor when dst needs a cast or is strided). Waits for
// the copy, because src (or its contiguous copy) may be freed on return.
bool copy_peer(Tensor& dst, const Tensor& src) {
  const Device from = src.device(), to = dst.device();
  if (from.type != to.type) return false;
  const Tensor s = src.contiguous();
  Tensor staged = dst.is_contiguous() && dst.dtype() == s.dtype()
                      ? dst
                      : empty(dst.sizes(), TensorOptions(s.dtype(), to));
  current_stream(from).synchronize();
  const Stream stream = current_stream(to);
  if (!device_interface(to).copy_peer_async(to.index, staged.data_ptr(), from.index, s.data_ptr(),
                                            s.nbytes(), stream.native())) {
    return false;
  }
  if (!staged.is_same(dst)) dst.copy_(staged);
  stream.synchronize();
  return true;
}

// dst and src on different devices, same sizes.
void copy_across_devices(Tensor& dst, const Tensor& src, bool non_blocking) {
  Device host = host_device();
  if (src.device() != host) fault_injection::check_operation(src.device(), "copy_");
  if (dst.device() != host) fault_injection::check_operation(dst.device(), "copy_");
  bool raw = dst.is_contiguous() && src.is_contiguous() && dst.dtype() == src.dtype();
  if (raw && (src.device() == host || dst.device() == host)) {
    bool to_device = src.device() == host;
    Device dev = to_device ? dst.device() : src.device();
    const Stream stream = current_stream(dev);
    const CopyKind kind = to_device ? CopyKind::kHostToDevice : CopyKind::kDeviceToHost;
    DeviceInterface& iface = device_interface(dev);
    // In flight only from or into a pinned block, which then waits for the
    // stream before it is reused.
    const void* host_side = to_device ? src.data_ptr() : dst.data_ptr();
    if (non_blocking && PinnedHostAllocator::get().record_stream(host_side, stream)) {
      iface.copy_async(kind, dst.data_ptr(), src.data_ptr(), dst.nbytes(), dev.index,
                       stream.native());
      return;
    }
    iface.copy_sync(kind, dst.data_ptr(), src.data_ptr(), dst.nbytes(), dev.index,
                    stream.native());
    return;
  }
  if (src.device() != host && dst.device() != host && copy_peer(dst, src)) return;
  // Bring src to the host (as its span), convert there, then send.
  Tensor host_src = src.device() == host ? src : span_to_host(src);
  if (dst.device() == host) {
    dst.copy_(host_src);
    return;
  }
  if (dst.is_contiguous()) {
    Tensor staged = host_src.is_contiguous() && host_src.dtype() == dst.dtype()
                        ? host_src
                        : host_src.to(dst.dtype()).contiguous();
    host_span_to_device(staged, dst);
    return;
  }
  // A strided destination: read its span, write the elements, send it back.
  Tensor host_dst = span_to_host(dst);
  host_dst.copy_(host_src);
  host_span_to_device(host_dst, dst);
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking) {
  TESSERA_CHECK(dst.defined() && src.defined(), ValueError, "copy_: undefined tensor argument");
  if (dst.numel() == 0) return dst;
  check_no_internal_overlap("copy_", dst);
  check_no_partial_overlap("copy_", dst, src);
  Tensor s = src;
  if (src.sizes() != dst.sizes()) {
    TESSERA_CHECK(broadcast_shapes(src.sizes(), dst.sizes(), "copy_") == dst.sizes(), ValueError,
                  "copy_: source ", describe(src), " cannot be broadcast to destination ",
                  describe(dst));
    s = src.expand(dst.sizes());
  }
  if (s.device() == dst.device()) {
    if (s.is_same(dst)) return dst;
    call_kernel<kernels::Copy>(dst.device(), dst, s);
  } else {
    copy_across_devices(dst, s, non_blocking);
  }
  return dst;
}

}  // namespace tessera
