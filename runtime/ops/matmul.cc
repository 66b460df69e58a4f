// mm, bmm and matmul. Every product runs as the Bmm kernel; matmul maps
// 1-D and N-D operands onto it with views (and a copy only when a
// broadcast batch cannot be viewed as one dim).
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

void check_operands(const char* op, const Tensor& a, const Tensor& b) {
  common_device(op, a, b);
  TESSERA_CHECK(a.device() == b.device(), DeviceError, op,
                ": expected both operands on the same device, got ", describe(a), " and ",
                describe(b));
  TESSERA_CHECK(a.dtype() == b.dtype(), TypeError, op,
                ": expected both operands to have the same dtype, got ", describe(a), " and ",
                describe(b));
  TESSERA_CHECK(a.dtype() != DType::kBool, TypeError, op, ": not supported for bool tensors (",
                describe(a), ")");
}

// out [B, M, N] = a [B, M, K] @ b [B, K, N], all checked.
Tensor bmm_unchecked(const Tensor& a, const Tensor& b) {
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, TensorOptions(a.dtype(), a.device()));
  if (out.numel() == 0) return out;
  if (a.size(2) == 0) return out.zero_();
  call_kernel<kernels::Bmm>(a.device(), out, a, b);
  return out;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_operands("mm", a, b);
  TESSERA_CHECK(a.dim() == 2 && b.dim() == 2, ValueError, "mm: expected 2-D tensors, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(1) == b.size(0), ValueError, "mm: shapes ", shape_to_string(a.sizes()),
                " and ", shape_to_string(b.sizes()), " cannot be multiplied (", a.size(1),
                " != ", b.size(0), ")");
  return bmm_unchecked(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_operands("bmm", a, b);
  TESSERA_CHECK(a.dim() == 3 && b.dim() == 3, ValueError, "bmm: expected 3-D tensors, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), ValueError, "bmm: shapes ",
                shape_to_string(a.sizes()), " and ", shape_to_string(b.sizes()),
                " cannot be multiplied");
  return bmm_unchecked(a, b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_operands("matmul", a, b);
  TESSERA_CHECK(a.dim() >= 1 && b.dim() >= 1, ValueError,
                "matmul: both arguments need to be at least 1D, got ", a.dim(), "D and ",
                b.dim(), "D");
  int64_t k_a = a.size(-1), k_b = b.dim() == 1 ? b.size(0) : b.size(-2);
  TESSERA_CHECK(k_a == k_b, ValueError, "matmul: shapes ", shape_to_string(a.sizes()), " and ",
                shape_to_string(b.sizes()), " cannot be multiplied (", k_a, " != ", k_b, ")");
  // Promote 1-D operands to matrices, remembering which dims to drop.
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  Shape batch_a(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape batch_b(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  int64_t batch_numel = 1;
  for (int64_t s : batch) batch_numel *= s;

  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {m, k});
  b_full.insert(b_full.end(), {k, n});
  Tensor a3 = a2.expand(a_full).reshape({batch_numel, m, k});
  Tensor b3 = b2.expand(b_full).reshape({batch_numel, k, n});
  Tensor out = bmm_unchecked(a3, b3);

  Shape out_sizes = batch;
  if (a.dim() > 1) out_sizes.push_back(m);
  if (b.dim() > 1) out_sizes.push_back(n);
  return out.view(out_sizes);
}

}  // namespace tessera
