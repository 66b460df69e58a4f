// Sort and Nonzero on the CPU.
//
// Sort copies each slice along dim into a buffer of (value, index) pairs in
// the compute type, sorts it (NaN greatest, as PyTorch) with ties broken by
// index, and writes the first k values and indices back; slices run in
// parallel. Breaking ties by index gives the stable order whatever the
// algorithm, so std::sort serves stable and unstable requests alike (one
// order keeps results reproducible), and topk's k < n uses
// std::partial_sort: O(n log k) instead of a full sort.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Element offsets (in elements) of slice s of t along dim, for every
// tensor sharing t's sizes: the coordinates of s over the other dims.
int64_t slice_offset(const Tensor& t, int64_t dim, int64_t s) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (d == dim) continue;
    const int64_t n = t.size(d);
    off += (s % n) * t.stride(d);
    s /= n;
  }
  return off;
}

void sort_kernel(const KernelContext&, Tensor& values, Tensor& indices, const Tensor& self,
                 int64_t dim, bool descending, bool /*stable*/) {
  if (self.numel() == 0) return;
  const int64_t len = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t k = self.dim() == 0 ? 1 : values.size(dim);
  const int64_t slices = self.numel() / len;
  if (k == 0) return;
  const int64_t in_stride = self.dim() == 0 ? 0 : self.stride(dim);
  const int64_t v_stride = self.dim() == 0 ? 0 : values.stride(dim);
  const int64_t i_stride = self.dim() == 0 ? 0 : indices.stride(dim);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;
    const T* in = self.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    // Slices per task: about 64K elements of work each.
    const int64_t per_task = std::max<int64_t>(1, 65536 / std::max<int64_t>(len, 1));
    const int64_t tasks = (slices + per_task - 1) / per_task;
    parallel_for_each(tasks, [&](int64_t task) {
      std::vector<std::pair<C, int64_t>> buf(static_cast<size_t>(len));
      const int64_t end = std::min(slices, (task + 1) * per_task);
      for (int64_t s = task * per_task; s < end; ++s) {
        const int64_t in_off = self.dim() == 0 ? 0 : slice_offset(self, dim, s);
        for (int64_t j = 0; j < len; ++j) {
          buf[j] = {static_cast<C>(in[in_off + j * in_stride]), j};
        }
        auto mid = buf.begin() + k;
        auto order = [&](auto&& before) {
          auto cmp = [&](const auto& a, const auto& b) {
            if (before(a.first, b.first)) return true;
            if (before(b.first, a.first)) return false;
            return a.second < b.second;
          };
          if (k < len) {
            std::partial_sort(buf.begin(), mid, buf.end(), cmp);
          } else {
            std::sort(buf.begin(), buf.end(), cmp);
          }
        };
        if (descending) {
          order([](C a, C b) { return (is_nan(a) && !is_nan(b)) || a > b; });
        } else {
          order([](C a, C b) { return (!is_nan(a) && is_nan(b)) || a < b; });
        }
        const int64_t v_off = self.dim() == 0 ? 0 : slice_offset(values, dim, s);
        const int64_t i_off = self.dim() == 0 ? 0 : slice_offset(indices, dim, s);
        for (int64_t j = 0; j < k; ++j) {
          vout[v_off + j * v_stride] = convert<T>(buf[j].first);
          iout[i_off + j * i_stride] = buf[j].second;
        }
      }
    });
  });
}

// Two passes over chunks of the row-major order, in parallel: count the
// nonzeros of each chunk, then write each chunk's coordinates from its
// prefix-sum offset, so the output order is row-major whatever the threads.
void nonzero_kernel(const KernelContext&, Tensor& out, const Tensor& self) {
  const int64_t n = out.size(0);
  if (n == 0) return;
  const int64_t ndim = self.dim();
  int64_t* o = out.data<int64_t>();
  const int64_t os0 = out.stride(0), os1 = ndim > 0 ? out.stride(1) : 0;
  StridedIter<1> it({&self}, "nonzero", /*reorder=*/false);
  const std::array<char*, 1> base = {static_cast<char*>(self.data_ptr())};
  const int64_t total = it.numel();
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(total / 65536, 4 * max_threads()));
  const int64_t per = (total + chunks - 1) / chunks;
  std::vector<int64_t> counts(static_cast<size_t>(chunks) + 1, 0);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    parallel_for_each(chunks, [&](int64_t c) {
      int64_t count = 0;
      it.for_range(base, c * per, std::min(total, (c + 1) * per),
                   [&](char* const* p, const int64_t* s, int64_t cnt) {
                     for (int64_t i = 0; i < cnt; ++i) count += convert<bool>(at<T>(p[0], s[0], i));
                   });
      counts[c + 1] = count;
    });
    for (int64_t c = 0; c < chunks; ++c) counts[c + 1] += counts[c];
    parallel_for_each(chunks, [&](int64_t c) {
      int64_t flat = c * per, row = counts[c];
      it.for_range(base, c * per, std::min(total, (c + 1) * per),
                   [&](char* const* p, const int64_t* s, int64_t cnt) {
                     for (int64_t i = 0; i < cnt; ++i, ++flat) {
                       if (!convert<bool>(at<T>(p[0], s[0], i))) continue;
                       if (row >= n) return;  // never more than the front end counted
                       int64_t rem = flat;
                       for (int64_t d = ndim - 1; d >= 0; --d) {
                         const int64_t sz = self.size(d);
                         o[row * os0 + d * os1] = rem % sz;
                         rem /= sz;
                       }
                       ++row;
                     }
                   });
    });
  });
}

}  // namespace

void register_indexing_sort_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Sort>(type, &sort_kernel);
  registry.register_kernel<kernels::Nonzero>(type, &nonzero_kernel);
}

}  // namespace tessera::cpu
