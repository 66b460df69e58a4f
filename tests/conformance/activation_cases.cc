// The activations the runtime composes from pointwise ops (leaky_relu, elu
// with selu's coefficients, softplus, hardtanh, log_sigmoid, mish) and their
// gradients, against double references of PyTorch's formulas, on every
// device, NaN and infinities included.
#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

constexpr double kSlope = 0.2;
constexpr double kAlpha = 0.7, kScale = 1.2, kInputScale = 0.9;
// SELU's coefficients, as torch.nn.functional.selu passes them to elu.
constexpr double kSeluAlpha = 1.6732632423543772, kSeluScale = 1.0507009873554805;
constexpr double kBeta = 2.0, kThreshold = 3.0;
constexpr double kLow = -0.5, kHigh = 2.0;

double elu_ref(double x, double alpha, double scale, double in) {
  return x > 0 ? scale * x : alpha * scale * std::expm1(in * x);
}
double elu_grad_ref(double g, double x, double alpha, double scale, double in) {
  return x > 0 ? g * scale : g * in * alpha * scale * std::exp(in * x);
}
double softplus_ref(double x, double beta, double threshold) {
  return beta * x > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}
double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double mish_ref(double x) { return x * std::tanh(softplus_ref(x, 1, 20)); }
double mish_grad_ref(double g, double x) {
  const double t = std::tanh(softplus_ref(x, 1, 20));
  return g * (t + x * sigmoid_ref(x) * (1 - t * t));
}

}  // namespace

TESSERA_CONFORMANCE_OP("leaky_relu") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return leaky_relu(x, kSlope); },
                    [](double x) { return x > 0 ? x : x * kSlope; }, same);
}
TESSERA_CONFORMANCE_OP("leaky_relu_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) { return leaky_relu_backward(g, x, kSlope); },
                     [](double g, double x) { return x > 0 ? g : g * kSlope; }, same);
}
TESSERA_CONFORMANCE_OP("elu") {
  return unary_case(floating_dtypes(),
                    [](const Tensor& x) { return elu(x, kAlpha, kScale, kInputScale); },
                    [](double x) { return elu_ref(x, kAlpha, kScale, kInputScale); }, same, -5.0,
                    5.0);
}
TESSERA_CONFORMANCE_OP("elu with selu's coefficients") {
  return unary_case(floating_dtypes(),
                    [](const Tensor& x) { return elu(x, kSeluAlpha, kSeluScale, 1); },
                    [](double x) { return elu_ref(x, kSeluAlpha, kSeluScale, 1); }, same, -5.0,
                    5.0);
}
TESSERA_CONFORMANCE_OP("elu_backward of the input") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) {
                       return elu_backward(g, kAlpha, kScale, kInputScale, false, x);
                     },
                     [](double g, double x) { return elu_grad_ref(g, x, kAlpha, kScale, kInputScale); },
                     same, -4.0, 4.0);
}
TESSERA_CONFORMANCE_OP("elu_backward of the result") {
  // The in-place form saves the result y: for y <= 0 the slope is
  // input_scale * (y + alpha * scale).
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& y) {
                       return elu_backward(g, kAlpha, kScale, kInputScale, true, y);
                     },
                     [](double g, double y) {
                       return y > 0 ? g * kScale : g * kInputScale * (y + kAlpha * kScale);
                     },
                     same, -0.8, 3.0, false);
}
TESSERA_CONFORMANCE_OP("softplus") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return softplus(x, kBeta, kThreshold); },
                    [](double x) { return softplus_ref(x, kBeta, kThreshold); }, same, -5.0, 5.0);
}
TESSERA_CONFORMANCE_OP("softplus default threshold, large inputs") {
  // exp(x) of a half overflows from 11.1 on: the kernels compute in float32.
  return unary_case(floating_dtypes(), [](const Tensor& x) { return softplus(x); },
                    [](double x) { return softplus_ref(x, 1, 20); }, same, -19.0, 19.0, false);
}
TESSERA_CONFORMANCE_OP("softplus_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) {
                       return softplus_backward(g, x, kBeta, kThreshold);
                     },
                     [](double g, double x) { return kBeta * x > kThreshold ? g : g * sigmoid_ref(kBeta * x); },
                     same, -5.0, 5.0);
}
TESSERA_CONFORMANCE_OP("hardtanh") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return hardtanh(x, kLow, kHigh); },
                    [](double x) { return std::isnan(x) ? x : std::clamp(x, kLow, kHigh); }, same);
}
TESSERA_CONFORMANCE_OP("hardtanh_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) { return hardtanh_backward(g, x, kLow, kHigh); },
                     [](double g, double x) { return x <= kLow || x >= kHigh ? 0.0 : g; }, same);
}
TESSERA_CONFORMANCE_OP("log_sigmoid") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return log_sigmoid(x); },
                    [](double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::fabs(x))); },
                    same, -30.0, 30.0);
}
TESSERA_CONFORMANCE_OP("log_sigmoid_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) { return log_sigmoid_backward(g, x); },
                     [](double g, double x) { return g * sigmoid_ref(-x); }, same, -10.0, 10.0);
}
TESSERA_CONFORMANCE_OP("mish") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return mish(x); }, mish_ref, same,
                    -8.0, 25.0);
}
TESSERA_CONFORMANCE_OP("mish_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) { return mish_backward(g, x); },
                     mish_grad_ref, same, -8.0, 8.0);
}

}  // namespace tessera::conformance
