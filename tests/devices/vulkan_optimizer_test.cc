// The Vulkan device's fused optimizer steps (devices/vulkan/kernels/
// optimizer.cc) against the CPU device's kernels on the same inputs:
// f32, f16 and bf16 without the host, every flag of Adam, AdamW, SGD and
// Adagrad, grad_scale (the gradient written back unscaled), NaN and
// infinity propagated as the CPU kernel does, contiguous views at an
// element offset, f64 in double (on the device where it has shaderFloat64,
// else through the host), and a parameter with more elements
// than one dispatch has invocations. Both devices compute 16-bit floats in
// f32 and round each stored value once, so results agree to an ulp of the
// storage type (the pointwise path, rounding after every op, would not).
// Skipped without a Vulkan device.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "devices/vulkan/vulkan_device.h"
#include "runtime/tessera.h"
#include "tests/ops/reference.h"
#include "tests/devices/vulkan_testing.h"
#include "tests/support/skip.h"

using namespace tessera;
using namespace tessera::vulkan_testing;

namespace {

enum class Optimizer { kAdam, kSgd, kAdagrad };

// One call of a fused op on one parameter.
struct StepCall {
  std::string name;
  Optimizer optimizer;
  AdamHyper adam{};
  SgdHyper sgd{};
  AdagradHyper adagrad{};
  double step = 1;
  double grad_scale = 0;  // 0: none

  // The state tensors after param and grad.
  int states() const {
    switch (optimizer) {
      case Optimizer::kAdam: return adam.amsgrad ? 3 : 2;
      case Optimizer::kSgd: return sgd.momentum != 0 ? 1 : 0;
      default: return 1;
    }
  }
};

// tensors: param, grad, then the state tensors, all on one device.
void run_step(const StepCall& c, std::vector<Tensor>& tensors) {
  const std::vector<Tensor> param{tensors[0]}, grad{tensors[1]};
  auto state = [&](int k) { return std::vector<Tensor>{tensors[2 + k]}; };
  Tensor scale;
  // A host tensor: the front end reads it with item() on either device.
  if (c.grad_scale != 0) scale = full({}, c.grad_scale, TensorOptions(DType::kF32));
  switch (c.optimizer) {
    case Optimizer::kAdam:
      fused_adam_(param, grad, state(0), state(1),
                  c.adam.amsgrad ? state(2) : std::vector<Tensor>{}, {c.step}, c.adam, scale);
      break;
    case Optimizer::kSgd:
      fused_sgd_(param, grad, c.states() > 0 ? state(0) : std::vector<Tensor>{}, c.sgd, scale);
      break;
    case Optimizer::kAdagrad:
      fused_adagrad_(param, grad, state(0), {c.step}, c.adagrad, scale);
      break;
  }
}

// param and grad in N(0, 1) * 2; the first state N(0, 1) (momentum,
// exp_avg) or |N(0, 1)| (Adagrad's sum), later ones |N(0, 1)| (second
// moments), as host f32 tensors of `sizes`.
std::vector<Tensor> host_tensors(const StepCall& c, const Shape& sizes, uint64_t seed) {
  Generator gen(seed);
  const TensorOptions f32(DType::kF32);
  std::vector<Tensor> t{mul(randn(sizes, f32, &gen), Scalar(2)),
                        mul(randn(sizes, f32, &gen), Scalar(2))};
  for (int k = 0; k < c.states(); ++k) {
    Tensor s = randn(sizes, f32, &gen);
    t.push_back(k > 0 || c.optimizer == Optimizer::kAdagrad ? abs(s) : s);
  }
  return t;
}

struct Tolerance {
  double rtol, atol;
};

// An ulp of the storage type (the CPU build may fuse multiply-adds, the
// shaders do not, so a rounding can land on either side).
Tolerance ulp_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF16: return {1e-3, 1e-6};
    case DType::kBF16: return {8e-3, 1e-5};
    case DType::kF64: return {1e-14, 1e-300};
    default: return {1e-6, 1e-6};
  }
}

// The first element where got and want differ beyond tol (NaN matches NaN,
// infinities match exactly), or -1.
int64_t first_mismatch(const Tensor& got, const Tensor& want, Tolerance tol) {
  const std::vector<double> g = tessera::testing::read_strided(got.to(host_device()));
  const std::vector<double> w = tessera::testing::read_strided(want);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
    if (!(std::abs(g[i] - w[i]) <= tol.atol + tol.rtol * std::abs(w[i]))) {
      UNSCOPED_INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

// Runs the call on both devices from the same host tensors (converted to
// dtype) and checks every updated tensor.
void check_against_cpu(const StepCall& c, std::vector<Tensor> host, DType dtype) {
  std::vector<Tensor> on_cpu, on_gpu;
  for (const Tensor& t : host) {
    on_cpu.push_back(t.to(dtype));
    on_gpu.push_back(on_cpu.back().to(gpu()));
  }
  run_step(c, on_cpu);
  run_step(c, on_gpu);
  const char* names[] = {"param", "grad", "state 0", "state 1", "state 2"};
  for (size_t k = 0; k < on_gpu.size(); ++k) {
    INFO(names[k]);
    CHECK(first_mismatch(on_gpu[k], on_cpu[k], ulp_tolerance(dtype)) == -1);
  }
}

StepCall adam(std::string name, AdamHyper h, double step, double grad_scale = 0) {
  return {.name = std::move(name), .optimizer = Optimizer::kAdam, .adam = h, .step = step,
          .grad_scale = grad_scale};
}

StepCall sgd(std::string name, SgdHyper h, double grad_scale = 0) {
  return {.name = std::move(name), .optimizer = Optimizer::kSgd, .sgd = h,
          .grad_scale = grad_scale};
}

StepCall adagrad(std::string name, AdagradHyper h, double step, double grad_scale = 0) {
  return {.name = std::move(name), .optimizer = Optimizer::kAdagrad, .adagrad = h, .step = step,
          .grad_scale = grad_scale};
}

std::vector<StepCall> every_variant() {
  return {
      adam("Adam, weight decay 0.1, step 3",
           {.lr = 0.05, .beta1 = 0.9, .beta2 = 0.999, .weight_decay = 0.1, .eps = 1e-8}, 3),
      adam("Adam, amsgrad, maximize, beta1 0.3 (the other lerp form), grad_scale 6",
           {.lr = 0.05, .beta1 = 0.3, .beta2 = 0.99, .weight_decay = 0, .eps = 1e-3,
            .amsgrad = true, .maximize = true},
           2, 6),
      adam("AdamW, amsgrad, weight decay 0.2, step 7",
           {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .weight_decay = 0.2, .eps = 1e-8,
            .amsgrad = true, .decoupled_weight_decay = true},
           7),
      sgd("SGD without momentum, weight decay, maximize, grad_scale 8",
          {.lr = 0.1, .weight_decay = 0.05, .momentum = 0, .dampening = 0, .maximize = true}, 8),
      sgd("SGD, momentum, first step (dampening not applied)",
          {.lr = 0.1, .weight_decay = 0, .momentum = 0.9, .dampening = 0.5,
           .is_first_step = true}),
      sgd("SGD, momentum, dampening 0.3, later step",
          {.lr = 0.1, .weight_decay = 0.01, .momentum = 0.9, .dampening = 0.3}),
      sgd("SGD, nesterov, later step, grad_scale 2",
          {.lr = 0.1, .weight_decay = 0.01, .momentum = 0.9, .dampening = 0, .nesterov = true},
          2),
      adagrad("Adagrad, lr_decay 0.1, weight decay, maximize, step 4, grad_scale 3",
              {.lr = 0.1, .lr_decay = 0.1, .weight_decay = 0.1, .eps = 1e-10, .maximize = true},
              4, 3),
  };
}

}  // namespace

TEST_CASE("vulkan: fused optimizer steps match the CPU kernels in f32, f16 and bf16",
          "[vulkan][kernels][optimizer]") {
  REQUIRE_VULKAN();
  uint64_t seed = 1;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const StepCall& c : every_variant()) {
      INFO(dtype_name(dtype) << ": " << c.name);
      reset_cpu_fallback_counts();
      check_against_cpu(c, host_tensors(c, {33, 31}, seed++), dtype);
      CHECK(cpu_fallback_counts().empty());
    }
  }
}

TEST_CASE("vulkan: fused optimizer steps propagate NaN and infinity as the CPU kernels",
          "[vulkan][kernels][optimizer]") {
  REQUIRE_VULKAN();
  const double nan = std::nan(""), inf = INFINITY;
  for (const StepCall& c : every_variant()) {
    INFO(c.name);
    std::vector<Tensor> host = host_tensors(c, {16}, 7);
    auto set = [&](size_t k, int64_t i, double v) {
      if (k < host.size()) host[k].slice(0, i, i + 1).fill_(v);
    };
    set(1, 0, nan);   // gradient
    set(1, 1, inf);
    set(1, 2, -inf);
    set(0, 3, nan);   // parameter
    set(2, 4, nan);   // first state
    set(3, 5, nan);   // Adam: exp_avg_sq
    set(4, 6, nan);   // amsgrad: max_exp_avg_sq, NaN against a number
    set(4, 7, inf);
    set(1, 8, 0.0);   // a zero gradient over a NaN max_exp_avg_sq
    set(4, 8, nan);
    check_against_cpu(c, host, DType::kF32);
  }
}

TEST_CASE("vulkan: fused optimizer steps on contiguous views at an element offset",
          "[vulkan][kernels][optimizer]") {
  REQUIRE_VULKAN();
  // Each tensor is elements [1, 1 + n) of its own buffer: the f16 ones
  // start 2 bytes into it, and element 0 must stay as it was.
  const int64_t n = 301;
  for (DType dtype : {DType::kF16, DType::kF32}) {
    for (const StepCall& c : every_variant()) {
      INFO(dtype_name(dtype) << ": " << c.name);
      std::vector<Tensor> cpu_bases, gpu_bases, on_cpu, on_gpu;
      for (const Tensor& t : host_tensors(c, {n + 1}, 11)) {
        cpu_bases.push_back(t.to(dtype));
        gpu_bases.push_back(cpu_bases.back().to(gpu()));
        on_cpu.push_back(cpu_bases.back().slice(0, 1, n + 1));
        on_gpu.push_back(gpu_bases.back().slice(0, 1, n + 1));
        REQUIRE(on_gpu.back().is_contiguous());
      }
      reset_cpu_fallback_counts();
      run_step(c, on_cpu);
      run_step(c, on_gpu);
      CHECK(cpu_fallback_counts().empty());
      for (size_t k = 0; k < on_gpu.size(); ++k) {
        CHECK(first_mismatch(gpu_bases[k], cpu_bases[k], ulp_tolerance(dtype)) == -1);
      }
    }
  }
}

TEST_CASE("vulkan: fused optimizer steps on f64 compute in double, natively with shaderFloat64",
          "[vulkan][kernels][optimizer][f64]") {
  REQUIRE_VULKAN();
  const bool f64_shaders = vulkan::device_info(0).shader_f64;
  const double nan = std::nan(""), inf = INFINITY;
  for (const StepCall& c : every_variant()) {
    INFO(c.name);
    // Values an f32 computation would round away: an update of 1e-12 on a
    // parameter of 1 changes it only in double.
    std::vector<Tensor> host;
    for (const Tensor& t : host_tensors(c, {37, 3}, 13)) host.push_back(t.to(DType::kF64));
    host[0].slice(0, 0, 1).fill_(1.0 + std::ldexp(1.0, -40));
    host[1].slice(0, 0, 1).fill_(1e-12);
    host[1].slice(0, 1, 2).fill_(nan);
    host[1].slice(0, 2, 3).fill_(inf);
    reset_cpu_fallback_counts();
    check_against_cpu(c, host, DType::kF64);
    const char* kernel = c.optimizer == Optimizer::kAdam  ? "adam_step"
                         : c.optimizer == Optimizer::kSgd ? "sgd_step"
                                                          : "adagrad_step";
    CHECK(fallback_count(kernel) == (f64_shaders ? 0 : 1));
  }
}

TEST_CASE("vulkan: a fused AdamW step over more elements than one dispatch's invocations",
          "[vulkan][kernels][optimizer]") {
  REQUIRE_VULKAN();
  // 65535 work groups of 256 invocations cover 2^24 - 256 elements; each
  // invocation strides over the rest. The values repeat a random block of
  // 4099 (random numbers for every element take seconds on the CPU).
  const StepCall c = every_variant()[2];
  const int64_t n = (int64_t{1} << 24) + 4097, block = 4099, blocks = (n + block - 1) / block;
  std::vector<Tensor> on_cpu, on_gpu;
  for (const Tensor& t : host_tensors(c, {block}, 17)) {
    const Tensor repeated = t.expand({blocks, block}).contiguous().reshape({blocks * block});
    on_cpu.push_back(repeated.slice(0, 0, n));
    on_gpu.push_back(on_cpu.back().to(gpu()));
  }
  run_step(c, on_cpu);
  run_step(c, on_gpu);
  // |got - want| <= atol + rtol |want| everywhere, as tensor ops (a loop
  // over doubles would take longer than the step).
  const Tolerance tol = ulp_tolerance(DType::kF32);
  for (size_t k = 0; k < on_gpu.size(); ++k) {
    const Tensor error = abs(sub(on_gpu[k].to(host_device()), on_cpu[k]));
    const Tensor bound = add(mul(abs(on_cpu[k]), Scalar(tol.rtol)), Scalar(tol.atol));
    CHECK(all(le(error, bound)).item<bool>());
  }
}
