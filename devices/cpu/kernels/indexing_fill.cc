// MaskedFill, Triangle, Linspace, Randint and Bernoulli on the CPU: the
// kernels of the indexing family that write values computed from the
// position (or the Philox counter) of each element.
#include <algorithm>
#include <cmath>
#include <limits>

#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/philox_lanes.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

inline constexpr int64_t kRandomGrain = 4096;
// Philox blocks computed per run of bernoulli_kernel, and the elements
// of a run: whichever element it starts at, their blocks fit.
inline constexpr int64_t kBlocksPerRun = 256;
inline constexpr int64_t kRunElements = 2 * kBlocksPerRun - 2;

// The 64-bit value of element i from the words of its Philox block
// (offset + i / 2): lanes 2 (i % 2) and 2 (i % 2) + 1, high lane first.
inline uint64_t paired_bits(const uint32_t* block, uint64_t i) {
  const int lane = static_cast<int>(i % 2) * 2;
  return (static_cast<uint64_t>(block[lane]) << 32) | block[lane + 1];
}

// Element i's value, block by block: consecutive elements share a block,
// which is computed once for both.
class PairedBlocks {
 public:
  explicit PairedBlocks(const PhiloxState& s) : s_(s) {}
  uint64_t bits64(uint64_t i) {
    if (i / 2 != cached_) {
      cached_ = i / 2;
      block_ = philox4x32_10(s_.seed, s_.offset + cached_, 0);
    }
    return paired_bits(block_.data(), i);
  }

 private:
  PhiloxState s_;
  uint64_t cached_ = ~uint64_t{0};
  PhiloxBlock block_{};
};

void masked_fill_kernel(const KernelContext&, Tensor& self, const Tensor& mask, Scalar value) {
  if (self.numel() == 0) return;
  StridedIter<2> it({&self, &mask}, "masked_fill");
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    it.run({static_cast<char*>(self.data_ptr()), static_cast<char*>(mask.data_ptr())},
           [v](char* const* p, const int64_t* s, int64_t n) {
             for (int64_t i = 0; i < n; ++i) {
               if (at<bool>(p[1], s[1], i)) at<T>(p[0], s[0], i) = v;
             }
           });
  });
}

// Runs row(ptrs, strides, flat_index, n) over the rows of a row-major
// iteration of N operands, in parallel, with the flat index of each row.
template <int N, typename Row>
void for_rows_with_index(const StridedIter<N>& it, const std::array<char*, N>& base,
                         int64_t grain, const Row& row) {
  parallel_for_range(it.numel(), grain, [&](int64_t b, int64_t e) {
    int64_t index = b;
    it.for_range(base, b, e, [&](char* const* p, const int64_t* s, int64_t n) {
      row(p, s, index, n);
      index += n;
    });
  });
}

void triangle_kernel(const KernelContext&, Tensor& out, const Tensor& in, int64_t diagonal,
                     bool upper) {
  if (out.numel() == 0) return;
  const int64_t rows = out.size(-2), cols = out.size(-1);
  StridedIter<2> it({&out, &in}, "triangle", /*reorder=*/false);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for_rows_with_index<2>(
        it, {static_cast<char*>(out.data_ptr()), static_cast<char*>(in.data_ptr())},
        kElementwiseGrain, [&](char* const* p, const int64_t* s, int64_t index, int64_t n) {
          int64_t j = index % cols, i = (index / cols) % rows;
          for (int64_t e = 0; e < n; ++e) {
            const bool keep = upper ? (j - i >= diagonal) : (j - i <= diagonal);
            at<T>(p[0], s[0], e) = keep ? at<T>(p[1], s[1], e) : convert<T>(0);
            if (++j == cols) {
              j = 0;
              if (++i == rows) i = 0;
            }
          }
        });
  });
}

void linspace_kernel(const KernelContext&, Tensor& out, double start, double end) {
  const int64_t n = out.numel();
  if (n == 0) return;
  char* base = static_cast<char*>(out.data_ptr());
  const int64_t stride = out.stride(0) * static_cast<int64_t>(out.itemsize());
  const double step = n > 1 ? (end - start) / static_cast<double>(n - 1) : 0.0;
  const int64_t half = n / 2;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    parallel_for_range(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        // Each a multiply-add rounded once, as PyTorch's CPU kernel (and
        // whatever the compiler's contraction flags).
        const double v = (i < half || n == 1)
                             ? std::fma(step, static_cast<double>(i), start)
                             : std::fma(-step, static_cast<double>(n - 1 - i), end);
        if constexpr (is_int_v<T>) {
          at<T>(base, stride, i) = static_cast<T>(static_cast<int64_t>(v));
        } else {
          at<T>(base, stride, i) = convert<T>(v);
        }
      }
    });
  });
}

void randint_kernel(const KernelContext&, Tensor& out, PhiloxState state, int64_t low,
                    uint64_t range) {
  if (out.numel() == 0) return;
  StridedIter<1> it({&out}, "randint", /*reorder=*/false);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for_rows_with_index<1>(
        it, {static_cast<char*>(out.data_ptr())}, kRandomGrain,
        [&](char* const* p, const int64_t* s, int64_t index, int64_t n) {
          PairedBlocks blocks(state);
          for (int64_t e = 0; e < n; ++e) {
            const uint64_t r = blocks.bits64(static_cast<uint64_t>(index + e));
            const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
            at<T>(p[0], s[0], e) = convert<T>(v);
          }
        });
  });
}

void bernoulli_kernel(const KernelContext&, Tensor& out, const Tensor& p, PhiloxState state) {
  if (out.numel() == 0) return;
  StridedIter<2> it({&out, &p}, "bernoulli", /*reorder=*/false);
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    dispatch_dtype(p.dtype(), [&](auto ptag) {
      using P = decltype(ptag);
      if constexpr (is_float_v<P>) {
        for_rows_with_index<2>(
            it, {static_cast<char*>(out.data_ptr()), static_cast<char*>(p.data_ptr())},
            kRandomGrain, [&](char* const* ptr, const int64_t* s, int64_t index, int64_t n) {
              // The blocks of elements [index, index + n) (two an element
              // pair), a run at a time in vector lanes.
              uint32_t words[4 * kBlocksPerRun];
              for (int64_t e0 = 0; e0 < n; e0 += kRunElements) {
                const int64_t first = index + e0, last = std::min(index + n, first + kRunElements);
                const uint64_t block0 = static_cast<uint64_t>(first) / 2;
                philox_blocks(state.seed, state.offset + block0,
                              static_cast<int64_t>(static_cast<uint64_t>(last - 1) / 2 - block0 + 1),
                              words);
                for (int64_t i = first; i < last; ++i) {
                  // As philox_uniform_double(state, i): 53 bits of the pair.
                  const uint64_t element = static_cast<uint64_t>(i);
                  const uint64_t bits = paired_bits(words + 4 * (element / 2 - block0), element);
                  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
                  const int64_t e = i - index;
                  const double prob =
                      static_cast<double>(static_cast<compute_t<P>>(at<P>(ptr[1], s[1], e)));
                  at<T>(ptr[0], s[0], e) = convert<T>(u < prob ? 1 : 0);
                }
              }
            });
      }
    });
  });
}

}  // namespace

void register_indexing_fill_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::MaskedFill>(type, &masked_fill_kernel);
  registry.register_kernel<kernels::Triangle>(type, &triangle_kernel);
  registry.register_kernel<kernels::Linspace>(type, &linspace_kernel);
  registry.register_kernel<kernels::Randint>(type, &randint_kernel);
  registry.register_kernel<kernels::Bernoulli>(type, &bernoulli_kernel);
}

}  // namespace tessera::cpu
