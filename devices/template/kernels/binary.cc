// Binary: out = a + alpha * b and out = a - alpha * b, every dtype, any
// strides (a and b are broadcast to out's sizes with stride-0 dims; out may
// be a or b itself, for add_ and sub_).
//
// The Binary signature also carries mul and div. This kernel does not
// implement them, to show how a kernel declines part of its op: it hands
// those calls to the CPU fallback, which counts them as it counts ops
// without any kernel. Adding them is one more case in the switch below.
#include <cmath>
#include <type_traits>

#include "devices/template/kernels/elements.h"
#include "devices/template/kernels/kernels.h"
#include "devices/template/kernels/strided_view.h"
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::template_device {
namespace {

using kernels::BinaryOp;

// a + alpha * b in the compute type C, as PyTorch's CPU kernels compute it:
// integers wrap, bool is logical (a || (alpha && b)), floats use one fused
// multiply-add when alpha is not 1.
template <typename C>
C add_scaled(C a, C b, C alpha, bool alpha_is_one) {
  if constexpr (std::is_same_v<C, bool>) {
    return a || (alpha && b);
  } else if constexpr (is_int_v<C>) {
    return alpha_is_one ? wrap_add(a, b) : wrap_add(a, wrap_mul(alpha, b));
  } else {
    return alpha_is_one ? a + b : std::fma(alpha, b, a);
  }
}

// a - alpha * b; integers subtract (negating alpha could overflow).
template <typename C>
C sub_scaled(C a, C b, C alpha, bool alpha_is_one) {
  if constexpr (is_int_v<C>) {
    return alpha_is_one ? wrap_sub(a, b) : wrap_sub(a, wrap_mul(alpha, b));
  } else {
    return alpha_is_one ? a - b : std::fma(-alpha, b, a);
  }
}

void binary_kernel(const KernelContext& ctx, BinaryOp op, Tensor& out, const Tensor& a,
                   const Tensor& b, Scalar alpha) {
  // Declined: mul and div, and bool sub (which the host kernel refuses with
  // PyTorch's message).
  if (op == BinaryOp::kMul || op == BinaryOp::kDiv ||
      (op == BinaryOp::kSub && out.dtype() == DType::kBool)) {
    ::tessera::detail::run_kernel_on_host<kernels::Binary>(ctx.device, op, out, a, b, alpha);
    return;
  }
  const char* name = op == BinaryOp::kAdd ? "add" : "sub";
  TESSERA_CHECK(a.dtype() == out.dtype() && b.dtype() == out.dtype(), TypeError, name,
                ": the template kernel needs one dtype, got out ", describe(out), ", a ",
                describe(a), ", b ", describe(b));
  if (out.numel() == 0) return;
  const StridedView o = StridedView::of(out), x = StridedView::of(a), y = StridedView::of(b);
  const bool subtract = op == BinaryOp::kSub;
  dispatch_dtype(o.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;  // float for f16 and bf16
    const C alpha_c = alpha.to<C>();
    const bool one = alpha_c == C(1);
    launch(ctx, name, [o, x, y, alpha_c, one, subtract] {
      for_each_element<3>({&o, &x, &y}, [&](const auto& p) {
        const C u = static_cast<C>(*reinterpret_cast<const T*>(p[1]));
        const C v = static_cast<C>(*reinterpret_cast<const T*>(p[2]));
        C r;
        if constexpr (std::is_same_v<C, bool>) {
          r = add_scaled(u, v, alpha_c, one);  // bool sub was declined above
        } else {
          r = subtract ? sub_scaled(u, v, alpha_c, one) : add_scaled(u, v, alpha_c, one);
        }
        *reinterpret_cast<T*>(p[0]) = static_cast<T>(r);
      });
    });
  });
}

}  // namespace

void register_binary_kernel(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Binary>(type, &binary_kernel);
}

}  // namespace tessera::template_device
