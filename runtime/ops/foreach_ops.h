// Op front ends: multi-tensor ops, one call over a list of entries
// (PyTorch's _foreach_* ops: optimizers update every parameter with the
// same few ops, and clip_grad_norm_ takes every gradient's norm). Each
// pointwise entry is one op of the Binary, Unary, PointwiseBinary or
// Ternary kernel family on its own tensors, with its own scalars.
//
// A device that registers kernels::ForeachPointwise runs the whole list as
// one launch (the CPU's spreads the entries over its threads, so many
// small tensors keep every core busy); any other device runs each entry on
// its single-tensor kernel, without the per-op validation and dispatch
// that a call per tensor would cost.
#pragma once

#include <optional>
#include <vector>

#include "runtime/ops/signatures/foreach.h"  // PointwiseOpCode, PointwiseEntry

namespace tessera {

// Runs every entry of `entries` with the op `code`. Checked up front, with
// `op` (the caller's op name) in every error: every tensor defined as the
// family needs, all on one device, of one floating dtype (the entries'
// out dtype; integer and mixed-dtype lists are the caller's slow path),
// each input broadcastable to its out's sizes, and each out overlapping
// its inputs either exactly (in place) or not at all; no op whose result
// is bool. Outputs are written in place; inputs are expanded to them.
void foreach_pointwise(const char* op, PointwiseOpCode code, std::vector<PointwiseEntry>& entries);

// One entry on its family's single-tensor kernel for `device` (the
// entry validated and its inputs expanded, as foreach_pointwise leaves
// them): what foreach_pointwise runs per entry without a multi-tensor
// kernel, and what a device's multi-tensor kernel may run per task.
void run_pointwise_entry(Device device, const PointwiseOpCode& code, PointwiseEntry& entry);

// Whether the entries can run in any order, as the multi-tensor kernels
// run them: no entry's output shares memory with another entry's output
// or inputs (judged by address ranges, so interleaved views count as
// sharing). An in-place list such as [w, w] is not; a caller then runs
// the entries one by one in order.
bool foreach_entries_independent(const std::vector<PointwiseEntry>& entries);

// The vector norm of order p over every element of each tensor, as norm(t,
// p) gives it: one 0-d tensor per entry, of `dtype` when given (each
// tensor converted first, so the norm is computed in that dtype) and of
// the tensor's own dtype otherwise. Checked up front, with `op` in every
// error: every tensor defined, floating, all on one device; p not NaN; no
// infinite order over an empty tensor. Orders 1, 2 and inf run on the
// device's ForeachNorm kernel when it has one (one launch for the list),
// otherwise per entry on ReduceExt; other orders per entry as norm()
// composes them.
std::vector<Tensor> foreach_norm(const char* op, const std::vector<Tensor>& tensors, double p,
                                 std::optional<DType> dtype = std::nullopt);

// One entry of a norm list on `device`'s ReduceExt kernel: out (0-d, in's
// dtype) = the norm `op` over every element of in (non-empty). What
// foreach_norm runs per entry without a multi-tensor kernel, and what a
// device's multi-tensor kernel may run per task.
void run_norm_entry(Device device, kernels::ReduceExtOp op, Tensor& out, const Tensor& in);

}  // namespace tessera
