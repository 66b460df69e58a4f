#include "runtime/ops/memory_overlap.h"

#include <algorithm>
#include <numeric>

#include "runtime/core/error.h"

namespace tessera {

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  std::vector<int64_t> order(t.dim());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return t.strides()[a] < t.strides()[b] ||
           (t.strides()[a] == t.strides()[b] && t.sizes()[a] < t.sizes()[b]);
  });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

void check_no_internal_overlap(const char* op, const Tensor& out) {
  for (int64_t d = 0; d < out.dim(); ++d) {
    TESSERA_CHECK(!(out.strides()[d] == 0 && out.sizes()[d] > 1), ValueError, op,
                  ": unsupported operation: more than one element of the written-to tensor ",
                  describe(out), " refers to a single memory location (stride 0 in dim ", d,
                  "); clone() it before writing");
  }
}

void check_no_partial_overlap(const char* op, const Tensor& out, const Tensor& in) {
  if (out.is_same(in) || out.numel() == 0 || in.numel() == 0) return;
  if (out.storage() != in.storage()) return;
  // As PyTorch: layouts we cannot reason about cheaply are let through.
  if (!is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(in)) return;
  auto range = [](const Tensor& t) {
    char* begin = static_cast<char*>(t.data_ptr());
    return std::pair<char*, char*>(begin, begin + t.nbytes());
  };
  auto [out_begin, out_end] = range(out);
  auto [in_begin, in_end] = range(in);
  if (out_begin == in_begin && out_end == in_end && out.strides() == in.strides()) return;
  TESSERA_CHECK(out_end <= in_begin || in_end <= out_begin, ValueError, op,
                ": unsupported operation: some elements of the input tensor (", describe(in),
                ") and the written-to tensor (", describe(out),
                ") refer to a single memory location; clone() the input first");
}

}  // namespace tessera
