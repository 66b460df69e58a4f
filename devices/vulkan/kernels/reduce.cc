// Reductions: reduce (sum, mean), reduce_ext (prod, amax, amin, all, any,
// norm 1 / 2 / inf, logsumexp), arg_reduce (max / min with int64 indices)
// and var_std, in shaders/reduce_common.glsl: f32, f16 and bf16 input
// accumulate in f32 (reduce_f32acc), integer and bool input in wrapping
// int64 (reduce_i64acc, needs shaderInt64), f64 input into f64 (or bool)
// in double (reduce_f64acc, needs shaderFloat64); the _sg variants add
// subgroup ops. Native for any strides.
// Staged through the host: f64 on devices without shaderFloat64, and into
// or from other dtypes, integer input with a floating output (sum with a dtype) and the reverse,
// devices without 8/16/64-bit shader types, and layouts with more than 3
// kept or 3 reduced dims after coalescing or offsets beyond 2^30.
//
// The kept dims and the reduced dims are each ordered by input stride
// (largest first) and coalesced. A reduction runs in one of three shapes:
// one invocation per output with a serial loop (short reductions, and
// columns: a kept dim innermost, so neighbouring invocations read
// neighbouring elements); one subgroup per output (many rows of moderate
// length, on devices with subgroup arithmetic: no barriers); or one work group per output whose invocations stride over
// the reduced elements and combine in shared memory (sums first through
// subgroupAdd). Long reductions into few outputs (and long columns) split
// each output over several work groups: partial results go to a temporary
// tensor that a second launch combines. logsumexp and var / std are two
// passes over the input: the max (mean) per output into a temporary, then
// the sum of exp(x - max) (of squared deviations from the mean).
// Every order of combination is fixed by the shapes: results do not change
// from run to run.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

#include "devices/vulkan/kernels/host_staging.h"
#include "devices/vulkan/kernels/kernels.h"
#include "devices/vulkan/kernels/launch.h"
#include "devices/vulkan/kernels/strided_layout.h"
#include "devices/vulkan/vulkan_device.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::vulkan {
namespace {

using kernels::ReduceExtOp;
using kernels::ReduceOp;

// The shader's constants (reduce_common.glsl).
enum class ShaderOp : uint32_t {
  kSum, kProd, kMax, kMin, kAll, kAny, kAbsSum, kSquaredDevSum, kAbsMax, kExpSum, kArgMax, kArgMin,
};
enum class ElemType : uint32_t { kF32, kF16, kI32, kI64, kU8, kBool, kI8, kI16, kBF16, kF64 };
enum class FinalStep : uint32_t { kRaw, kDivide, kSqrt, kLogShift, kVar, kStd };

constexpr int kReduceMaxRank = 3;  // kMaxRank in shaders/reduce_common.glsl

struct ReduceParams {
  uint64_t out;
  uint64_t in;
  uint64_t aux;
  uint64_t index;
  uint32_t numel_out;
  uint32_t numel_red;
  uint32_t chunk_len;
  uint32_t out_chunk_stride;
  float scale;
  float scale_lo;  // f64 shaders divide by scale + scale_lo
  uint32_t ranks;  // kept | reduced << 8
  uint32_t kept_sizes[kReduceMaxRank];
  int32_t kept_in[kReduceMaxRank];
  int32_t kept_out[kReduceMaxRank];
  uint32_t red_sizes[kReduceMaxRank];
  int32_t red_in[kReduceMaxRank];
};

std::optional<ElemType> elem_type(DType t) {
  switch (t) {
    case DType::kF32: return ElemType::kF32;
    case DType::kF16: return ElemType::kF16;
    case DType::kBF16: return ElemType::kBF16;
    case DType::kI32: return ElemType::kI32;
    case DType::kI64: return ElemType::kI64;
    case DType::kU8: return ElemType::kU8;
    case DType::kBool: return ElemType::kBool;
    case DType::kI8: return ElemType::kI8;
    case DType::kI16: return ElemType::kI16;
    case DType::kF64: return ElemType::kF64;
    default: return std::nullopt;
  }
}

bool is_float_elem(ElemType t) {
  return t == ElemType::kF32 || t == ElemType::kF16 || t == ElemType::kBF16;
}

// Which accumulator a reduction of `in` into `out` uses, if any shader
// can run it on this device: f32 for f32 / f16 / bf16 (both sides floating), int64
// for integers and bool (both sides not floating), f64 for f64 into f64 or
// bool where the device has f64 shaders; nullopt stages.
enum class Acc { kF32, kI64, kF64 };
std::optional<Acc> accumulator(const KernelContext& ctx, DType in, DType out) {
  VulkanContext& vk = vulkan_context_of(ctx);
  if (!vk.has_sized_shader_types()) return std::nullopt;
  const auto ti = elem_type(in), to = elem_type(out);
  if (!ti || !to) return std::nullopt;
  if (*ti == ElemType::kF64 || *to == ElemType::kF64) {
    const bool f64_in_f64_or_bool_out =
        *ti == ElemType::kF64 && (*to == ElemType::kF64 || *to == ElemType::kBool);
    if (!f64_in_f64_or_bool_out || !vk.has_f64_shaders()) return std::nullopt;
    return Acc::kF64;
  }
  if (is_float_elem(*ti)) {
    const bool half = *ti == ElemType::kF16 || *to == ElemType::kF16;
    if (half && !vk.info().shader_f16) return std::nullopt;
    // Floating in: floating out, or bool (all / any).
    if (!is_float_elem(*to) && *to != ElemType::kBool) return std::nullopt;
    return Acc::kF32;
  }
  if (is_float_elem(*to) || !vk.info().shader_int64) return std::nullopt;
  return Acc::kI64;
}

// -- The layout ---------------------------------------------------------------

// The input's kept dims (with the output's strides) and reduced dims, size-1
// dims dropped, each set ordered by input stride (largest first) and
// coalesced. Output index o is row-major over the kept dims here.
struct ReduceLayout {
  Shape kept_sizes, kept_in, kept_out;
  Shape red_sizes, red_in;
  int64_t numel_out = 1, numel_red = 1;
};

// Orders dims (indices into sizes) by |stride| descending, keeping the
// original order among equal strides.
void order_by_stride(std::vector<int64_t>& dims, const Shape& strides) {
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return std::llabs(strides[a]) > std::llabs(strides[b]);
  });
}

ReduceLayout make_layout(const Tensor& out, const Tensor& in, const Shape& dims) {
  ReduceLayout l;
  std::vector<int64_t> kept, red;
  for (int64_t d = 0; d < in.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    (reduced ? l.numel_red : l.numel_out) *= in.sizes()[d];
    (reduced ? red : kept).push_back(d);
  }
  order_by_stride(kept, in.strides());
  order_by_stride(red, in.strides());
  Shape ks, ki, ko, rs, ri;
  for (int64_t d : kept) {
    ks.push_back(in.sizes()[d]);
    ki.push_back(in.strides()[d]);
    ko.push_back(out.strides()[d]);
  }
  for (int64_t d : red) {
    rs.push_back(in.sizes()[d]);
    ri.push_back(in.strides()[d]);
  }
  StridedLayout k = coalesce(ks, {&ki, &ko});
  StridedLayout r = coalesce(rs, {&ri});
  l.kept_sizes = k.sizes;
  l.kept_in = k.strides[0];
  l.kept_out = k.strides[1];
  l.red_sizes = r.sizes;
  l.red_in = r.strides[0];
  return l;
}

// Row-major strides of a contiguous tensor of `sizes`, times `scale`.
Shape contiguous_strides(const Shape& sizes, int64_t scale) {
  Shape s(sizes.size());
  int64_t step = scale;
  for (size_t i = sizes.size(); i-- > 0;) {
    s[i] = step;
    step *= sizes[i];
  }
  return s;
}

// Whether the shader's 32-bit offsets reach every element (out offsets are
// doubled for int64 indices written as word pairs).
bool fits(const ReduceLayout& l) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max() / 2;
  if (l.kept_sizes.size() > kReduceMaxRank || l.red_sizes.size() > kReduceMaxRank) return false;
  if (l.numel_out > kLimit || l.numel_red > kLimit) return false;
  int64_t in_reach = 0, out_reach = 0;
  for (size_t d = 0; d < l.kept_sizes.size(); ++d) {
    if (std::llabs(l.kept_in[d]) > kLimit || std::llabs(l.kept_out[d]) > kLimit) return false;
    in_reach += (l.kept_sizes[d] - 1) * std::llabs(l.kept_in[d]);
    out_reach += (l.kept_sizes[d] - 1) * std::llabs(l.kept_out[d]);
    if (in_reach > kLimit || out_reach > kLimit) return false;
  }
  for (size_t d = 0; d < l.red_sizes.size(); ++d) {
    if (std::llabs(l.red_in[d]) > kLimit) return false;
    in_reach += (l.red_sizes[d] - 1) * std::llabs(l.red_in[d]);
    if (in_reach > kLimit) return false;
  }
  return true;
}

// -- Launching ----------------------------------------------------------------

// One reduction of `in` (any layout) into a target, with the shader's
// op, final step and inputs.
struct Pass {
  Acc acc = Acc::kF32;
  ShaderOp op = ShaderOp::kSum;
  FinalStep final_step = FinalStep::kRaw;
  double scale = 1.0;
  const void* in = nullptr;
  ElemType in_type = ElemType::kF32;
  Shape kept_sizes, kept_in, red_sizes, red_in;
  int64_t numel_out = 1, numel_red = 1;
  // Target: values (may be null for argmax / argmin), their strides over
  // the kept dims, and int64 indices laid out alike.
  void* out = nullptr;
  ElemType out_type = ElemType::kF32;
  Shape kept_out;
  void* index = nullptr;
  const void* aux = nullptr;  // per-output centre (f32), or partial indices
  bool index_from_aux = false;
};

Pass make_pass(Acc acc, ShaderOp op, const ReduceLayout& l, const Tensor& in) {
  Pass p;
  p.acc = acc;
  p.op = op;
  p.in = in.data_ptr();
  p.in_type = *elem_type(in.dtype());
  p.kept_sizes = l.kept_sizes;
  p.kept_in = l.kept_in;
  p.kept_out = l.kept_out;
  p.red_sizes = l.red_sizes;
  p.red_in = l.red_in;
  p.numel_out = l.numel_out;
  p.numel_red = l.numel_red;
  return p;
}

bool is_sum_like(ShaderOp op) {
  return op == ShaderOp::kSum || op == ShaderOp::kAbsSum || op == ShaderOp::kSquaredDevSum ||
         op == ShaderOp::kExpSum;
}

bool is_arg(ShaderOp op) { return op == ShaderOp::kArgMax || op == ShaderOp::kArgMin; }

enum class Mode : uint32_t { kSerial = 0, kGroup = 1, kGroupSubgroups = 2, kSubgroupPerOutput = 3 };

void dispatch(const KernelContext& ctx, const Pass& pass, Mode mode, int64_t chunks,
              int64_t chunk_len, int64_t out_chunk_stride) {
  ReduceParams p{};
  p.out = reinterpret_cast<uint64_t>(pass.out);
  p.in = reinterpret_cast<uint64_t>(pass.in);
  p.aux = reinterpret_cast<uint64_t>(pass.aux);
  p.index = reinterpret_cast<uint64_t>(pass.index);
  p.numel_out = static_cast<uint32_t>(pass.numel_out);
  p.numel_red = static_cast<uint32_t>(pass.numel_red);
  p.chunk_len = static_cast<uint32_t>(chunk_len);
  p.out_chunk_stride = static_cast<uint32_t>(out_chunk_stride);
  p.scale = static_cast<float>(pass.scale);
  p.scale_lo = static_cast<float>(pass.scale - static_cast<double>(p.scale));
  p.ranks = static_cast<uint32_t>(pass.kept_sizes.size() | (pass.red_sizes.size() << 8));
  for (size_t d = 0; d < pass.kept_sizes.size(); ++d) {
    p.kept_sizes[d] = static_cast<uint32_t>(pass.kept_sizes[d]);
    p.kept_in[d] = static_cast<int32_t>(pass.kept_in[d]);
    p.kept_out[d] = static_cast<int32_t>(pass.kept_out[d]);
  }
  for (size_t d = 0; d < pass.red_sizes.size(); ++d) {
    p.red_sizes[d] = static_cast<uint32_t>(pass.red_sizes[d]);
    p.red_in[d] = static_cast<int32_t>(pass.red_in[d]);
  }
  const bool subgroups = mode == Mode::kGroupSubgroups || mode == Mode::kSubgroupPerOutput;
  const char* shader = nullptr;
  switch (pass.acc) {
    case Acc::kF32: shader = subgroups ? "reduce_f32acc_sg" : "reduce_f32acc"; break;
    case Acc::kI64: shader = subgroups ? "reduce_i64acc_sg" : "reduce_i64acc"; break;
    case Acc::kF64: shader = subgroups ? "reduce_f64acc_sg" : "reduce_f64acc"; break;
  }
  const std::initializer_list<uint32_t> constants = {
      static_cast<uint32_t>(pass.op),         static_cast<uint32_t>(pass.in_type),
      static_cast<uint32_t>(pass.out_type),   static_cast<uint32_t>(mode),
      static_cast<uint32_t>(pass.final_step), pass.index_from_aux ? 1u : 0u};
  const int64_t group_size = vulkan_context_of(ctx).pipelines().workgroup_size();
  if (mode == Mode::kSerial) {  // x: outputs (invocations loop past 65535 groups), y: chunks
    const auto groups_x = static_cast<uint32_t>(std::min<int64_t>(
        (pass.numel_out + group_size - 1) / group_size, kMaxWorkGroupsPerDim));
    launch_groups(ctx, shader, constants, p, groups_x, static_cast<uint32_t>(chunks));
  } else if (mode == Mode::kSubgroupPerOutput) {  // x: outputs by subgroups
    const int64_t per_group = group_size / vulkan_context_of(ctx).info().subgroup_size;
    const auto groups_x = static_cast<uint32_t>(std::min<int64_t>(
        (pass.numel_out + per_group - 1) / per_group, kMaxWorkGroupsPerDim));
    launch_groups(ctx, shader, constants, p, groups_x);
  } else {  // x: chunks, y: outputs (work groups loop past 65535)
    const auto groups_y = static_cast<uint32_t>(
        std::min<int64_t>(pass.numel_out, kMaxWorkGroupsPerDim));
    launch_groups(ctx, shader, constants, p, static_cast<uint32_t>(chunks), groups_y);
  }
}

// The dtype of an accumulator's partial results and centres.
DType accumulator_dtype(Acc acc) {
  switch (acc) {
    case Acc::kF32: return DType::kF32;
    case Acc::kI64: return DType::kI64;
    case Acc::kF64: return DType::kF64;
  }
  return DType::kF32;
}

// Runs a pass in the shape that suits it (see the file comment); `split`
// allows a long reduction into few outputs to use several work groups per
// output and a second launch.
void run_pass(const KernelContext& ctx, const Pass& pass, bool split = true) {
  if (pass.numel_out == 0) return;
  VulkanContext& vk = vulkan_context_of(ctx);
  const int64_t group_size = vk.pipelines().workgroup_size();
  // A column: the innermost kept dim is inner to every reduced dim.
  bool column = !pass.kept_sizes.empty();
  if (column) {
    const int64_t inner = std::llabs(pass.kept_in.back());
    for (int64_t s : pass.red_in) column = column && inner < std::llabs(s);
  }
  const bool serial = pass.numel_red <= 32 || (column && pass.numel_out >= 64);
  Mode mode = Mode::kSerial;
  int64_t chunks = 1;
  if (serial) {
    // A long column into few outputs: chunks of the reduced dims in
    // work-group y, so that about 16K invocations share the work.
    if (split && column && pass.numel_red >= 1024 && pass.numel_out < 16384) {
      chunks = std::clamp<int64_t>(
          std::min<int64_t>(pass.numel_red / 256, (16384 + pass.numel_out - 1) / pass.numel_out),
          1, 1024);
    }
  } else if (vk.info().subgroup_arithmetic &&
             vk.info().subgroup_size > 0 && group_size % vk.info().subgroup_size == 0 &&
             pass.numel_out >= 64 && (pass.numel_red <= 4096 || pass.numel_out >= 1024)) {
    // Many rows of moderate length: a subgroup per output, no barriers.
    mode = Mode::kSubgroupPerOutput;
  } else {
    mode = pass.acc == Acc::kF32 && is_sum_like(pass.op) && vk.info().subgroup_arithmetic
               ? Mode::kGroupSubgroups
               : Mode::kGroup;
    // Chunks of at least 32 elements per invocation, enough work groups in
    // all to occupy the device (a fixed count: it only depends on shapes).
    // 1024 groups fill a large GPU (an H100's 132 SMs hold about 1024
    // groups of 256); 256 left an H100 at a fifth of its bandwidth.
    constexpr int64_t kMaxGroups = 1024;
    if (split && pass.numel_out < 64) {
      const int64_t by_size = pass.numel_red / (group_size * 32);
      chunks = std::clamp<int64_t>(std::min<int64_t>(by_size, kMaxGroups / pass.numel_out), 1,
                                   kMaxGroups);
    }
  }
  int64_t chunk_len = (pass.numel_red + chunks - 1) / chunks;
  if (mode != Mode::kSerial) chunk_len = (chunk_len + group_size - 1) / group_size * group_size;
  chunks = (pass.numel_red + chunk_len - 1) / chunk_len;
  if (chunks == 1) {
    dispatch(ctx, pass, mode, 1, pass.numel_red, 0);
    return;
  }
  // First launch: partial results of each (output, chunk), contiguous with
  // the chunk innermost.
  const DType partial_dtype = accumulator_dtype(pass.acc);
  const ElemType partial_type = *elem_type(partial_dtype);
  Tensor partial_values =
      empty({pass.numel_out * chunks}, TensorOptions(partial_dtype, ctx.device));
  Tensor partial_indices;
  Pass first = pass;
  first.out = partial_values.data_ptr();
  first.out_type = partial_type;
  first.kept_out = contiguous_strides(pass.kept_sizes, chunks);
  first.final_step = FinalStep::kRaw;
  if (is_arg(pass.op)) {
    partial_indices = empty({pass.numel_out * chunks}, TensorOptions(DType::kI64, ctx.device));
    first.index = partial_indices.data_ptr();
  }
  dispatch(ctx, first, mode, chunks, chunk_len, 1);
  // Second launch: combine each output's partials into the target.
  Pass second = pass;
  second.in = partial_values.data_ptr();
  second.in_type = partial_type;
  second.kept_in = contiguous_strides(pass.kept_sizes, chunks);
  second.red_sizes = {chunks};
  second.red_in = {1};
  second.numel_red = chunks;
  if (is_sum_like(pass.op)) second.op = ShaderOp::kSum;
  if (pass.op == ShaderOp::kAbsMax) second.op = ShaderOp::kMax;
  if (is_arg(pass.op)) {
    second.aux = partial_indices.data_ptr();
    second.index_from_aux = true;
  }
  // var / std divide by numel_red of the whole reduction, which the shader
  // tests for 0; the partials' count is never 0.
  run_pass(ctx, second, /*split=*/false);
}

// A pass whose target is a temporary per output (a centre), of the
// accumulator's dtype.
Pass into_temporary(Pass pass, Tensor& temp) {
  pass.out = temp.data_ptr();
  pass.out_type = *elem_type(temp.dtype());
  pass.kept_out = contiguous_strides(pass.kept_sizes, 1);
  pass.index = nullptr;
  return pass;
}

// -- The kernels --------------------------------------------------------------

void reduce_kernel(const KernelContext& ctx, ReduceOp op, Tensor& out, const Tensor& in,
                   const Shape& dims) {
  if (out.numel() == 0) return;
  const auto acc = accumulator(ctx, in.dtype(), out.dtype());
  const ReduceLayout l = make_layout(out, in, dims);
  const bool mean = op == ReduceOp::kMean;
  if (!acc || !fits(l) || (mean && *acc == Acc::kI64) || elem_type(out.dtype()) == ElemType::kBool) {
    run_on_host<kernels::Reduce>(ctx, op, out, in, dims);
    return;
  }
  if (l.numel_red == 0) {
    out.fill_(mean ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    return;
  }
  Pass pass = make_pass(*acc, ShaderOp::kSum, l, in);
  pass.out = out.data_ptr();
  pass.out_type = *elem_type(out.dtype());
  if (mean) {
    pass.final_step = FinalStep::kDivide;
    pass.scale = static_cast<double>(l.numel_red);
  }
  run_pass(ctx, pass);
}

void reduce_ext_kernel(const KernelContext& ctx, ReduceExtOp op, Tensor& out, const Tensor& in,
                       const Shape& dims) {
  if (out.numel() == 0) return;
  const auto acc = accumulator(ctx, in.dtype(), out.dtype());
  const ReduceLayout l = make_layout(out, in, dims);
  const bool bool_out = out.dtype() == DType::kBool || (out.dtype() == DType::kU8 &&
                                                        (op == ReduceExtOp::kAll ||
                                                         op == ReduceExtOp::kAny));
  const bool floating_only = op == ReduceExtOp::kNorm1 || op == ReduceExtOp::kNorm2 ||
                             op == ReduceExtOp::kNormInf || op == ReduceExtOp::kLogSumExp;
  const bool all_any = op == ReduceExtOp::kAll || op == ReduceExtOp::kAny;
  // A bool output only for all / any, or max / min / prod of bool.
  const bool types_ok =
      acc && (!floating_only || *acc != Acc::kI64) &&
      (!bool_out || all_any || in.dtype() == DType::kBool) &&
      (*acc == Acc::kI64 || !all_any || out.dtype() == DType::kBool);
  if (!types_ok || !fits(l)) {
    run_on_host<kernels::ReduceExt>(ctx, op, out, in, dims);
    return;
  }
  if (l.numel_red == 0) {  // the identity (amax / amin are never empty)
    double v = 0.0;
    if (op == ReduceExtOp::kProd || op == ReduceExtOp::kAll) v = 1.0;
    if (op == ReduceExtOp::kLogSumExp) v = -std::numeric_limits<double>::infinity();
    out.fill_(v);
    return;
  }
  ShaderOp shader_op = ShaderOp::kSum;
  FinalStep final_step = FinalStep::kRaw;
  switch (op) {
    case ReduceExtOp::kProd: shader_op = ShaderOp::kProd; break;
    case ReduceExtOp::kAmax: shader_op = ShaderOp::kMax; break;
    case ReduceExtOp::kAmin: shader_op = ShaderOp::kMin; break;
    case ReduceExtOp::kAll: shader_op = ShaderOp::kAll; break;
    case ReduceExtOp::kAny: shader_op = ShaderOp::kAny; break;
    case ReduceExtOp::kNorm1: shader_op = ShaderOp::kAbsSum; break;
    case ReduceExtOp::kNorm2:
      shader_op = ShaderOp::kSquaredDevSum;  // no centre: around 0
      final_step = FinalStep::kSqrt;
      break;
    case ReduceExtOp::kNormInf: shader_op = ShaderOp::kAbsMax; break;
    case ReduceExtOp::kLogSumExp:
      shader_op = ShaderOp::kExpSum;
      final_step = FinalStep::kLogShift;
      break;
  }
  Pass pass = make_pass(*acc, shader_op, l, in);
  pass.out = out.data_ptr();
  pass.out_type = *elem_type(out.dtype());
  pass.final_step = final_step;
  Tensor centre;
  if (op == ReduceExtOp::kLogSumExp) {  // the max of each output first
    centre = empty({l.numel_out}, TensorOptions(accumulator_dtype(*acc), ctx.device));
    run_pass(ctx, into_temporary(make_pass(*acc, ShaderOp::kMax, l, in), centre));
    pass.aux = centre.data_ptr();
  }
  run_pass(ctx, pass);
}

void arg_reduce_kernel(const KernelContext& ctx, bool is_max, Tensor& values, Tensor& indices,
                       const Tensor& in, int64_t dim) {
  if (indices.numel() == 0) return;
  const Shape dims = in.dim() == 0 ? Shape{} : Shape{dim};
  const auto acc = accumulator(ctx, in.dtype(), in.dtype());
  const ReduceLayout l = make_layout(indices, in, dims);
  // values and indices come from the front end with one layout.
  const bool same_layout = !values.defined() || values.strides() == indices.strides();
  if (!acc || !same_layout || !fits(l) || l.numel_red == 0) {
    run_on_host<kernels::ArgReduce>(ctx, is_max, values, indices, in, dim);
    return;
  }
  Pass pass = make_pass(*acc, is_max ? ShaderOp::kArgMax : ShaderOp::kArgMin, l, in);
  pass.out = values.defined() ? values.data_ptr() : nullptr;
  pass.out_type = pass.in_type;
  pass.index = indices.data_ptr();
  run_pass(ctx, pass);
}

void var_std_kernel(const KernelContext& ctx, bool take_sqrt, Tensor& out, const Tensor& in,
                    const Shape& dims, double correction) {
  if (out.numel() == 0) return;
  const auto acc = accumulator(ctx, in.dtype(), out.dtype());
  const ReduceLayout l = make_layout(out, in, dims);
  if (!acc || *acc == Acc::kI64 || !fits(l)) {
    run_on_host<kernels::VarStd>(ctx, take_sqrt, out, in, dims, correction);
    return;
  }
  if (l.numel_red == 0) {
    out.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // Pass 1: each output's mean into a temporary.
  Tensor mean = empty({l.numel_out}, TensorOptions(accumulator_dtype(*acc), ctx.device));
  Pass mean_pass = into_temporary(make_pass(*acc, ShaderOp::kSum, l, in), mean);
  mean_pass.final_step = FinalStep::kDivide;
  mean_pass.scale = static_cast<double>(l.numel_red);
  run_pass(ctx, mean_pass);
  // Pass 2: the squared deviations from it, / max(N - correction, 0).
  Pass pass = make_pass(*acc, ShaderOp::kSquaredDevSum, l, in);
  pass.out = out.data_ptr();
  pass.out_type = *elem_type(out.dtype());
  pass.aux = mean.data_ptr();
  pass.final_step = take_sqrt ? FinalStep::kStd : FinalStep::kVar;
  pass.scale = std::max(0.0, static_cast<double>(l.numel_red) - correction);
  run_pass(ctx, pass);
}

// The shader's numbering.
static_assert(static_cast<int>(ShaderOp::kArgMin) == 11 && static_cast<int>(ElemType::kF64) == 9 &&
              static_cast<int>(FinalStep::kStd) == 5);

}  // namespace

void register_reduce_kernels(KernelRegistry& registry, DeviceType type) {
  registry.register_kernel<kernels::Reduce>(type, reduce_kernel);
  registry.register_kernel<kernels::ReduceExt>(type, reduce_ext_kernel);
  registry.register_kernel<kernels::ArgReduce>(type, arg_reduce_kernel);
  registry.register_kernel<kernels::VarStd>(type, var_std_kernel);
}

}  // namespace tessera::vulkan
