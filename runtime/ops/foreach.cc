// Multi-tensor pointwise ops (foreach_ops.h): validation of every entry up
// front, then the device's multi-tensor kernel or each entry's
// single-tensor kernel.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/foreach_ops.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/nn_common.h"

namespace tessera {

namespace {

using kernels::BinaryOp;
using kernels::PointwiseBinaryOp;
using kernels::TernaryOp;
using kernels::UnaryOp;

int arity(const PointwiseOpCode& code) {
  return std::visit(
      [](auto op) {
        using Op = decltype(op);
        if constexpr (std::is_same_v<Op, UnaryOp>) return 1;
        if constexpr (std::is_same_v<Op, TernaryOp>) return 3;
        return 2;
      },
      code);
}

// Ops a list of floating tensors can run: not the bool-valued ones, where
// (its condition is bool) or the bitwise ones.
bool floating_op(const PointwiseOpCode& code) {
  return std::visit(
      [](auto op) {
        using Op = decltype(op);
        if constexpr (std::is_same_v<Op, UnaryOp>) {
          return kernels::info(op).rule != kernels::UnaryRule::kPredicate &&
                 kernels::info(op).rule != kernels::UnaryRule::kBitwise;
        } else if constexpr (std::is_same_v<Op, PointwiseBinaryOp>) {
          using Rule = kernels::PointwiseBinaryRule;
          const Rule rule = kernels::info(op).rule;
          return rule != Rule::kCompare && rule != Rule::kBitwise && rule != Rule::kIntegral;
        } else if constexpr (std::is_same_v<Op, TernaryOp>) {
          return op != TernaryOp::kWhere;
        } else {
          return true;
        }
      },
      code);
}

const Tensor* input(const PointwiseEntry& e, int k) {
  return k == 0 ? &e.a : k == 1 ? &e.b : &e.c;
}

void check_entries(const char* op, const PointwiseOpCode& code,
                   const std::vector<PointwiseEntry>& entries) {
  TESSERA_CHECK(floating_op(code), ValueError, op,
                ": this op has no multi-tensor form (bool-valued, where or bitwise)");
  const Tensor& first = entries[0].out;
  TESSERA_CHECK(first.defined(), ValueError, op, ": entry 0 has no output tensor");
  TESSERA_CHECK(is_floating(first.dtype()), TypeError, op,
                ": expected floating tensors, got entry 0's ", describe(first));
  const int n = arity(code);
  for (size_t i = 0; i < entries.size(); ++i) {
    const PointwiseEntry& e = entries[i];
    TESSERA_CHECK(e.out.defined(), ValueError, op, ": entry ", i, " has no output tensor");
    for (int k = -1; k < n; ++k) {
      const Tensor& t = k < 0 ? e.out : *input(e, k);
      const char* role = k < 0 ? "output" : k == 0 ? "first input" : k == 1 ? "second input"
                                                                            : "third input";
      TESSERA_CHECK(t.defined(), ValueError, op, ": entry ", i, "'s ", role, " is undefined");
      TESSERA_CHECK(t.device() == first.device() && t.dtype() == first.dtype(), TypeError, op,
                    ": entry ", i, "'s ", role, " ", describe(t),
                    " must match the list's dtype and device (entry 0's output ",
                    describe(first), ")");
      if (k >= 0) {
        TESSERA_CHECK(nn_detail::broadcasts_to(t.sizes(), e.out.sizes()), ValueError, op,
                      ": entry ", i, "'s ", role, " ", shape_to_string(t.sizes()),
                      " cannot be broadcast to its output ", shape_to_string(e.out.sizes()));
        check_no_partial_overlap(op, e.out, t);
      }
    }
    check_no_internal_overlap(op, e.out);
  }
}

// The bytes [begin, end) a tensor's elements span; empty for no elements.
struct ByteRange {
  uintptr_t begin = 0, end = 0;
  size_t entry = 0;
};

ByteRange byte_range(const Tensor& t, size_t entry) {
  if (!t.defined() || t.numel() == 0) return {0, 0, entry};
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  const auto begin = reinterpret_cast<uintptr_t>(t.data_ptr());
  return {begin, begin + static_cast<uintptr_t>((last + 1) * static_cast<int64_t>(t.itemsize())),
          entry};
}

}  // namespace

void run_pointwise_entry(Device device, const PointwiseOpCode& code, PointwiseEntry& e) {
  std::visit(
      [&](auto op) {
        using Op = decltype(op);
        if constexpr (std::is_same_v<Op, BinaryOp>) {
          call_kernel<kernels::Binary>(device, op, e.out, e.a, e.b, e.s0);
        } else if constexpr (std::is_same_v<Op, UnaryOp>) {
          call_kernel<kernels::Unary>(device, op, e.out, e.a, e.s0, e.s1);
        } else if constexpr (std::is_same_v<Op, PointwiseBinaryOp>) {
          call_kernel<kernels::PointwiseBinary>(device, op, e.out, e.a, e.b, e.s0);
        } else {
          call_kernel<kernels::Ternary>(device, op, e.out, e.a, e.b, e.c, e.s0);
        }
      },
      code);
}

bool foreach_entries_independent(const std::vector<PointwiseEntry>& entries) {
  std::vector<ByteRange> outs;
  outs.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const ByteRange r = byte_range(entries[i].out, i);
    if (r.begin != r.end) outs.push_back(r);
  }
  std::sort(outs.begin(), outs.end(),
            [](const ByteRange& x, const ByteRange& y) { return x.begin < y.begin; });
  for (size_t k = 1; k < outs.size(); ++k) {
    if (outs[k].begin < outs[k - 1].end) return false;  // two outputs share memory
  }
  // Each input against the outputs that intersect it (a contiguous run of
  // the sorted, disjoint ranges).
  for (size_t i = 0; i < entries.size(); ++i) {
    for (const Tensor* t : {&entries[i].a, &entries[i].b, &entries[i].c}) {
      const ByteRange in = byte_range(*t, i);
      if (in.begin == in.end) continue;
      auto it = std::lower_bound(outs.begin(), outs.end(), in.begin,
                                 [](const ByteRange& r, uintptr_t at) { return r.end <= at; });
      for (; it != outs.end() && it->begin < in.end; ++it) {
        if (it->entry != i) return false;
      }
    }
  }
  return true;
}

void foreach_pointwise(const char* op, PointwiseOpCode code, std::vector<PointwiseEntry>& entries) {
  if (entries.empty()) return;
  check_entries(op, code, entries);
  TESSERA_CHECK(foreach_entries_independent(entries), ValueError, op,
                ": an entry's output shares memory with another entry's tensors; the entries "
                "must be independent (run them one by one instead)");
  const int n = arity(code);
  std::vector<PointwiseEntry> live;
  live.reserve(entries.size());
  for (PointwiseEntry& e : entries) {
    for (int k = 0; k < n; ++k) {
      Tensor& t = k == 0 ? e.a : k == 1 ? e.b : e.c;
      t = t.expand(e.out.sizes());
    }
    if (e.out.numel() > 0) live.push_back(e);
  }
  if (live.empty()) return;
  const Device device = live[0].out.device();
  if (try_call_kernel<kernels::ForeachPointwise>(device, code, live)) return;
  for (PointwiseEntry& e : live) run_pointwise_entry(device, code, e);
}

}  // namespace tessera
