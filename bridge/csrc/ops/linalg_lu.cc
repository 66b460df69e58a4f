// Dense linear algebra by LU and Cholesky factorization, composed of
// tessera ops so that it runs on every tessera device without the CPU
// fallback: linalg.lu_factor / lu / lu_solve / solve / inv / det /
// slogdet, cholesky (both APIs) / cholesky_solve / cholesky_inverse, and
// the triangular solves.
//
// The factorizations are right-looking and unblocked: step j of an n x n
// LU picks the pivot (partial pivoting by largest magnitude, the first on
// ties, as LAPACK's getrf), swaps rows, scales the column and makes one
// rank-1 update, a handful of batched tensor ops per step. The triangular
// solves substitute one row per step. That is n dependent steps, so these
// suit the small and medium matrices models factor (covariances, small
// systems in a loss, normalizing flows); results, pivots and info codes
// follow LAPACK's, so that PyTorch's backward formulas, which read the LU
// and pivots back, apply unchanged. Complex inputs go to the CPU
// fallback (complex_routing.h).
#include <ATen/ATen.h>
#include <c10/util/accumulate.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

using Tensors3 = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

void check_matrix(const char* op, const at::Tensor& a, bool square) {
  TORCH_CHECK(a.dim() >= 2, op, ": the input tensor A must have at least 2 dimensions, got ",
              a.sizes());
  TORCH_CHECK(!square || a.size(-1) == a.size(-2), op,
              ": A must be batches of square matrices, but they are ", a.size(-2), " by ",
              a.size(-1), " matrices");
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), op,
              ": expected a floating point tensor, got ", a.scalar_type());
}

c10::DimVector batch_of(const at::Tensor& t, int64_t matrix_dims = 2) {
  return c10::DimVector(t.sizes().begin(), t.sizes().end() - matrix_dims);
}

// -- LU with partial pivoting, batched over the leading dims.

struct Lu {
  at::Tensor lu;      // [*, m, n]
  at::Tensor pivots;  // [*, min(m, n)] int32, 1-based as LAPACK's
  at::Tensor info;    // [*] int32: j + 1 for the first zero pivot U[j, j], else 0
};

Lu lu_factor(const at::Tensor& a, bool pivot) {
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n);
  const c10::DimVector batch = batch_of(a);
  const int64_t count = c10::multiply_integers(batch);
  at::Tensor lu = a.reshape({count, m, n}).clone(at::MemoryFormat::Contiguous);
  at::Tensor pivots = at::empty({count, k}, a.options().dtype(at::kInt));
  const at::Tensor rows = at::arange(m, a.options().dtype(at::kLong));
  for (int64_t j = 0; j < k; ++j) {
    if (pivot) {
      const at::Tensor p = lu.select(2, j).narrow(1, j, m - j).abs().argmax(1) + j;  // [count]
      pivots.select(1, j).copy_(p + 1);
      // Rows j and p exchanged, as one gather of every row.
      at::Tensor order = rows.unsqueeze(0).repeat({count, 1});
      order.select(1, j).copy_(p);
      order.scatter_(1, p.unsqueeze(1), j);
      lu = lu.gather(1, order.unsqueeze(2).expand({count, m, n}));
    } else {
      pivots.select(1, j).fill_(j + 1);
    }
    if (j + 1 >= m) continue;
    const at::Tensor diag = lu.select(1, j).select(1, j).unsqueeze(1);  // [count, 1]
    at::Tensor column = lu.select(2, j).narrow(1, j + 1, m - j - 1);
    column.copy_(at::where(diag == 0, column, column / diag));  // getrf skips a zero pivot
    if (j + 1 < n) {
      lu.narrow(1, j + 1, m - j - 1)
          .narrow(2, j + 1, n - j - 1)
          .sub_(column.unsqueeze(2) * lu.select(1, j).narrow(1, j + 1, n - j - 1).unsqueeze(1));
    }
  }
  const at::Tensor zero = (lu.diagonal(0, 1, 2) == 0).to(at::kInt);  // [count, k]
  at::Tensor info = k == 0 ? at::zeros({count}, pivots.options())
                           : at::where(zero.any(1), zero.argmax(1) + 1, 0).to(at::kInt);
  c10::DimVector lu_sizes = batch, piv_sizes = batch;
  lu_sizes.append({m, n});
  piv_sizes.push_back(k);
  return {lu.view(lu_sizes), pivots.view(piv_sizes), info.view(batch)};
}

// The row permutation the pivots describe: perm[i] is the row of A that
// row i of L U comes from (P^T A = L U with P^T = I[perm]).
at::Tensor permutation_of(const at::Tensor& pivots, int64_t m) {
  const int64_t k = pivots.size(-1);
  const int64_t count = c10::multiply_integers(batch_of(pivots, 1));
  const at::Tensor piv = pivots.reshape({count, k}).to(at::kLong) - 1;
  at::Tensor perm =
      at::arange(m, pivots.options().dtype(at::kLong)).unsqueeze(0).repeat({count, 1});
  for (int64_t j = 0; j < k; ++j) {
    const at::Tensor p = piv.select(1, j).unsqueeze(1);
    const at::Tensor at_j = perm.select(1, j).clone(), at_p = perm.gather(1, p).squeeze(1);
    perm.select(1, j).copy_(at_p);
    perm.scatter_(1, p, at_j.unsqueeze(1));
  }
  c10::DimVector sizes = batch_of(pivots, 1);
  sizes.push_back(m);
  return perm.view(sizes);
}

// (-1)^(number of pivots that swap a row), per matrix.
at::Tensor permutation_sign(const at::Tensor& pivots) {
  const at::Tensor identity = at::arange(1, pivots.size(-1) + 1, pivots.options());
  const at::Tensor swaps = (pivots != identity).sum(-1);
  return 1 - 2 * at::remainder(swaps, 2);
}

// -- Triangular solves by substitution: A X = B for A [*, n, n] triangular
// (only the triangle used is read; unit: ones assumed on the diagonal).

at::Tensor solve_triangular_left(const at::Tensor& a, const at::Tensor& b, bool upper, bool unit) {
  const int64_t n = a.size(-1);
  TORCH_CHECK(b.size(-2) == n, "linalg.solve_triangular: incompatible shapes of A (", a.sizes(),
              ") and B (", b.sizes(), ")");
  c10::DimVector batch = at::infer_size_dimvector(batch_of(a), batch_of(b));
  c10::DimVector a_sizes = batch, b_sizes = batch;
  a_sizes.append({n, n});
  b_sizes.append({n, b.size(-1)});
  const at::ScalarType dtype = at::promote_types(a.scalar_type(), b.scalar_type());
  const at::Tensor A = a.to(dtype).expand(a_sizes);
  at::Tensor x = b.to(dtype).expand(b_sizes).clone(at::MemoryFormat::Contiguous);
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = upper ? n - 1 - s : s;
    at::Tensor xi = x.select(-2, i);
    const at::Tensor row = A.select(-2, i);
    const int64_t lo = upper ? i + 1 : 0, len = upper ? n - i - 1 : i;
    if (len > 0) {
      xi.sub_(at::matmul(row.narrow(-1, lo, len).unsqueeze(-2), x.narrow(-2, lo, len))
                  .squeeze(-2));
    }
    if (!unit) xi.div_(row.select(-1, i).unsqueeze(-1));
  }
  return x;
}

at::Tensor solve_triangular_either_side(const at::Tensor& a, const at::Tensor& b, bool upper, bool left,
                            bool unit) {
  if (left) return solve_triangular_left(a, b, upper, unit);
  // X A = B  <=>  A^T X^T = B^T.
  return solve_triangular_left(a.mT(), b.mT(), !upper, unit).mT();
}

// A X = B from A's LU (left), or X A = B (right); adjoint solves with A^T.
at::Tensor solve_with_lu(const at::Tensor& lu, const at::Tensor& pivots, const at::Tensor& b,
                    bool left, bool adjoint) {
  if (!left) {
    // X A = B <=> A^T X^T = B^T: the opposite adjoint, transposed.
    return solve_with_lu(lu, pivots, b.mT(), true, !adjoint).mT();
  }
  const int64_t n = lu.size(-1);
  const at::Tensor perm = permutation_of(pivots, n);  // [*, n]
  if (!adjoint) {
    // A = P L U: X = U^-1 L^-1 (P^T B), P^T B = B[perm].
    c10::DimVector batch = at::infer_size_dimvector(batch_of(perm, 1), batch_of(b));
    c10::DimVector b_sizes = batch, p_sizes = batch;
    b_sizes.append({n, b.size(-1)});
    p_sizes.append({n, b.size(-1)});
    const at::Tensor permuted =
        b.expand(b_sizes).gather(-2, perm.unsqueeze(-1).expand(p_sizes));
    const at::Tensor y = solve_triangular_left(lu, permuted, /*upper=*/false, /*unit=*/true);
    return solve_triangular_left(lu, y, /*upper=*/true, /*unit=*/false);
  }
  // A^T = U^T L^T P^T: X = P L^-T U^-T B, and P Z puts row i of Z at perm[i].
  const at::Tensor y = solve_triangular_left(lu.mT(), b, /*upper=*/false, /*unit=*/false);
  const at::Tensor z = solve_triangular_left(lu.mT(), y, /*upper=*/true, /*unit=*/true);
  at::Tensor x = at::empty_like(z, at::MemoryFormat::Contiguous);
  c10::DimVector p_sizes = batch_of(z);
  p_sizes.append({n, z.size(-1)});
  x.scatter_(-2, perm.unsqueeze(-1).expand(p_sizes), z);
  return x;
}

void check_info(const char* op, const at::Tensor& info, const char* what) {
  const int64_t bad = info.ne(0).any().item<bool>() ? info.abs().max().item<int64_t>() : 0;
  TORCH_CHECK_LINALG(bad == 0, op, ": ", what, " (the ", bad, "-th diagonal element of the ",
                     "factorization is zero)");
}

// -- aten kernels.

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_factor_ex_out(
    const at::Tensor& a, bool pivot, bool check_errors, at::Tensor& lu, at::Tensor& pivots,
    at::Tensor& info) {
  check_matrix("linalg.lu_factor", a, false);
  const c10::DeviceGuard guard(a.device());
  const Lu f = lu_factor(a, pivot);
  if (check_errors) check_info("linalg.lu_factor", f.info, "the factorization is singular");
  write_out(lu, f.lu);
  write_out(pivots, f.pivots);
  write_out(info, f.info);
  return {lu, pivots, info};
}

at::Tensor& lu_solve_out(const at::Tensor& lu, const at::Tensor& pivots, const at::Tensor& b,
                         bool left, bool adjoint, at::Tensor& out) {
  check_matrix("linalg.lu_solve", lu, true);
  const c10::DeviceGuard guard(lu.device());
  return write_out(out, solve_with_lu(lu, pivots, b, left, adjoint));
}

// The LU and pivots returned are A's own: linalg.solve's backward solves
// with them (adjoint).
std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> solve_ex_out(
    const at::Tensor& a, const at::Tensor& b, bool left, bool check_errors, at::Tensor& result,
    at::Tensor& lu, at::Tensor& pivots, at::Tensor& info) {
  check_matrix("linalg.solve", a, true);
  const c10::DeviceGuard guard(a.device());
  const Lu f = lu_factor(a, true);
  if (check_errors) {
    check_info("linalg.solve", f.info,
               "The solver failed because the input matrix is singular.");
  }
  const bool vector_case = b.dim() == 1 || (a.dim() - 1 == b.dim() &&
                                            b.sizes() == a.sizes().slice(0, a.dim() - 1));
  const at::Tensor rhs = vector_case ? b.unsqueeze(-1) : b;
  at::Tensor x = solve_with_lu(f.lu, f.pivots, rhs, left, /*adjoint=*/false);
  if (vector_case) x = x.squeeze(-1);
  write_out(result, x);
  write_out(lu, f.lu);
  write_out(pivots, f.pivots);
  write_out(info, f.info);
  return {result, lu, pivots, info};
}

std::tuple<at::Tensor&, at::Tensor&> inv_ex_out(const at::Tensor& a, bool check_errors,
                                                at::Tensor& inverse, at::Tensor& info) {
  check_matrix("linalg.inv", a, true);
  const c10::DeviceGuard guard(a.device());
  const Lu f = lu_factor(a, true);
  if (check_errors) {
    check_info("linalg.inv", f.info, "The diagonal element is zero, the inversion could not "
               "be completed because the input matrix is singular.");
  }
  const at::Tensor eye = at::eye(a.size(-1), a.options());
  write_out(inverse, solve_with_lu(f.lu, f.pivots, eye, true, false));
  write_out(info, f.info);
  return {inverse, info};
}

// det and slogdet factor A^T for a contiguous real A (det(A^T) = det(A)),
// as PyTorch's kernels do and its backward expects.
Lu det_factor(const at::Tensor& a) {
  return lu_factor(a.is_contiguous() && !a.is_complex() ? a.mT() : a, true);
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> det_out(const at::Tensor& a, at::Tensor& result,
                                                          at::Tensor& lu, at::Tensor& pivots) {
  check_matrix("linalg.det", a, true);
  const c10::DeviceGuard guard(a.device());
  const Lu f = det_factor(a);
  const at::Tensor det = f.lu.diagonal(0, -2, -1).prod(-1) * permutation_sign(f.pivots);
  write_out(result, det);
  write_out(lu, f.lu);
  write_out(pivots, f.pivots);
  return {result, lu, pivots};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> slogdet_out(
    const at::Tensor& a, at::Tensor& sign, at::Tensor& logabsdet, at::Tensor& lu,
    at::Tensor& pivots) {
  check_matrix("linalg.slogdet", a, true);
  const c10::DeviceGuard guard(a.device());
  const Lu f = det_factor(a);
  const at::Tensor diag = f.lu.diagonal(0, -2, -1);
  write_out(sign, diag.sign().prod(-1) * permutation_sign(f.pivots));
  write_out(logabsdet, diag.abs().log().sum(-1));
  write_out(lu, f.lu);
  write_out(pivots, f.pivots);
  return {sign, logabsdet, lu, pivots};
}

// -- Cholesky: A = L L^T from A's lower triangle (potrf's 'L').

std::pair<at::Tensor, at::Tensor> cholesky_factor(const at::Tensor& a) {
  const int64_t n = a.size(-1);
  const c10::DimVector batch = batch_of(a);
  const int64_t count = c10::multiply_integers(batch);
  const at::Tensor A = a.reshape({count, n, n});
  at::Tensor l = at::zeros_like(A, at::MemoryFormat::Contiguous);
  at::Tensor info = at::zeros({count}, a.options().dtype(at::kInt));
  for (int64_t j = 0; j < n; ++j) {
    const at::Tensor done = l.select(1, j).narrow(1, 0, j);  // L[j, :j]
    const at::Tensor d = A.select(1, j).select(1, j) - (done * done).sum(1);
    // potrf stops at the first minor that is not positive definite.
    info.copy_(at::where((info == 0) & ~(d > 0), j + 1, info));
    const at::Tensor ljj = d.sqrt();
    l.select(1, j).select(1, j).copy_(ljj);
    if (j + 1 < n) {
      const at::Tensor below = A.select(2, j).narrow(1, j + 1, n - j - 1) -
                               at::matmul(l.narrow(1, j + 1, n - j - 1).narrow(2, 0, j),
                                          done.unsqueeze(2))
                                   .squeeze(2);
      l.select(2, j).narrow(1, j + 1, n - j - 1).copy_(below / ljj.unsqueeze(1));
    }
  }
  c10::DimVector sizes = batch;
  sizes.append({n, n});
  return {l.view(sizes), info.view(batch)};
}

std::tuple<at::Tensor&, at::Tensor&> cholesky_ex_out(const at::Tensor& a, bool upper,
                                                     bool check_errors, at::Tensor& l,
                                                     at::Tensor& info) {
  check_matrix("linalg.cholesky", a, true);
  const c10::DeviceGuard guard(a.device());
  auto [factor, status] = cholesky_factor(a);
  if (check_errors) {
    const int64_t bad = status.numel() == 0 ? 0 : status.max().item<int64_t>();
    TORCH_CHECK_LINALG(bad == 0, "linalg.cholesky: The factorization could not be completed "
                       "because the input is not positive-definite (the leading minor of order ",
                       bad, " is not positive-definite).");
  }
  write_out(l, upper ? factor.mT() : factor);
  write_out(info, status);
  return {l, info};
}

at::Tensor checked_cholesky(const at::Tensor& a, bool upper) {
  at::Tensor l = at::empty({0}, a.options()), info = at::empty({0}, a.options().dtype(at::kInt));
  cholesky_ex_out(a, upper, /*check_errors=*/true, l, info);
  return l;
}

at::Tensor& cholesky_out(const at::Tensor& a, bool upper, at::Tensor& out) {
  return write_out(out, checked_cholesky(a, upper));
}

// B solved against A = L L^T (or U^T U) given the factor.
at::Tensor solve_with_cholesky(const at::Tensor& b, const at::Tensor& factor, bool upper) {
  const c10::DeviceGuard guard(b.device());
  if (upper) {
    const at::Tensor y = solve_triangular_left(factor.mT(), b, false, false);
    return solve_triangular_left(factor, y, true, false);
  }
  const at::Tensor y = solve_triangular_left(factor, b, false, false);
  return solve_triangular_left(factor.mT(), y, true, false);
}

at::Tensor inverse_from_cholesky(const at::Tensor& factor, bool upper) {
  check_matrix("cholesky_inverse", factor, true);
  const at::Tensor eye = at::eye(factor.size(-1), factor.options());
  return solve_with_cholesky(eye.expand(factor.sizes()), factor, upper);
}

at::Tensor& cholesky_inverse_out(const at::Tensor& factor, bool upper, at::Tensor& out) {
  return write_out(out, inverse_from_cholesky(factor, upper));
}

at::Tensor solve_triangular_kernel(const at::Tensor& a, const at::Tensor& b, bool upper,
                                   bool left, bool unitriangular) {
  check_matrix("linalg.solve_triangular", a, true);
  const c10::DeviceGuard guard(a.device());
  return solve_triangular_either_side(a, b, upper, left, unitriangular);
}

at::Tensor& linalg_solve_triangular_out(const at::Tensor& a, const at::Tensor& b, bool upper,
                                        bool left, bool unitriangular, at::Tensor& out) {
  return write_out(out, solve_triangular_kernel(a, b, upper, left, unitriangular));
}

std::tuple<at::Tensor&, at::Tensor&> triangular_solve_out(const at::Tensor& b, const at::Tensor& a,
                                                          bool upper, bool transpose,
                                                          bool unitriangular, at::Tensor& x,
                                                          at::Tensor& m) {
  check_matrix("triangular_solve", a, true);
  const c10::DeviceGuard guard(a.device());
  const at::Tensor coefficients = transpose ? a.mT() : a;
  write_out(x, solve_triangular_left(coefficients, b, transpose ? !upper : upper, unitriangular));
  write_out(m, a.clone());
  return {x, m};
}

// P, L and U of A = P L U from an LU factorization.
Tensors3 unpack(const at::Tensor& lu, const at::Tensor& pivots, bool unpack_data,
                bool unpack_pivots) {
  const int64_t m = lu.size(-2), n = lu.size(-1), k = std::min(m, n);
  at::Tensor p, l, u;
  if (unpack_pivots) {
    // P^T = I[perm], so P = I[perm]^T.
    const at::Tensor perm = permutation_of(pivots, m);
    c10::DimVector sizes(perm.sizes().begin(), perm.sizes().end());
    sizes.push_back(m);
    p = at::eye(m, lu.options()).index_select(0, perm.reshape(-1)).view(sizes).mT();
  }
  if (unpack_data) {
    l = lu.narrow(-1, 0, k).tril(-1) + at::eye(m, k, lu.options());
    u = lu.narrow(-2, 0, k).triu();
  }
  return {p, l, u};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> lu_unpack_out(
    const at::Tensor& lu, const at::Tensor& pivots, bool unpack_data, bool unpack_pivots,
    at::Tensor& p, at::Tensor& l, at::Tensor& u) {
  const c10::DeviceGuard guard(lu.device());
  const auto [pp, ll, uu] = unpack(lu, pivots, unpack_data, unpack_pivots);
  if (unpack_pivots) write_out(p, pp);
  if (unpack_data) {
    write_out(l, ll);
    write_out(u, uu);
  }
  return {p, l, u};
}

std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> linalg_lu_out(const at::Tensor& a, bool pivot,
                                                                at::Tensor& p, at::Tensor& l,
                                                                at::Tensor& u) {
  check_matrix("linalg.lu", a, false);
  const c10::DeviceGuard guard(a.device());
  const Lu f = lu_factor(a, pivot);
  const auto [pp, ll, uu] = unpack(f.lu, f.pivots, true, pivot);
  if (pivot) write_out(p, pp);
  write_out(l, ll);
  write_out(u, uu);
  return {p, l, u};
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("linalg_lu_factor_ex.out", TORCH_FN(lu_factor_ex_out));
  m.impl("linalg_lu_solve.out", TORCH_FN(lu_solve_out));
  m.impl("_linalg_solve_ex.result", TORCH_FN(solve_ex_out));
  m.impl("linalg_inv_ex.inverse", TORCH_FN(inv_ex_out));
  m.impl("_linalg_det.result", TORCH_FN(det_out));
  m.impl("_linalg_slogdet.sign", TORCH_FN(slogdet_out));
  m.impl("linalg_cholesky_ex.L", TORCH_FN(cholesky_ex_out));
  m.impl("cholesky", TORCH_FN(checked_cholesky));
  m.impl("cholesky.out", TORCH_FN(cholesky_out));
  m.impl("_cholesky_solve_helper", TORCH_FN(solve_with_cholesky));
  m.impl("cholesky_inverse", TORCH_FN(inverse_from_cholesky));
  m.impl("cholesky_inverse.out", TORCH_FN(cholesky_inverse_out));
  m.impl("linalg_solve_triangular", TORCH_FN(solve_triangular_kernel));
  m.impl("linalg_solve_triangular.out", TORCH_FN(linalg_solve_triangular_out));
  m.impl("triangular_solve.X", TORCH_FN(triangular_solve_out));
  m.impl("lu_unpack.out", TORCH_FN(lu_unpack_out));
  m.impl("linalg_lu.out", TORCH_FN(linalg_lu_out));
}

}  // namespace
}  // namespace torch_tessera
