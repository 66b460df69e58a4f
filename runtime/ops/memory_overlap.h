// Overlap checks for ops that write: an output whose elements share memory
// (an expanded tensor) or that partly overlaps an input gives results that
// depend on loop order, so both are rejected as in PyTorch. Exact aliasing
// (the same layout, as in a.add_(b) with out = a) is allowed.
#pragma once

#include "runtime/core/tensor.h"

namespace tessera {

// True if the elements of t cover a dense block of memory exactly once in
// some order of its dims (so no two elements share an address).
bool is_non_overlapping_and_dense(const Tensor& t);

// ValueError if some elements of out refer to one memory location.
void check_no_internal_overlap(const char* op, const Tensor& out);

// ValueError if out and in share memory without having the same layout.
void check_no_partial_overlap(const char* op, const Tensor& out, const Tensor& in);

}  // namespace tessera
