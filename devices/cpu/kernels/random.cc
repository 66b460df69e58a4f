// Uniform and Normal on the CPU, from the counter-based Philox generator
// (runtime/random/philox.h): value i depends only on (seed, offset, i), so
// any chunking over threads, and every device, gives the same numbers.
//
// Element i is the flat row-major index, also for a non-contiguous output:
// the iteration keeps row-major order (no dim reordering) and tracks the
// index of each row. The arithmetic of kernel_signatures.h is done in
// double, then converted to the output dtype:
//   uniform: low + (high - low) * U_i, U_i = philox_uniform_float (f32),
//            philox_uniform_float_bits with 11 (f16) or 8 (bf16) bits, or
//            philox_uniform_double (f64);
//   normal:  mean + std * philox_normal(state, i).
// The uniform loops compute each Philox block once for the 4 (float) or 2
// (double) consecutive elements that share it.
#include "devices/cpu/kernels/convert.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/strided_iter.h"
#include "runtime/ops/kernel_signatures.h"

namespace tessera::cpu {
namespace {

// Philox is ~10 rounds of multiplies per block: worth threads sooner than a
// memory-bound loop.
inline constexpr int64_t kRandomGrain = 4096;

template <typename T>
void uniform_row(char* p, int64_t stride, uint64_t i, int64_t n, const PhiloxState& s, double low,
                 double range) {
  int64_t j = 0;
  while (j < n) {
    if constexpr (std::is_same_v<T, double>) {
      const PhiloxBlock b = philox4x32_10(s.seed, s.offset + i / 2, 0);
      for (uint64_t lane = i % 2; lane < 2 && j < n; ++lane, ++j, ++i) {
        const uint64_t bits = ((static_cast<uint64_t>(b[lane * 2]) << 32) | b[lane * 2 + 1]) >> 11;
        const double u = static_cast<double>(bits) * 0x1.0p-53;
        at<T>(p, stride, j) = low + range * u;
      }
    } else {
      // As many random bits as T's significand holds, so U never rounds to 1.
      constexpr int kBits = std::is_same_v<T, Half> ? 11 : std::is_same_v<T, BFloat16> ? 8 : 24;
      const PhiloxBlock b = philox4x32_10(s.seed, s.offset + i / 4, 0);
      for (uint64_t lane = i % 4; lane < 4 && j < n; ++lane, ++j, ++i) {
        const float u = static_cast<float>(b[lane] >> (32 - kBits)) * (1.0f / (1u << kBits));
        at<T>(p, stride, j) = convert<T>(low + range * static_cast<double>(u));
      }
    }
  }
}

template <typename T>
void normal_row(char* p, int64_t stride, uint64_t i, int64_t n, const PhiloxState& s, double mean,
                double std) {
  for (int64_t j = 0; j < n; ++j) {
    at<T>(p, stride, j) = convert<T>(mean + std * philox_normal(s, i + static_cast<uint64_t>(j)));
  }
}

// Calls row(p, stride, flat_index, n) for the rows of out, in parallel.
template <typename Row>
void for_rows_with_index(Tensor& out, const Row& row) {
  StridedIter<1> it({&out}, "random", /*reorder=*/false);
  const std::array<char*, 1> base = {static_cast<char*>(out.data_ptr())};
  parallel_for_range(it.numel(), kRandomGrain, [&](int64_t b, int64_t e) {
    uint64_t index = static_cast<uint64_t>(b);
    it.for_range(base, b, e, [&](char* const* p, const int64_t* s, int64_t n) {
      row(p[0], s[0], index, n);
      index += static_cast<uint64_t>(n);
    });
  });
}

void uniform_kernel(const KernelContext&, Tensor& out, PhiloxState state, double low, double high) {
  TESSERA_CHECK(is_floating(out.dtype()), TypeError, "uniform: the cpu kernel needs a floating dtype, got ",
                describe(out));
  if (out.numel() == 0) return;
  const double range = high - low;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      for_rows_with_index(out, [&](char* p, int64_t stride, uint64_t i, int64_t n) {
        uniform_row<T>(p, stride, i, n, state, low, range);
      });
    }
  });
}

void normal_kernel(const KernelContext&, Tensor& out, PhiloxState state, double mean, double std) {
  TESSERA_CHECK(is_floating(out.dtype()), TypeError, "normal: the cpu kernel needs a floating dtype, got ",
                describe(out));
  if (out.numel() == 0) return;
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      for_rows_with_index(out, [&](char* p, int64_t stride, uint64_t i, int64_t n) {
        normal_row<T>(p, stride, i, n, state, mean, std);
      });
    }
  });
}

}  // namespace

void register_random_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Uniform>(type, &uniform_kernel);
  registry.register_kernel<kernels::Normal>(type, &normal_kernel);
}

}  // namespace tessera::cpu
