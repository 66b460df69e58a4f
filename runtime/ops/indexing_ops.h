// Op front ends: shape and indexing ops, and creation/random ops beyond the
// first slice (randint, bernoulli, dropout, eye, linspace, tril, triu).
// Semantics follow PyTorch's functions of the same name; dims may be
// negative. Index tensors are validated on the host (their min and max are
// read back with the IndexBounds kernel), so every device gets the same
// IndexError naming the op, the index, the dim and its size.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/core/tensor_options.h"
#include "runtime/random/generator.h"

namespace tessera {

// -- Creation and random.
// Integers uniform in [low, high); default dtype int64.
Tensor randint(int64_t low, int64_t high, const Shape& sizes, TensorOptions options = {},
               Generator* gen = nullptr);
Tensor randint(int64_t high, const Shape& sizes, TensorOptions options = {},
               Generator* gen = nullptr);
// out[i] = 1 with probability p[i] (p floating, in [0, 1]), dtype of p.
Tensor bernoulli(const Tensor& p, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& self, double p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, double p, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& self, const Tensor& p, Generator* gen = nullptr);
// torch.native_dropout: (output, bool mask); output = input * mask / (1 - p)
// when training, (input, all-true mask) otherwise.
std::pair<Tensor, Tensor> native_dropout(const Tensor& input, double p, bool train,
                                         Generator* gen = nullptr);
Tensor dropout(const Tensor& input, double p, bool train = true, Generator* gen = nullptr);
// grad * mask * scale (torch.native_dropout_backward).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);
Tensor eye(int64_t n, TensorOptions options = {});
Tensor eye(int64_t n, int64_t m, TensorOptions options = {});
Tensor linspace(Scalar start, Scalar end, int64_t steps, TensorOptions options = {});
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor& tril_(Tensor& self, int64_t diagonal = 0);
Tensor& triu_(Tensor& self, int64_t diagonal = 0);
Tensor& tril_out(Tensor& out, const Tensor& self, int64_t diagonal = 0);
Tensor& triu_out(Tensor& out, const Tensor& self, int64_t diagonal = 0);

// -- Joining and splitting.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
// Views of self, as torch.split / torch.chunk.
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, const Shape& split_sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);

// -- Rearranging.
Tensor flip(const Tensor& self, const Shape& dims);
// Without dims: rolls the flattened tensor and restores the shape.
Tensor roll(const Tensor& self, const Shape& shifts, const Shape& dims = {});
Tensor repeat(const Tensor& self, const Shape& repeats);
// torch.nn.functional.pad with mode "constant": pad holds (before, after)
// pairs starting from the last dim; negative amounts crop.
Tensor constant_pad(const Tensor& self, const Shape& pad, Scalar value = 0);

// -- Indexing.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src);
Tensor& scatter_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                    Scalar value);
Tensor& scatter_add_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& src);
// torch.scatter_reduce: src folded into self along dim at index by reduce,
// "sum", "prod", "mean", "amax" or "amin", element by element in row-major
// order of index, rounding to self's dtype after each step (NaN wins in
// amax/amin). include_self = false leaves self's value out of every
// position index names (those start from the fold's identity). "mean"
// divides each position by the number of values folded into it, in self's
// dtype, flooring for integers (bool has no mean).
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self = true);
Tensor& scatter_reduce_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                           const Tensor& src, std::string_view reduce, bool include_self = true);
// torch.scatter with reduce= "add" or "multiply" (scatter_reduce's "sum"
// and "prod" with self included), of src or of a value.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
               std::string_view reduce);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 std::string_view reduce);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value,
                 std::string_view reduce);
// torch.index_reduce: source's slices along dim folded into self's slices
// index[i] (index: int64 or int32, 1-D, one entry per slice of source) by
// reduce, "prod", "mean", "amax" or "amin", as scatter_reduce folds them.
// source has self's rank and sizes but along dim (size-1 dims broadcast).
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    std::string_view reduce, bool include_self = true);
Tensor& index_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                      std::string_view reduce, bool include_self = true);
Tensor& index_reduce_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& source, std::string_view reduce, bool include_self = true);
// torch.index_add / index_copy / index_fill: self's slices along dim at
// index (int64 or int32, at most 1-D; index_fill also takes negative
// entries) updated from source's slices in index order. source has self's
// dtype and rank, and self's sizes but index.numel() along dim. index_add
// adds alpha * source (integer self: alpha's integer part); duplicates
// accumulate in order, float16/bfloat16 in float rounded once where
// PyTorch's CPU does (alpha 1, self of more than one dim). index_copy's
// last write to a slice wins.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   Scalar alpha = 1);
Tensor& index_add_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor& source, Scalar alpha = 1);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
Tensor& index_copy_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                       const Tensor& source);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor& index_fill_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                       Scalar value);
// torch.take / Tensor.put_: self as its row-major flattening at index
// (int64, any shape; negative entries count from the end). take's result
// has index's shape. put_ writes source's elements (self's dtype, as many
// as index has) in index order, adding them with accumulate (duplicates
// then accumulate in order; without it the last write wins).
Tensor take(const Tensor& self, const Tensor& index);
Tensor& take_out(Tensor& out, const Tensor& self, const Tensor& index);
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);
Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);
// self[indices] = values (indices: int64/int32 tensors for the leading dims,
// broadcast together, or one bool mask); accumulate adds.
Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate = false);
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, Scalar value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor nonzero(const Tensor& self);
// Their result sizes depend on the data: pass an empty out (numel 0).
Tensor& masked_select_out(Tensor& out, const Tensor& self, const Tensor& mask);
Tensor& nonzero_out(Tensor& out, const Tensor& self);
// self with the positions where mask (bool, broadcast with self) is true
// taking source's elements in row-major order; source (self's dtype) must
// have at least as many elements as mask has true positions. The in-place
// form needs mask to broadcast to self.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source);
// One-hot int64 encoding; num_classes = -1 uses max(self) + 1.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

// -- Sorting. Returns (values, indices).
std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false,
                               bool stable = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false,
               bool stable = false);
std::pair<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                               bool largest = true, bool sorted = true);
// Into (values, indices); indices must be int64.
void sort_out(Tensor& values, Tensor& indices, const Tensor& self, int64_t dim = -1,
              bool descending = false, bool stable = false);
void topk_out(Tensor& values, Tensor& indices, const Tensor& self, int64_t k, int64_t dim = -1,
              bool largest = true, bool sorted = true);

}  // namespace tessera
