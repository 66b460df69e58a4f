// mm, bmm and matmul. Every product runs as the Bmm kernel; matmul maps
// 1-D and N-D operands onto it with views (and a copy only when a
// broadcast batch cannot be viewed as one dim).
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
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
void bmm_into(Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  if (a.size(2) == 0) {
    out.zero_();
    return;
  }
  call_kernel<kernels::Bmm>(a.device(), out, a, b);
}

Tensor bmm_unchecked(const Tensor& a, const Tensor& b) {
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, TensorOptions(a.dtype(), a.device()));
  bmm_into(out, a, b);
  return out;
}

void check_mm(const Tensor& a, const Tensor& b) {
  check_operands("mm", a, b);
  TESSERA_CHECK(a.dim() == 2 && b.dim() == 2, ValueError, "mm: expected 2-D tensors, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(1) == b.size(0), ValueError, "mm: shapes ", shape_to_string(a.sizes()),
                " and ", shape_to_string(b.sizes()), " cannot be multiplied (", a.size(1),
                " != ", b.size(0), ")");
}

void check_bmm(const Tensor& a, const Tensor& b) {
  check_operands("bmm", a, b);
  TESSERA_CHECK(a.dim() == 3 && b.dim() == 3, ValueError, "bmm: expected 3-D tensors, got ",
                describe(a), " and ", describe(b));
  TESSERA_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), ValueError, "bmm: shapes ",
                shape_to_string(a.sizes()), " and ", shape_to_string(b.sizes()),
                " cannot be multiplied");
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  check_mm(a, b);
  return bmm_unchecked(a.unsqueeze(0), b.unsqueeze(0)).squeeze(0);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_bmm(a, b);
  return bmm_unchecked(a, b);
}

// The out= forms write the product straight into out when it can take it
// (compiled graphs call them with preallocated buffers): no temporary, no
// second pass. Otherwise compute, then write_out.
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  check_mm(a, b);
  if (can_write_directly(out, {a.size(0), b.size(1)}, a.dtype(), a.device(), {&a, &b})) {
    Tensor out3 = out.unsqueeze(0);
    bmm_into(out3, a.unsqueeze(0), b.unsqueeze(0));
    return out;
  }
  return write_out("mm", out, mm(a, b));
}

Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  check_bmm(a, b);
  if (can_write_directly(out, {a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device(),
                         {&a, &b})) {
    bmm_into(out, a, b);
    return out;
  }
  return write_out("bmm", out, bmm(a, b));
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
