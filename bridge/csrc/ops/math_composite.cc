// Tensor math composed of tessera ops, so that it runs on every tessera
// device without the CPU fallback: trace, addbmm, logspace,
// count_nonzero, channel_shuffle, take, renorm, nanmedian, isin,
// searchsorted, bucketize, nonzero_static, repeat_interleave, unique,
// unique_consecutive and histc.
// Arithmetic follows PyTorch's CPU kernels.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

at::Tensor composite_trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim(),
              " (shape ", self.sizes(), ")");
  return self.diagonal().sum();
}

// addbmm: beta * self + alpha * sum_b batch1[b] @ batch2[b]; beta = 0
// ignores self (NaN included), as PyTorch.
at::Tensor composite_addbmm_value(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                        const c10::Scalar& beta, const c10::Scalar& alpha) {
  TORCH_CHECK(batch1.dim() == 3 && batch2.dim() == 3, "addbmm: batch1 and batch2 must be 3-D, got ",
              batch1.sizes(), " and ", batch2.sizes());
  TORCH_CHECK(batch1.size(0) == batch2.size(0) && batch1.size(2) == batch2.size(1),
              "addbmm: batch1 ", batch1.sizes(), " and batch2 ", batch2.sizes(),
              " cannot be multiplied");
  // One GEMM over the batch folded into the inner dimension: sum_b A_b B_b
  // = [A_0 ... A_B] [B_0; ...; B_B].
  const int64_t b = batch1.size(0), n = batch1.size(1), k = batch1.size(2), p = batch2.size(2);
  at::Tensor product = at::mm(batch1.permute({1, 0, 2}).reshape({n, b * k}),
                              batch2.reshape({b * k, p}));
  if (alpha.toComplexDouble() != c10::complex<double>(1, 0)) product = product * alpha;
  if (beta.toComplexDouble() == c10::complex<double>(0, 0)) {
    TORCH_CHECK(at::is_expandable_to(self.sizes(), product.sizes()), "addbmm: self of shape ",
                self.sizes(), " does not broadcast to the product's shape ", product.sizes());
    return product;  // beta = 0 ignores self, NaN included
  }
  const at::Tensor scaled = beta.toComplexDouble() == c10::complex<double>(1, 0) ? self : self * beta;
  return scaled + product;
}

at::Tensor composite_addbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                  const c10::Scalar& beta, const c10::Scalar& alpha) {
  at::Tensor r = composite_addbmm_value(self, batch1, batch2, beta, alpha);
  TORCH_CHECK(r.dim() == 2, "addbmm: self of shape ", self.sizes(),
              " does not broadcast to the product's shape");
  return r.expand({batch1.size(1), batch2.size(2)}).contiguous();
}

at::Tensor& composite_addbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                    const c10::Scalar& beta, const c10::Scalar& alpha) {
  const at::Tensor r = composite_addbmm_value(self, batch1, batch2, beta, alpha);
  TORCH_CHECK(r.sizes() == self.sizes(), "addbmm_: self of shape ", self.sizes(),
              " cannot hold the result of shape ", r.sizes());
  self.copy_(r);
  return self;
}

at::Tensor& composite_addbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                       const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  return write_out(out, composite_addbmm(self, batch1, batch2, beta, alpha));
}

// base ** linspace(start, end, steps), computed in float64 and cast.
at::Tensor& composite_logspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps,
                         double base, at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "logspace: number of steps must be non-negative, got ", steps);
  const c10::DeviceGuard guard(out.device());
  // An integer result takes integer ends, as PyTorch's kernel casts them.
  const bool integral = at::isIntegralType(out.scalar_type(), /*includeBool=*/true);
  const c10::Scalar first = integral ? c10::Scalar(start.toLong()) : start;
  const c10::Scalar last = integral ? c10::Scalar(end.toLong()) : end;
  const at::Tensor exponents = at::linspace(first, last, steps, out.options().dtype(at::kDouble));
  return write_out(out, at::pow(base, exponents).to(out.scalar_type()));
}

at::Tensor composite_count_nonzero(const at::Tensor& self, c10::IntArrayRef dims) {
  return (self != 0).sum(dims);
}

// [N, C, *] -> [N, groups, C / groups, *] -> channels transposed back.
at::Tensor composite_channel_shuffle(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle: expected an input of at least 3 dims, got ",
              self.sizes());
  TORCH_CHECK(groups > 0, "channel_shuffle: number of groups must be positive, got ", groups);
  const int64_t channels = self.size(1);
  TORCH_CHECK(channels % groups == 0, "channel_shuffle: number of channels (", channels,
              ") must be divisible by groups (", groups, ")");
  std::vector<int64_t> split(self.sizes().begin(), self.sizes().end());
  split[1] = channels / groups;
  split.insert(split.begin() + 1, groups);
  return self.reshape(split).transpose(1, 2).contiguous().reshape(self.sizes());
}

// Each slice along dim scaled to p-norm maxnorm when its norm exceeds it.
at::Tensor& composite_renorm_out(const at::Tensor& self, const c10::Scalar& p, int64_t dim,
                       const c10::Scalar& maxnorm, at::Tensor& out) {
  TORCH_CHECK(p.toDouble() > 0, "renorm: non-positive norm not supported (p = ", p.toDouble(), ")");
  TORCH_CHECK(maxnorm.toDouble() >= 0, "renorm: expected maxnorm to be >= 0, got ",
              maxnorm.toDouble());
  TORCH_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim());
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> others;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  const at::Tensor norm = at::linalg_vector_norm(self, p, others, /*keepdim=*/true);
  const double limit = maxnorm.toDouble();
  const at::Tensor factor = at::where(norm > limit, limit / (norm + 1e-7), at::ones_like(norm));
  return write_out(out, self * factor);
}

// The lower median of the non-NaN values of each slice (NaN if all are),
// and its index, from a sort that puts NaNs last.
std::tuple<at::Tensor, at::Tensor> composite_nanmedian_dim(const at::Tensor& self, int64_t dim,
                                                 bool keepdim) {
  const int64_t d = c10::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  const at::Tensor x = self.dim() == 0 ? self.unsqueeze(0) : self;
  TORCH_CHECK(x.size(d) > 0, "nanmedian: cannot compute the median of an empty dimension ", dim,
              " of a tensor of shape ", self.sizes());
  const auto [sorted, order] = x.sort(d);
  const at::Tensor count = (~x.isnan()).sum(d, /*keepdim=*/true);
  const at::Tensor pick = ((count - 1).clamp_min(0)).div(2, "floor");
  at::Tensor values = sorted.gather(d, pick), indices = order.gather(d, pick);
  if (!keepdim || self.dim() == 0) {
    values = values.squeeze(d);
    indices = indices.squeeze(d);
  }
  if (self.dim() == 0) return {values.reshape({}), indices.reshape({})};
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> composite_nanmedian_dim_out(const at::Tensor& self, int64_t dim,
                                                       bool keepdim, at::Tensor& values,
                                                       at::Tensor& indices) {
  const auto [v, i] = composite_nanmedian_dim(self, dim, keepdim);
  write_out(values, v);
  write_out(indices, i);
  return {values, indices};
}

at::Tensor composite_nanmedian_all(const at::Tensor& self) {
  if (self.numel() == 0) return at::full({}, NAN, self.options());
  return std::get<0>(composite_nanmedian_dim(self.reshape(-1), 0, false));
}

// f(part) for consecutive parts of the 1-D `flat`, each short enough that
// a [part, width] comparison holds about 2^24 booleans, into one tensor of
// flat's length and dtype `dtype`.
template <typename F>
at::Tensor in_chunks(const at::Tensor& flat, int64_t width, at::ScalarType dtype, F&& f) {
  at::Tensor result = at::empty({flat.numel()}, flat.options().dtype(dtype));
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 24) / std::max<int64_t>(width, 1));
  for (int64_t start = 0; start < flat.numel(); start += chunk) {
    const int64_t n = std::min(chunk, flat.numel() - start);
    result.narrow(0, start, n).copy_(f(flat.narrow(0, start, n)));
  }
  return result;
}

// elements in test_elements, compared in chunks of elements.
at::Tensor& composite_isin_out(const at::Tensor& elements, const at::Tensor& test_elements,
                     bool /*assume_unique*/, bool invert, at::Tensor& out) {
  const at::Tensor test = test_elements.reshape(-1);
  const at::Tensor found =
      in_chunks(elements.reshape(-1), test.numel(), at::kBool, [&](const at::Tensor& part) {
        const at::Tensor hit = test.numel() == 0
                                   ? at::zeros(part.sizes(), part.options().dtype(at::kBool))
                                   : (part.unsqueeze(1) == test.unsqueeze(0)).any(1);
        return invert ? hit.logical_not() : hit;
      });
  return write_out(out, found.view(elements.sizes()));
}

// searchsorted: for each value, the number of sequence entries before
// which it goes: #{s : !(s >= v)} (left) or #{s : !(s > v)} (right),
// PyTorch's binary-search predicates, so NaN values land at the end. The
// [values, sequence] comparison runs in chunks of values.
at::Tensor search_counts(const at::Tensor& sequence, const at::Tensor& values, bool right) {
  if (sequence.dim() == 1) {
    const at::Tensor s = sequence.unsqueeze(0);
    const at::Tensor counts =
        in_chunks(values.reshape(-1), sequence.numel(), at::kLong, [&](const at::Tensor& part) {
          const at::Tensor v = part.unsqueeze(1);
          return (right ? (s > v).logical_not() : (s >= v).logical_not()).sum(1);
        });
    return counts.view(values.sizes());
  }
  // Batched rows: sequence [..., M], values [..., N] with the same leading dims.
  const at::Tensor s = sequence.unsqueeze(-2), v = values.unsqueeze(-1);
  return (right ? (s > v).logical_not() : (s >= v).logical_not()).sum(-1);
}

at::Tensor composite_searchsorted(const at::Tensor& sorted_sequence, const at::Tensor& self,
                                  bool out_int32, bool right, std::optional<c10::string_view> side,
                                  const std::optional<at::Tensor>& sorter) {
  TORCH_CHECK(sorted_sequence.dim() >= 1, "searchsorted: the sorted sequence must have at least "
              "one dimension, got ", sorted_sequence.sizes());
  TORCH_CHECK(sorted_sequence.dim() == 1 ||
                  (sorted_sequence.dim() == self.dim() &&
                   sorted_sequence.sizes().slice(0, self.dim() - 1) ==
                       self.sizes().slice(0, self.dim() - 1)),
              "searchsorted: boundaries of shape ", sorted_sequence.sizes(),
              " must be 1-D or match the input's leading dims (input ", self.sizes(), ")");
  if (side.has_value()) {
    TORCH_CHECK(*side == "left" || *side == "right", "searchsorted: side can only be 'left' or "
                "'right' but got ", *side);
    TORCH_CHECK(!right || *side == "right", "searchsorted: side and right can't be set to "
                "opposites, got side of left while right was True");
    right = *side == "right";
  }
  at::Tensor sequence = sorted_sequence;
  if (sorter.has_value() && sorter->defined()) sequence = sequence.gather(-1, *sorter);
  const at::Tensor counts = search_counts(sequence, self, right);
  return out_int32 ? counts.to(at::kInt) : counts;
}

at::Tensor composite_bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                               bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "bucketize: boundaries tensor must be 1 dimension, but got "
              "dim(", boundaries.dim(), ")");
  const at::Tensor counts = search_counts(boundaries, self, right);
  return out_int32 ? counts.to(at::kInt) : counts;
}

// nonzero, cut or padded with fill_value to `size` rows.
at::Tensor composite_nonzero_static(const at::Tensor& self, c10::SymInt size, int64_t fill_value) {
  const int64_t rows = size.expect_int();
  TORCH_CHECK(rows >= 0, "nonzero_static: 'size' must be an non-negative integer, got ", rows);
  const at::Tensor found = at::nonzero(self);
  const int64_t kept = std::min<int64_t>(rows, found.size(0));
  at::Tensor out = at::full({rows, self.dim()}, fill_value, found.options());
  if (kept > 0) out.narrow(0, 0, kept).copy_(found.narrow(0, 0, kept));
  return out;
}

// repeat_interleave(repeats): index i repeated repeats[i] times, as the
// bucket of each output position among the running totals.
at::Tensor composite_repeat_interleave(const at::Tensor& repeats,
                                       std::optional<c10::SymInt> output_size) {
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got ",
              repeats.sizes());
  TORCH_CHECK(repeats.scalar_type() == at::kLong || repeats.scalar_type() == at::kInt,
              "repeat_interleave: repeats has to be Long or Int tensor, got ",
              repeats.scalar_type());
  if (repeats.numel() == 0) return at::empty({0}, repeats.options().dtype(at::kLong));
  TORCH_CHECK((repeats >= 0).all().item<bool>(), "repeat_interleave: repeats can not be negative");
  const at::Tensor totals = repeats.to(at::kLong).cumsum(0);
  const int64_t total = totals[-1].item<int64_t>();
  if (output_size.has_value()) {
    TORCH_CHECK(output_size->expect_int() == total, "repeat_interleave: allocated size does not "
                "match required size (", output_size->expect_int(), " vs ", total, ")");
  }
  const at::Tensor positions = at::arange(total, totals.options());
  return search_counts(totals, positions, /*right=*/true);
}

// unique / unique_consecutive of the flattened tensor: runs of equal
// values in `flat` (sorted for unique), their first elements, each
// element's run, and run lengths. NaNs never equal each other, so each
// is its own run, as on the CPU.
using UniqueResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

UniqueResult runs_of(const at::Tensor& flat, const at::Tensor& order, const at::Tensor& self,
                     bool return_inverse, bool return_counts) {
  const int64_t n = flat.numel();
  const auto index_options = flat.options().dtype(at::kLong);
  if (n == 0) {
    return {flat.clone(), at::empty(return_inverse ? self.sizes() : c10::IntArrayRef{0},
                                    index_options),
            at::empty({0}, index_options)};
  }
  at::Tensor first = at::ones({n}, flat.options().dtype(at::kBool));
  if (n > 1) first.narrow(0, 1, n - 1).copy_(flat.narrow(0, 1, n - 1) != flat.narrow(0, 0, n - 1));
  const at::Tensor values = flat.masked_select(first);
  at::Tensor inverse = at::empty({0}, index_options), counts = at::empty({0}, index_options);
  if (return_inverse) {
    const at::Tensor run = first.to(at::kLong).cumsum(0) - 1;
    inverse = order.defined() ? at::empty({n}, index_options).scatter_(0, order, run) : run;
    inverse = inverse.view(self.sizes());
  }
  if (return_counts) {
    const at::Tensor starts = first.nonzero().squeeze(1);
    const at::Tensor ends = at::cat({starts.narrow(0, 1, starts.numel() - 1),
                                     at::full({1}, n, index_options)});
    counts = ends - starts;
  }
  return {values, inverse, counts};
}

UniqueResult composite_unique2(const at::Tensor& self, bool /*sorted*/, bool return_inverse,
                               bool return_counts) {
  const auto [sorted_values, order] = self.reshape(-1).sort(/*stable=*/true, 0, false);
  return runs_of(sorted_values, order, self, return_inverse, return_counts);
}

UniqueResult composite_unique_consecutive(const at::Tensor& self, bool return_inverse,
                                          bool return_counts, std::optional<int64_t> dim) {
  if (dim.has_value() && self.dim() > 1) {
    return call_cpu_fallback<UniqueResult, const at::Tensor&, bool, bool, std::optional<int64_t>>(
        "unique_consecutive", self, return_inverse, return_counts, dim);
  }
  return runs_of(self.reshape(-1), at::Tensor(), self, return_inverse, return_counts);
}

// histc: counts of self's elements in `bins` equal bins over [min, max]
// (both equal: the data's own range, widened by 1 each way if that is a
// single value). Elements outside the range and NaN are not counted; max
// itself counts in the last bin. Floating inputs bin as PyTorch's CPU
// kernel does, in the input's dtype: floor((x - min) * bins / (max - min)).
// Integer inputs, which the CPU kernel refuses but CUDA's takes (Hugging
// Face's mixture-of-experts layers count tokens per expert with an int
// histc on every device but cpu and mps), bin as CUDA's, in int64. The
// counts have self's dtype. Out-of-range elements go to an extra bin that
// is cut off, so nothing waits for the device but the data's range.
at::Tensor composite_histc(const at::Tensor& self, int64_t bins, const c10::Scalar& min,
                           const c10::Scalar& max) {
  const c10::ScalarType dtype = self.scalar_type();
  TORCH_CHECK(bins > 0, "torch.histc: bins must be > 0, but got ", bins, " (input of shape ",
              self.sizes(), ")");
  TORCH_CHECK(!at::isComplexType(dtype) && dtype != at::kBool, "torch.histc: not implemented for ",
              dtype, " (input of shape ", self.sizes(), " on ", self.device(), ")");
  const bool integral = at::isIntegralType(dtype, /*includeBool=*/false);
  double lo = integral ? static_cast<double>(min.to<int64_t>()) : min.toDouble();
  double hi = integral ? static_cast<double>(max.to<int64_t>()) : max.toDouble();
  if (lo == hi && self.numel() > 0) {
    const auto [smallest, largest] = at::aminmax(self);
    lo = smallest.item<double>();
    hi = largest.item<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi,
              "] is not finite (input of shape ", self.sizes(), ", dtype ", dtype, ")");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min (min ", lo, ", max ", hi, ")");

  const at::Tensor x = self.reshape(-1);
  at::Tensor in_range, bin;
  if (integral) {
    const int64_t low = static_cast<int64_t>(lo), width = static_cast<int64_t>(hi) - low;
    in_range = x.ge(low).logical_and_(x.le(static_cast<int64_t>(hi)));
    bin = x.to(at::kLong).sub_(low).mul_(bins).div_(width, "floor");
  } else {
    // The range's ends and width rounded to the input's dtype and each
    // step rounded to it, as the CPU kernel's arithmetic in that type (a
    // half input's bins differ otherwise). Ends that round to one value
    // give 0 / 0 for the elements equal to it: bin 0, as there.
    const auto rounded = [dtype](double v) { return at::scalar_tensor(v, dtype).item<double>(); };
    const double low = rounded(lo), high = rounded(hi), width = rounded(high - low);
    in_range = x.ge(low).logical_and_(x.le(high));  // NaN: false
    bin = x.sub(low).mul_(bins).div_(width).floor_().nan_to_num_(0);
  }
  bin = at::where(in_range, bin.clamp_(0, bins - 1), bins).to(at::kLong);
  // Counted exactly, then rounded once: a half or bfloat16 bin past 2048
  // or 256 holds the nearest value to its count (the CPU kernel's running
  // sum in that dtype stops growing there).
  const auto count_options = self.options().dtype(at::kLong);
  at::Tensor counts = at::zeros({bins + 1}, count_options);
  counts.index_add_(0, bin, at::ones({x.numel()}, count_options));
  return counts.narrow(0, 0, bins).to(dtype);
}

at::Tensor& composite_histc_out(const at::Tensor& self, int64_t bins, const c10::Scalar& min,
                                const c10::Scalar& max, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "torch.histc: out has dtype ",
              out.scalar_type(), " but the input has ", self.scalar_type());
  return write_out(out, composite_histc(self, bins, min, max));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_unique2", TORCH_FN(composite_unique2));
  m.impl("unique_consecutive", TORCH_FN(composite_unique_consecutive));
  m.impl("searchsorted.Tensor", TORCH_FN(composite_searchsorted));
  m.impl("bucketize.Tensor", TORCH_FN(composite_bucketize));
  m.impl("nonzero_static", TORCH_FN(composite_nonzero_static));
  m.impl("repeat_interleave.Tensor", TORCH_FN(composite_repeat_interleave));
  m.impl("trace", TORCH_FN(composite_trace));
  m.impl("histc", TORCH_FN(composite_histc));
  m.impl("histc.out", TORCH_FN(composite_histc_out));
  m.impl("addbmm", TORCH_FN(composite_addbmm));
  m.impl("addbmm_", TORCH_FN(composite_addbmm_));
  m.impl("addbmm.out", TORCH_FN(composite_addbmm_out));
  m.impl("logspace.out", TORCH_FN(composite_logspace_out));
  m.impl("count_nonzero.dim_IntList", TORCH_FN(composite_count_nonzero));
  m.impl("channel_shuffle", TORCH_FN(composite_channel_shuffle));
  m.impl("renorm.out", TORCH_FN(composite_renorm_out));
  m.impl("nanmedian.dim", TORCH_FN(composite_nanmedian_dim));
  m.impl("nanmedian.dim_values", TORCH_FN(composite_nanmedian_dim_out));
  m.impl("nanmedian", TORCH_FN(composite_nanmedian_all));
  m.impl("isin.Tensor_Tensor_out", TORCH_FN(composite_isin_out));
}

}  // namespace
}  // namespace torch_tessera
