// torch.fft on tessera as discrete Fourier transforms by matrix product:
// along each transformed dim of length n, the signal times the n x n (or
// n x (n/2 + 1)) matrix of twiddles exp(-+2 pi i j k / n). That is O(n^2)
// work per transform against an FFT's O(n log n), but it is GEMM work,
// which every device runs at its best, and the sizes models transform
// (STFT windows of 400 to 2048, spectral layers of a few hundred) keep it
// fast. Lengths above kMaxLength run through the CPU fallback, whose
// pocketfft/MKL is then the better choice.
//
// The twiddle matrices are built on the host in float64 (j k reduced mod n
// first, so large products lose nothing) and cached there per dtype and
// length; each transform copies the ones it uses to its device (device
// memory then holds nothing between calls).
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

constexpr int64_t kMaxLength = 4096;

// fft_norm_mode: 0 none, 1 divide by sqrt(n), 2 divide by n.
double norm_scale(int64_t normalization, double n) {
  switch (normalization) {
    case 0: return 1.0;
    case 1: return 1.0 / std::sqrt(n);
    case 2: return 1.0 / n;
    default: break;
  }
  TORCH_CHECK(false, "fft: unknown normalization mode ", normalization);
}

enum class Twiddle { kCos, kSin };

// [rows, cols] with entry (j, k) = cos or sin(2 pi j k / n), times
// weight(j) when weighted (the inverse real transform's 1, 2, ..., 2, 1).
at::Tensor twiddles(Twiddle kind, int64_t n, int64_t rows, int64_t cols, bool hermitian_weights,
                    c10::ScalarType dtype, c10::Device device) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t, bool, int>;
  static std::mutex mutex;
  static std::map<Key, at::Tensor> cache;
  const Key key{static_cast<int>(kind), n, rows, cols, hermitian_weights,
                static_cast<int>(dtype)};
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second.to(device);
  at::Tensor host = at::empty({rows, cols}, at::TensorOptions().dtype(at::kDouble));
  double* p = host.data_ptr<double>();
  for (int64_t j = 0; j < rows; ++j) {
    const double weight = !hermitian_weights || j == 0 || 2 * j == n ? 1.0 : 2.0;
    for (int64_t k = 0; k < cols; ++k) {
      const double angle = 2.0 * M_PI * static_cast<double>((j * k) % n) / static_cast<double>(n);
      p[j * cols + k] = weight * (kind == Twiddle::kCos ? std::cos(angle) : std::sin(angle));
    }
  }
  // Bounded: lengths are few in practice; matrices past 16 MiB (n > 2048
  // in float32) are rebuilt per call rather than held.
  if (cache.size() >= 16) cache.clear();
  const at::Tensor typed = host.to(dtype);
  if (typed.nbytes() <= (size_t{16} << 20)) cache.emplace(key, typed);
  return typed.to(device);
}

bool too_long(const at::Tensor& self, c10::IntArrayRef dims, int64_t last_length = 0) {
  for (const int64_t d : dims) {
    if (self.size(c10::maybe_wrap_dim(d, self.dim())) > kMaxLength) return true;
  }
  return last_length > kMaxLength;
}

// The complex DFT along one dim (forward: exp(-i...), inverse: exp(+i...)),
// unnormalized: y = x (C -+ iS).
at::Tensor c2c_along(const at::Tensor& x, int64_t dim, bool forward) {
  const int64_t n = x.size(dim);
  if (n == 0) return x.clone();
  const c10::ScalarType real = c10::toRealValueType(x.scalar_type());
  const at::Tensor cos = twiddles(Twiddle::kCos, n, n, n, false, real, x.device());
  const at::Tensor sin = twiddles(Twiddle::kSin, n, n, n, false, real, x.device());
  const at::Tensor moved = x.movedim(dim, -1);
  const at::Tensor re = at::real(moved), im = at::imag(moved);
  // forward: (a + ib)(c - is) = (ac + bs) + i(bc - as); inverse: s -> -s.
  const double sign = forward ? 1.0 : -1.0;
  const at::Tensor out_re = at::matmul(re, cos) + sign * at::matmul(im, sin);
  const at::Tensor out_im = at::matmul(im, cos) - sign * at::matmul(re, sin);
  return at::complex(out_re, out_im).movedim(-1, dim);
}

at::Tensor scaled(const at::Tensor& y, double scale) { return scale == 1.0 ? y : y * scale; }

std::vector<int64_t> wrapped(c10::IntArrayRef dims, int64_t rank) {
  std::vector<int64_t> out;
  for (const int64_t d : dims) out.push_back(c10::maybe_wrap_dim(d, rank));
  return out;
}

double length_product(const at::Tensor& x, const std::vector<int64_t>& dims) {
  double n = 1;
  for (const int64_t d : dims) n *= static_cast<double>(x.size(d));
  return n;
}

at::Tensor fft_c2c(const at::Tensor& self, c10::SymIntArrayRef sym_dim, int64_t normalization,
                   bool forward) {
  const c10::IntArrayRef dim = C10_AS_INTARRAYREF_SLOW(sym_dim);
  if (too_long(self, dim)) {
    return call_cpu_fallback<at::Tensor, const at::Tensor&, c10::SymIntArrayRef, int64_t, bool>(
        "_fft_c2c", self, sym_dim, normalization, forward);
  }
  const c10::DeviceGuard guard(self.device());
  const std::vector<int64_t> dims = wrapped(dim, self.dim());
  at::Tensor y = self.resolve_conj();
  for (const int64_t d : dims) y = c2c_along(y, d, forward);
  if (dims.empty()) y = y.clone();
  return scaled(y, norm_scale(normalization, length_product(self, dims)));
}

at::Tensor fft_r2c(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization,
                   bool onesided) {
  if (too_long(self, dim)) {
    return call_cpu_fallback<at::Tensor, const at::Tensor&, c10::IntArrayRef, int64_t, bool>(
        "_fft_r2c", self, dim, normalization, onesided);
  }
  TORCH_CHECK(!dim.empty(), "fft: r2c needs at least one dim");
  const c10::DeviceGuard guard(self.device());
  const std::vector<int64_t> dims = wrapped(dim, self.dim());
  const int64_t last = dims.back();
  const int64_t n = self.size(last);
  const int64_t kept = onesided ? n / 2 + 1 : n;
  at::Tensor y;
  if (n == 0) {
    std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
    sizes[last] = 0;
    y = at::zeros(sizes, self.options().dtype(c10::toComplexType(self.scalar_type())));
  } else {
    const at::Tensor cos =
        twiddles(Twiddle::kCos, n, n, kept, false, self.scalar_type(), self.device());
    const at::Tensor sin =
        twiddles(Twiddle::kSin, n, n, kept, false, self.scalar_type(), self.device());
    const at::Tensor moved = self.movedim(last, -1);
    y = at::complex(at::matmul(moved, cos), -at::matmul(moved, sin)).movedim(-1, last);
  }
  for (size_t i = 0; i + 1 < dims.size(); ++i) y = c2c_along(y, dims[i], /*forward=*/true);
  return scaled(y, norm_scale(normalization, length_product(self, dims)));
}

at::Tensor fft_c2r(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization,
                   c10::SymInt sym_last_dim_size) {
  const int64_t n = sym_last_dim_size.expect_int();
  if (too_long(self, dim, n)) {
    return call_cpu_fallback<at::Tensor, const at::Tensor&, c10::IntArrayRef, int64_t, c10::SymInt>(
        "_fft_c2r", self, dim, normalization, sym_last_dim_size);
  }
  TORCH_CHECK(!dim.empty(), "fft: c2r needs at least one dim");
  TORCH_CHECK(n >= 1, "fft: invalid number of data points (", n, ") specified");
  const c10::DeviceGuard guard(self.device());
  const std::vector<int64_t> dims = wrapped(dim, self.dim());
  at::Tensor x = self.resolve_conj();
  for (size_t i = 0; i + 1 < dims.size(); ++i) x = c2c_along(x, dims[i], /*forward=*/false);
  const int64_t last = dims.back();
  // The first n/2 + 1 bins (the rest is their Hermitian mirror): x_t =
  // sum_k w_k (Re X_k cos(2 pi k t / n) - Im X_k sin(2 pi k t / n)), with
  // w = 1 for the bins that are their own mirror (0, n/2) and 2 otherwise.
  const int64_t bins = std::min(x.size(last), n / 2 + 1);
  const c10::ScalarType real = c10::toRealValueType(x.scalar_type());
  const at::Tensor cos = twiddles(Twiddle::kCos, n, bins, n, true, real, x.device());
  const at::Tensor sin = twiddles(Twiddle::kSin, n, bins, n, true, real, x.device());
  const at::Tensor moved = x.movedim(last, -1).narrow(-1, 0, bins);
  at::Tensor y = (at::matmul(at::real(moved), cos) - at::matmul(at::imag(moved), sin))
                     .movedim(-1, last);
  double count = static_cast<double>(n);
  for (size_t i = 0; i + 1 < dims.size(); ++i) count *= static_cast<double>(self.size(dims[i]));
  return scaled(y, norm_scale(normalization, count)).contiguous();
}

at::Tensor& fft_c2c_out(const at::Tensor& self, c10::SymIntArrayRef dim, int64_t normalization,
                        bool forward, at::Tensor& out) {
  return write_out(out, fft_c2c(self, dim, normalization, forward));
}

at::Tensor& fft_r2c_out(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization,
                        bool onesided, at::Tensor& out) {
  return write_out(out, fft_r2c(self, dim, normalization, onesided));
}

at::Tensor& fft_c2r_out(const at::Tensor& self, c10::IntArrayRef dim, int64_t normalization,
                        c10::SymInt last_dim_size, at::Tensor& out) {
  return write_out(out, fft_c2r(self, dim, normalization, std::move(last_dim_size)));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl_complex_aware("_fft_c2c", TORCH_FN(fft_c2c));
  m.impl_complex_aware("_fft_c2c.out", TORCH_FN(fft_c2c_out));
  m.impl_complex_aware("_fft_r2c", TORCH_FN(fft_r2c));
  m.impl_complex_aware("_fft_r2c.out", TORCH_FN(fft_r2c_out));
  m.impl_complex_aware("_fft_c2r", TORCH_FN(fft_c2r));
  m.impl_complex_aware("_fft_c2r.out", TORCH_FN(fft_c2r_out));
}

}  // namespace
}  // namespace torch_tessera
