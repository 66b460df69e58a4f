// Convolution as GEMMs over unfolded patches (see conv_gemm.h).
//
// For group grp of image n, with K = cin_g * kh * kw rows of patches and
// P = oh * ow output positions, the unfolded patches col [K, P] give
//   forward:          y[n, grp]  (M x P) = w[grp] (M x K) col
//   backward data:    col = w[grp]^T gy[n, grp], folded back into gx[n, grp]
//   backward weights: gw[grp] (M x K) += gy[n, grp] col^T, over n
// where M = cout / groups. Each GEMM is one oneDNN sgemm on the calling
// thread; the tasks are (image, group, block of output rows) forward,
// (image, group) for the input gradient (its blocks of output rows overlap
// in the input and fold in order) and (group, block of K rows) for the
// weight gradient (each owns its columns of gw and sums the images in
// order).
#include "devices/cpu/kernels/conv_gemm.h"

#include <dnnl_types.h>

#include <algorithm>
#include <vector>

#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/parallel.h"
#include "runtime/core/error.h"

namespace tessera::cpu::nn {

namespace {

// Unfolded patches per block at most (4 MiB of floats), and output
// positions per block at most: blocks of fixed size (not one per thread),
// so that the sums do not depend on the thread count, small enough to
// spread a single image over the threads.
constexpr int64_t kMaxBlockFloats = int64_t{1} << 20;
constexpr int64_t kMaxBlockPositions = 1024;
// Rows of K per weight-gradient task.
constexpr int64_t kWeightRowsPerTask = 64;

struct Shape2 {
  int64_t k, m, p;  // rows of patches, output channels per group, output positions
};

Shape2 shape_of(const ConvGeometry& g) {
  return {g.cin_g * g.kh * g.kw, g.cout / g.groups, g.oh * g.ow};
}

// Output rows per block.
int64_t block_rows(const ConvGeometry& g, int64_t k_rows) {
  const int64_t ow = std::max<int64_t>(g.ow, 1);
  const int64_t by_memory = kMaxBlockFloats / std::max<int64_t>(k_rows * ow, 1);
  return std::clamp<int64_t>(std::min(by_memory, kMaxBlockPositions / ow), 1,
                             std::max<int64_t>(g.oh, 1));
}

// The output columns ox whose input column ox * sw + offset lies in
// [0, w): [begin, end).
struct ColumnRange {
  int64_t begin, end;
};

ColumnRange valid_columns(const ConvGeometry& g, int64_t offset) {
  // ox * sw + offset >= 0 and <= w - 1.
  const int64_t begin = offset >= 0 ? 0 : (-offset + g.sw - 1) / g.sw;
  const int64_t last = g.w - 1 - offset;
  const int64_t end = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
  return {std::min(begin, g.ow), std::max(end, std::min(begin, g.ow))};
}

// Patch row r = (c, ky, kx) of the image-group plane x [cin_g, h, w].
struct PatchRow {
  int64_t c, ky, kx;
};

PatchRow patch_row(const ConvGeometry& g, int64_t r) {
  return {r / (g.kh * g.kw), (r / g.kw) % g.kh, r % g.kw};
}

// col [k1 - k0, rows * ow] = patch rows [k0, k1) for output rows
// [oy0, oy0 + rows) of x, zero where the patch reads padding.
void unfold(const ConvGeometry& g, const float* x, int64_t oy0, int64_t rows, int64_t k0,
            int64_t k1, float* col) {
  const int64_t pc = rows * g.ow;
  for (int64_t r = k0; r < k1; ++r) {
    const PatchRow pr = patch_row(g, r);
    const float* plane = x + pr.c * g.h * g.w;
    const int64_t offset = pr.kx * g.dw - g.pw;
    const ColumnRange cols = valid_columns(g, offset);
    float* dst = col + (r - k0) * pc;
    for (int64_t i = 0; i < rows; ++i) {
      float* d = dst + i * g.ow;
      const int64_t iy = (oy0 + i) * g.sh - g.ph + pr.ky * g.dh;
      if (iy < 0 || iy >= g.h) {
        std::fill(d, d + g.ow, 0.0f);
        continue;
      }
      const float* src = plane + iy * g.w;  // input column ox * sw + offset
      std::fill(d, d + cols.begin, 0.0f);
      if (g.sw == 1) {
        std::copy(src + cols.begin + offset, src + cols.end + offset, d + cols.begin);
      } else {
        for (int64_t ox = cols.begin; ox < cols.end; ++ox) d[ox] = src[ox * g.sw + offset];
      }
      std::fill(d + cols.end, d + g.ow, 0.0f);
    }
  }
}

// gx [cin_g, h, w] += col [K, rows * ow] folded back (the transpose of
// unfold), in row order.
void fold(const ConvGeometry& g, const float* col, int64_t oy0, int64_t rows, float* gx) {
  const int64_t k = g.cin_g * g.kh * g.kw, pc = rows * g.ow;
  for (int64_t r = 0; r < k; ++r) {
    const PatchRow pr = patch_row(g, r);
    float* plane = gx + pr.c * g.h * g.w;
    const int64_t offset = pr.kx * g.dw - g.pw;
    const ColumnRange cols = valid_columns(g, offset);
    const float* src = col + r * pc;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t iy = (oy0 + i) * g.sh - g.ph + pr.ky * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      float* d = plane + iy * g.w;  // input column ox * sw + offset
      const float* s = src + i * g.ow;
      for (int64_t ox = cols.begin; ox < cols.end; ++ox) d[ox * g.sw + offset] += s[ox];
    }
  }
}

// A buffer per thread, reused by its tasks (a fresh 4 MiB allocation per
// task would fault its pages in every time).
float* scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int status = sgemm_on_this_thread(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  TESSERA_CHECK(status == dnnl_success, DeviceError, "conv2d: oneDNN sgemm failed (status ",
                status, ") on a ", m, " x ", n, " x ", k, " product");
}

}  // namespace

void gemm_conv2d_forward(const ConvGeometry& g, const float* x, const float* w, const float* b,
                         float* y) {
  const Shape2 s = shape_of(g);
  const int64_t rows = block_rows(g, s.k);
  const int64_t blocks = (g.oh + rows - 1) / rows;
  parallel_for_each(g.n * g.groups * blocks, [&](int64_t t) {
    const int64_t n = t / (g.groups * blocks), grp = (t / blocks) % g.groups;
    const int64_t oy0 = (t % blocks) * rows, nrows = std::min(rows, g.oh - oy0);
    const int64_t pc = nrows * g.ow;
    float* col = scratch(static_cast<size_t>(s.k * pc));
    unfold(g, x + (n * g.cin + grp * g.cin_g) * g.h * g.w, oy0, nrows, 0, s.k, col);
    float* out = y + (n * g.cout + grp * s.m) * s.p + oy0 * g.ow;
    gemm('N', 'N', s.m, pc, s.k, w + grp * s.m * s.k, s.k, col, pc, 0.0f, out, s.p);
    if (b != nullptr) {
      for (int64_t m = 0; m < s.m; ++m) {
        const float bias = b[grp * s.m + m];
        float* row = out + m * s.p;
        for (int64_t i = 0; i < pc; ++i) row[i] += bias;
      }
    }
  });
}

void gemm_conv2d_backward_data(const ConvGeometry& g, const float* w, const float* gy,
                               float* gx) {
  const Shape2 s = shape_of(g);
  const int64_t rows = block_rows(g, s.k);
  parallel_for_each(g.n * g.groups, [&](int64_t t) {
    const int64_t n = t / g.groups, grp = t % g.groups;
    float* plane = gx + (n * g.cin + grp * g.cin_g) * g.h * g.w;
    std::fill(plane, plane + g.cin_g * g.h * g.w, 0.0f);
    for (int64_t oy0 = 0; oy0 < g.oh; oy0 += rows) {
      const int64_t nrows = std::min(rows, g.oh - oy0), pc = nrows * g.ow;
      float* col = scratch(static_cast<size_t>(s.k * pc));
      const float* go = gy + (n * g.cout + grp * s.m) * s.p + oy0 * g.ow;
      gemm('T', 'N', s.k, pc, s.m, w + grp * s.m * s.k, s.k, go, s.p, 0.0f, col, pc);
      fold(g, col, oy0, nrows, plane);
    }
  });
}

void gemm_conv2d_backward_weights(const ConvGeometry& g, const float* x, const float* gy,
                                  float* gw, float* gb) {
  const Shape2 s = shape_of(g);
  const int64_t k_blocks = (s.k + kWeightRowsPerTask - 1) / kWeightRowsPerTask;
  const int64_t rows = block_rows(g, std::min(s.k, kWeightRowsPerTask));
  parallel_for_each(g.groups * k_blocks, [&](int64_t t) {
    const int64_t grp = t / k_blocks;
    const int64_t k0 = (t % k_blocks) * kWeightRowsPerTask;
    const int64_t kb = std::min(kWeightRowsPerTask, s.k - k0);
    float* out = gw + grp * s.m * s.k + k0;
    bool first = true;
    for (int64_t n = 0; n < g.n; ++n) {
      const float* plane = x + (n * g.cin + grp * g.cin_g) * g.h * g.w;
      for (int64_t oy0 = 0; oy0 < g.oh; oy0 += rows) {
        const int64_t nrows = std::min(rows, g.oh - oy0), pc = nrows * g.ow;
        float* col = scratch(static_cast<size_t>(kb * pc));
        unfold(g, plane, oy0, nrows, k0, k0 + kb, col);
        const float* go = gy + (n * g.cout + grp * s.m) * s.p + oy0 * g.ow;
        gemm('N', 'T', s.m, kb, pc, go, s.p, col, pc, first ? 0.0f : 1.0f, out, s.k);
        first = false;
      }
    }
    if (first) {  // no images or no output positions: the gradient is zero
      for (int64_t m = 0; m < s.m; ++m) std::fill(out + m * s.k, out + m * s.k + kb, 0.0f);
    }
  });
  if (gb != nullptr) {
    parallel_for_range(g.cout, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t oc = c0; oc < c1; ++oc) {
        float sum = 0.0f;
        for (int64_t n = 0; n < g.n; ++n) sum += vec::lane_sum(gy + (n * g.cout + oc) * s.p, s.p);
        gb[oc] = sum;
      }
    });
  }
}

}  // namespace tessera::cpu::nn
