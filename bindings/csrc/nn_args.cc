#include "bindings/csrc/nn_args.h"

#include "runtime/ops/ops.h"

namespace tessera_py {

using tessera::Shape;
using tessera::Tensor;

tessera::Shape spatial_arg(const Shape& s, size_t rank, const char* op, const char* name) {
  TESSERA_CHECK(s.size() == 1 || s.size() == rank, ValueError, op, ": ", name,
                " must be a single int or a tuple of ", rank, " ints, got ",
                tessera::shape_to_string(s));
  return s.size() == 1 ? Shape(rank, s[0]) : s;
}

bool check_spatial_input(const Tensor& input, int64_t rank, const char* op) {
  TESSERA_CHECK(input.dim() == rank + 1 || input.dim() == rank + 2, ValueError, op, ": expected ",
                rank + 1, "-D (unbatched) or ", rank + 2, "-D (batched) input, got ",
                tessera::describe(input));
  return input.dim() == rank + 2;
}

Reduction reduction_arg(const std::string& reduction, std::optional<bool> size_average,
                        std::optional<bool> reduce, const char* op) {
  if (size_average || reduce) {
    // PyTorch's _Reduction.legacy_get_string.
    const bool average = size_average.value_or(true);
    if (!reduce.value_or(true)) return Reduction::kNone;
    return average ? Reduction::kMean : Reduction::kSum;
  }
  if (reduction == "none") return Reduction::kNone;
  if (reduction == "mean") return Reduction::kMean;
  if (reduction == "sum") return Reduction::kSum;
  throw tessera::ValueError(std::string(op) + ": " + reduction +
                            " is not a valid value for reduction (none, mean or sum)");
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::kNone: return "none";
    case Reduction::kMean: return "mean";
    case Reduction::kSum: return "sum";
  }
  return "mean";
}

Tensor reduce_loss(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::kNone: return loss;
    case Reduction::kMean: return tessera::mean(loss);
    case Reduction::kSum: return tessera::sum(loss);
  }
  return loss;
}

int64_t implicit_softmax_dim(std::optional<int64_t> dim, const Tensor& input) {
  if (dim) return *dim;
  const int64_t n = input.dim();
  return n == 0 || n == 1 || n == 3 ? 0 : 1;
}

}  // namespace tessera_py
