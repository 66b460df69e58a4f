// Op front ends: reductions, scans (cumsum, cumprod), softmax, log_softmax, layer_norm, rms_norm, batch_norm and their backward.
// (sum and mean are declared in ops.h.) Semantics, dtypes and errors follow
// PyTorch: `dims` empty means every dim; the `*_out` variants write into an
// out of the result's sizes (see out_check.h).
#pragma once

#include <array>
#include <optional>
#include <tuple>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"

namespace tessera {

// -- Reductions ---------------------------------------------------------------
// prod over one dim or everything; integral and bool inputs give int64.
Tensor prod(const Tensor& t, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& t, int64_t dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor& prod_out(Tensor& out, const Tensor& t, int64_t dim, bool keepdim = false,
                 std::optional<DType> dtype = std::nullopt);
Tensor& sum_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false,
                std::optional<DType> dtype = std::nullopt);
Tensor& mean_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false,
                 std::optional<DType> dtype = std::nullopt);

// max / min over every element (errors on an empty tensor), and over one
// dim with the index of the first extreme (NaN wins).
Tensor max(const Tensor& t);
Tensor min(const Tensor& t);
std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
std::tuple<Tensor&, Tensor&> max_out(Tensor& values, Tensor& indices, const Tensor& t,
                                     int64_t dim, bool keepdim = false);
std::tuple<Tensor&, Tensor&> min_out(Tensor& values, Tensor& indices, const Tensor& t,
                                     int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor amax(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor& amax_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor& amin_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false);
// (amin, amax) over one dim, or every dim when dim is absent (keepdim then
// keeps every dim, with size 1).
std::tuple<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt,
                                   bool keepdim = false);
std::tuple<Tensor&, Tensor&> aminmax_out(Tensor& min, Tensor& max, const Tensor& t,
                                         std::optional<int64_t> dim = std::nullopt,
                                         bool keepdim = false);

// var / std of floating inputs; divisor max(N - correction, 0).
Tensor var(const Tensor& t, const Shape& dims = {}, double correction = 1.0,
           bool keepdim = false);
Tensor std(const Tensor& t, const Shape& dims = {}, double correction = 1.0,
           bool keepdim = false);
Tensor& var_out(Tensor& out, const Tensor& t, const Shape& dims = {}, double correction = 1.0,
                bool keepdim = false);
Tensor& std_out(Tensor& out, const Tensor& t, const Shape& dims = {}, double correction = 1.0,
                bool keepdim = false);

// Vector norm of floating inputs, p = 1, 2 or infinity.
Tensor norm(const Tensor& t, double p = 2.0, const Shape& dims = {}, bool keepdim = false);
Tensor& norm_out(Tensor& out, const Tensor& t, double p = 2.0, const Shape& dims = {},
                 bool keepdim = false);

// all / any: bool result (uint8 for uint8 input).
Tensor all(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor any(const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor& all_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false);
Tensor& any_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false);
// sum counting NaN as 0 (integral inputs: sum); dims empty means every dim.
Tensor nansum(const Tensor& t, const Shape& dims = {}, bool keepdim = false,
              std::optional<DType> dtype = std::nullopt);
Tensor& nansum_out(Tensor& out, const Tensor& t, const Shape& dims = {}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);
// torch.equal: same sizes and every element equal after type promotion
// (NaN is unequal); tensors on one device.
bool equal(const Tensor& a, const Tensor& b);

// log(sum(exp(t))) over dims (dims must not be empty, as PyTorch); integral
// inputs compute in float32.
Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim = false);
Tensor& logsumexp_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim = false);

// -- Scans --------------------------------------------------------------------
// Integral and bool inputs give int64 unless dtype says otherwise.
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor& cumsum_out(Tensor& out, const Tensor& t, int64_t dim,
                   std::optional<DType> dtype = std::nullopt);
Tensor& cumprod_out(Tensor& out, const Tensor& t, int64_t dim,
                    std::optional<DType> dtype = std::nullopt);
// In place: the scan in self's dtype (dtype, if given, must be self's).
Tensor& cumsum_(Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor& cumprod_(Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt);

// (values, indices): the running max / min along dim; ties and NaNs take
// the latest index, as PyTorch. Any dtype.
std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);

// -- Order statistics (through a stable sort; NaN sorts last) -----------------
// (values, indices) of the k-th smallest (k from 1) along dim.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
// The lower median along dim (NaN, at its first index, for a line holding
// NaN), and over every element (NaN for an empty floating tensor).
std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor median(const Tensor& t);

// -- Softmax ------------------------------------------------------------------
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// input_dtype: the forward's input dtype (grad_in is converted to it).
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              std::optional<DType> input_dtype = std::nullopt);
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  std::optional<DType> input_dtype = std::nullopt);

// -- Normalization ------------------------------------------------------------
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// (output, mean, rstd); mean and rstd have x's leading sizes and 1s.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& x,
                                                     const Shape& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps);
// output_mask: which of (grad_input, grad_weight, grad_bias) to compute;
// the others come back undefined.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& x, const Shape& normalized_shape, const Tensor& mean,
    const Tensor& rstd, const Tensor& weight, const Tensor& bias,
    std::array<bool, 3> output_mask = {true, true, true});

// eps defaults to the machine epsilon of x's dtype, as PyTorch.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
// (output, rstd), as aten::_fused_rms_norm.
std::tuple<Tensor, Tensor> rms_norm_forward(const Tensor& x, const Shape& normalized_shape,
                                            const Tensor& weight = {},
                                            std::optional<double> eps = std::nullopt);
// (grad_input, grad_weight); output_mask as for layer norm.
std::tuple<Tensor, Tensor> rms_norm_backward(const Tensor& grad_out, const Tensor& x,
                                             const Shape& normalized_shape, const Tensor& rstd,
                                             const Tensor& weight,
                                             std::array<bool, 2> output_mask = {true, true});

// (output, save_mean, save_invstd), as aten::native_batch_norm. Training
// updates running_mean / running_var (when defined) in place; in eval
// save_mean and save_invstd are empty [0] tensors.
std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& x, const Tensor& weight,
                                              const Tensor& bias, const Tensor& running_mean,
                                              const Tensor& running_var, bool training,
                                              double momentum = 0.1, double eps = 1e-5);
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(
    const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& running_mean,
    const Tensor& running_var, const Tensor& save_mean, const Tensor& save_invstd,
    bool training, double eps, std::array<bool, 3> output_mask = {true, true, true});

}  // namespace tessera
