// The fused optimizer steps (fused_adam_ with Adam's and AdamW's weight
// decay, fused_sgd_, fused_adagrad_): op cases over lists of parameters
// against double references written from PyTorch's update rules. The
// validation errors are in optimizer_error_cases.cc.
//
// The ops update their lists in place, so each case's run clones the
// device inputs (keeping their strides) and returns every updated tensor:
// per parameter the parameter, its gradient (written back unscaled when
// grad_scale is passed, else only read) and its state.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// -- A call's sample. inputs: each parameter's tensors in slot order (the
// parameter, its gradient, then its state), then grad_scale and found_inf
// (float32, 0-d) when passed. dims: {parameters, found_inf (-1: not
// passed, else its value), each parameter's step, then the op's flags}.
// scalars: {grad_scale (0: not passed), then the op's hyperparameters}.

// Contiguous tensors take the device's step kernel; a parameter with any
// view among its tensors takes the pointwise path.
enum class Layout { kContiguous, kTransposed, kStridedGrad, kStridedState };

struct ParamSpec {
  Shape shape;
  int64_t step = 1;
  Layout layout = Layout::kContiguous;
};

// GradScaler's arguments: grad_scale 0 and found_inf -1 mean not passed.
struct Scaling {
  double grad_scale = 0;
  int64_t found_inf = -1;
};

struct SlotRange {
  double lo, hi;
};

// Parameters and gradients in [-3, 3]; each op gives its state's range.
constexpr SlotRange kParamRange{-3, 3}, kGradRange{-3, 3};

Tensor make_slot(const ParamSpec& p, size_t slot, size_t slots, DType t, uint64_t seed,
                 SlotRange r) {
  const bool is_view = p.layout == Layout::kTransposed ||
                       (p.layout == Layout::kStridedGrad && slot == 1) ||
                       (p.layout == Layout::kStridedState && slot == slots - 1);
  if (!is_view) return make_input(p.shape, t, seed, r.lo, r.hi);
  if (p.layout == Layout::kTransposed) {
    return make_input({p.shape[1], p.shape[0]}, t, seed, r.lo, r.hi).t();
  }
  Shape wide = p.shape;
  wide.back() *= 2;
  return make_input(wide, t, seed, r.lo, r.hi).slice(-1, 0, std::nullopt, 2);
}

Sample call_sample(std::string description, DType t, uint64_t seed,
                   const std::vector<ParamSpec>& params, const std::vector<SlotRange>& ranges,
                   Scaling scaling, std::vector<double> hyper, const Shape& flags) {
  Sample s;
  s.description = std::move(description);
  s.dims = {static_cast<int64_t>(params.size()), scaling.found_inf};
  for (size_t i = 0; i < params.size(); ++i) {
    s.dims.push_back(params[i].step);
    for (size_t k = 0; k < ranges.size(); ++k) {
      s.inputs.push_back(make_slot(params[i], k, ranges.size(), t,
                                   seed + 16 * i + k, ranges[k]));
    }
  }
  const TensorOptions f32(DType::kF32, host_device());
  if (scaling.grad_scale != 0) s.inputs.push_back(full({}, scaling.grad_scale, f32));
  if (scaling.found_inf >= 0) s.inputs.push_back(full({}, scaling.found_inf, f32));
  for (int64_t f : flags) s.dims.push_back(f);
  s.scalars.push_back(scaling.grad_scale);
  for (double h : hyper) s.scalars.push_back(h);
  return s;
}

// A sample's call, decoded.
struct Call {
  size_t params;
  std::vector<double> steps;
  Scaling scaling;
  std::vector<double> hyper;
  Shape flags;
};

Call call_of(const Sample& s) {
  Call c;
  c.params = static_cast<size_t>(s.dims[0]);
  c.scaling.found_inf = s.dims[1];
  for (size_t i = 0; i < c.params; ++i) c.steps.push_back(static_cast<double>(s.dims[2 + i]));
  c.flags.assign(s.dims.begin() + 2 + static_cast<int64_t>(c.params), s.dims.end());
  c.scaling.grad_scale = s.scalars[0].to<double>();
  for (size_t k = 1; k < s.scalars.size(); ++k) c.hyper.push_back(s.scalars[k].to<double>());
  return c;
}

// A copy on t's device with t's strides, so a view stays a view there.
Tensor clone_keeping_strides(const Tensor& t) {
  Tensor copy = empty_strided(t.sizes(), t.strides(), TensorOptions(t.dtype(), t.device()));
  copy.copy_(t);
  return copy;
}

// The device inputs as the op's lists: lists[k][i] is a clone of slot k
// of parameter i.
struct DeviceLists {
  std::vector<std::vector<Tensor>> lists;
  Tensor grad_scale, found_inf;

  // Every slot of every parameter, in the sample's order: the outputs.
  std::vector<Tensor> updated() const {
    std::vector<Tensor> out;
    for (size_t i = 0; i < lists[0].size(); ++i)
      for (const std::vector<Tensor>& list : lists) out.push_back(list[i]);
    return out;
  }
};

DeviceLists device_lists(const std::vector<Tensor>& in, const Call& c, size_t slots) {
  DeviceLists d;
  d.lists.resize(slots);
  for (size_t i = 0; i < c.params; ++i)
    for (size_t k = 0; k < slots; ++k) d.lists[k].push_back(clone_keeping_strides(in[i * slots + k]));
  size_t next = c.params * slots;
  if (c.scaling.grad_scale != 0) d.grad_scale = in[next++];
  if (c.scaling.found_inf >= 0) d.found_inf = in[next++];
  return d;
}

// One element's update: its slot values in, the updated ones out, in
// double. The gradient arrives unscaled.
using ElementUpdate = std::function<void(std::vector<double>& slot_values, double step)>;

std::vector<Expected> step_reference(const Sample& s, size_t slots, const ElementUpdate& update) {
  const Call c = call_of(s);
  std::vector<Expected> out;
  for (size_t i = 0; i < c.params; ++i) {
    const Tensor& param = s.inputs[i * slots];
    const DType t = param.dtype();
    std::vector<std::vector<double>> v(slots);
    for (size_t k = 0; k < slots; ++k) v[k] = values_of(s.inputs[i * slots + k]);
    std::vector<double> e(slots);
    // found_inf == 1 skips the step: every tensor, the gradient too, stays.
    for (size_t j = 0; c.scaling.found_inf != 1 && j < v[0].size(); ++j) {
      for (size_t k = 0; k < slots; ++k) e[k] = v[k][j];
      // The unscaled gradient is stored, and the update reads it back.
      if (c.scaling.grad_scale != 0) e[1] = round_to_dtype(e[1] / c.scaling.grad_scale, t);
      update(e, c.steps[i]);
      for (size_t k = 0; k < slots; ++k) v[k][j] = e[k];
    }
    for (size_t k = 0; k < slots; ++k) {
      for (double& x : v[k]) x = round_to_dtype(x, t);
      out.push_back(Expected{param.sizes(), t, std::move(v[k])});
    }
  }
  return out;
}

// The CPU kernels compute 16-bit floats in float and round each stored
// value once; the pointwise path rounds after every op (about ten on
// Adam's chain), so 16-bit results get a few roundings of values near 1
// in both relative and absolute terms (a parameter may cross zero).
Tolerance step_tolerance(DType t, const Sample&) {
  const Tolerance d = default_tolerance(t);
  if (t == DType::kF16 || t == DType::kBF16) return Tolerance{2 * d.rtol, 2 * d.rtol};
  return d;
}

// Shape classes every call mixes: 0-d, empty, 2-D and 3-D.
std::vector<ParamSpec> mixed_params(int64_t step) {
  return {{{}, step}, {{0, 3}, step}, {{5, 7}, step}, {{3, 4, 2}, step}};
}

// Each tensor of one parameter a view, next to a contiguous one.
std::vector<ParamSpec> noncontiguous_params(int64_t step) {
  return {{{6, 5}, step, Layout::kTransposed},
          {{4, 3}, step, Layout::kStridedGrad},
          {{7}, step, Layout::kStridedState},
          {{2, 3}, step}};
}

// One parameter large enough for the CPU kernels to split it over threads.
std::vector<ParamSpec> large_params(int64_t step) {
  return {{{70000}, step}, {{}, 1}, {{3, 5}, step + 2}};
}

// -- fused_adam_. hyperparameters: lr, beta1, beta2, weight_decay, eps;
// flags: amsgrad, maximize, decoupled_weight_decay. Slots: param, grad,
// exp_avg, exp_avg_sq, [max_exp_avg_sq].
std::vector<SlotRange> adam_ranges(const AdamHyper& h) {
  std::vector<SlotRange> r = {kParamRange, kGradRange, {-1, 1}, {0.2, 2}};
  if (h.amsgrad) r.push_back({0.2, 2.5});
  return r;
}

Sample adam_sample(std::string description, DType t, uint64_t seed,
                   const std::vector<ParamSpec>& params, const AdamHyper& h,
                   Scaling scaling = {}) {
  return call_sample(std::move(description), t, seed, params, adam_ranges(h), scaling,
                     {h.lr, h.beta1, h.beta2, h.weight_decay, h.eps},
                     {h.amsgrad, h.maximize, h.decoupled_weight_decay});
}

AdamHyper adam_hyper(const Call& c) {
  return AdamHyper{c.hyper[0], c.hyper[1], c.hyper[2], c.hyper[3], c.hyper[4],
                   c.flags[0] != 0, c.flags[1] != 0, c.flags[2] != 0};
}

void adam_update(std::vector<double>& e, const AdamHyper& h, double step) {
  double& p = e[0];
  double& m = e[2];
  double& v = e[3];
  double g = h.maximize ? -e[1] : e[1];
  if (h.decoupled_weight_decay) {
    p *= 1 - h.lr * h.weight_decay;
  } else {
    g += h.weight_decay * p;
  }
  m = h.beta1 * m + (1 - h.beta1) * g;
  v = h.beta2 * v + (1 - h.beta2) * g * g;
  double second = v;
  if (h.amsgrad) second = e[4] = std::max(e[4], v);
  const double bias_correction1 = 1 - std::pow(h.beta1, step);
  const double bias_correction2 = 1 - std::pow(h.beta2, step);
  p -= h.lr / bias_correction1 * m / (std::sqrt(second / bias_correction2) + h.eps);
}

OpCase adam_case(std::function<std::vector<Sample>(DType)> samples) {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = std::move(samples);
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Call call = call_of(s);
    const AdamHyper h = adam_hyper(call);
    const DeviceLists d = device_lists(in, call, adam_ranges(h).size());
    fused_adam_(d.lists[0], d.lists[1], d.lists[2], d.lists[3],
                h.amsgrad ? d.lists[4] : std::vector<Tensor>{}, call.steps, h, d.grad_scale,
                d.found_inf);
    return d.updated();
  };
  c.reference = [](const Sample& s) {
    const AdamHyper h = adam_hyper(call_of(s));
    return step_reference(s, adam_ranges(h).size(),
                          [&](std::vector<double>& e, double step) { adam_update(e, h, step); });
  };
  c.tolerance = step_tolerance;
  return c;
}

// Adam's defaults but a larger lr, so that updates stand out of the
// tolerance; weight decay coupled (Adam) or decoupled (AdamW).
AdamHyper adam_base(bool decoupled, double weight_decay) {
  return AdamHyper{.lr = 0.05, .beta1 = 0.9, .beta2 = 0.999, .weight_decay = weight_decay,
                   .eps = 1e-8, .decoupled_weight_decay = decoupled};
}

std::vector<Sample> adam_samples(DType t, bool decoupled) {
  const double wd = decoupled ? 0.1 : 0.0;
  const AdamHyper base = adam_base(decoupled, wd);
  AdamHyper amsgrad = base, maximize = base, decay = adam_base(decoupled, 0.2);
  amsgrad.amsgrad = true;
  maximize.maximize = true;
  AdamHyper varied{.lr = 0.1, .beta1 = 0.8, .beta2 = 0.99, .weight_decay = 0.05, .eps = 1e-3,
                   .amsgrad = true, .maximize = true, .decoupled_weight_decay = decoupled};
  std::vector<ParamSpec> per_param_steps = mixed_params(1);
  for (size_t i = 0; i < per_param_steps.size(); ++i) per_param_steps[i].step = 1 + 3 * i;
  return {
      adam_sample("step 1: 0-d, empty, [5, 7], [3, 4, 2]", t, 100, mixed_params(1), base),
      adam_sample("step 7", t, 200, mixed_params(7), base),
      adam_sample("amsgrad, step 3", t, 300, mixed_params(3), amsgrad),
      adam_sample("maximize, step 2", t, 400, mixed_params(2), maximize),
      adam_sample("weight decay 0.2, step 5", t, 500, mixed_params(5), decay),
      adam_sample("amsgrad, maximize, weight decay, betas (0.8, 0.99), eps 1e-3, "
                  "steps 1, 4, 7, 10",
                  t, 600, per_param_steps, varied),
      adam_sample("grad_scale 6, found_inf 0, step 4", t, 700, mixed_params(4), base, {6, 0}),
      adam_sample("grad_scale 6, found_inf 1: nothing changes", t, 800, mixed_params(4), amsgrad,
                  {6, 1}),
      adam_sample("found_inf 1 without grad_scale", t, 900, mixed_params(2), base, {0, 1}),
      adam_sample("non-contiguous: transposed, strided grad, strided state, amsgrad, step 3",
                  t, 1000, noncontiguous_params(3), amsgrad),
      adam_sample("non-contiguous with grad_scale 6", t, 1100, noncontiguous_params(2), decay,
                  {6, 0}),
      adam_sample("[70000] beside 0-d and [3, 5], amsgrad, step 7", t, 1200, large_params(7),
                  amsgrad),
  };
}

// -- fused_sgd_. hyperparameters: lr, weight_decay, momentum, dampening;
// flags: nesterov, maximize, is_first_step. Slots: param, grad,
// [momentum_buffer] (with momentum).
std::vector<SlotRange> sgd_ranges(const SgdHyper& h) {
  std::vector<SlotRange> r = {kParamRange, kGradRange};
  if (h.momentum != 0) r.push_back({-1, 1});
  return r;
}

Sample sgd_sample(std::string description, DType t, uint64_t seed,
                  const std::vector<ParamSpec>& params, const SgdHyper& h, Scaling scaling = {}) {
  return call_sample(std::move(description), t, seed, params, sgd_ranges(h), scaling,
                     {h.lr, h.weight_decay, h.momentum, h.dampening},
                     {h.nesterov, h.maximize, h.is_first_step});
}

SgdHyper sgd_hyper(const Call& c) {
  return SgdHyper{c.hyper[0], c.hyper[1], c.hyper[2], c.hyper[3],
                  c.flags[0] != 0, c.flags[1] != 0, c.flags[2] != 0};
}

void sgd_update(std::vector<double>& e, const SgdHyper& h) {
  double& p = e[0];
  double g = (h.maximize ? -e[1] : e[1]) + h.weight_decay * p;
  if (h.momentum != 0) {
    double& buf = e[2];
    buf = h.is_first_step ? g : h.momentum * buf + (1 - h.dampening) * g;
    g = h.nesterov ? g + h.momentum * buf : buf;
  }
  p -= h.lr * g;
}

std::vector<Sample> sgd_samples(DType t) {
  auto sgd = [](double momentum, double dampening, bool nesterov, bool first,
                double weight_decay = 0, bool maximize = false) {
    return SgdHyper{.lr = 0.1, .weight_decay = weight_decay, .momentum = momentum,
                    .dampening = dampening, .nesterov = nesterov, .maximize = maximize,
                    .is_first_step = first};
  };
  return {
      sgd_sample("no momentum: 0-d, empty, [5, 7], [3, 4, 2]", t, 100, mixed_params(1),
                 sgd(0, 0, false, false)),
      sgd_sample("no momentum, weight decay 0.05, maximize", t, 200, mixed_params(1),
                 sgd(0, 0, false, false, 0.05, true)),
      sgd_sample("momentum 0.9, first step (dampening 0.5 not applied)", t, 300, mixed_params(1),
                 sgd(0.9, 0.5, false, true)),
      sgd_sample("momentum 0.9, later step", t, 400, mixed_params(2), sgd(0.9, 0, false, false)),
      sgd_sample("momentum 0.9, dampening 0.3, later step", t, 500, mixed_params(2),
                 sgd(0.9, 0.3, false, false)),
      sgd_sample("nesterov, first step", t, 600, mixed_params(1), sgd(0.9, 0, true, true)),
      sgd_sample("nesterov, later step, weight decay 0.01", t, 700, mixed_params(2),
                 sgd(0.9, 0, true, false, 0.01)),
      sgd_sample("maximize, momentum 0.5, dampening 0.1, later step", t, 800, mixed_params(2),
                 sgd(0.5, 0.1, false, false, 0, true)),
      sgd_sample("grad_scale 6, found_inf 0, momentum", t, 900, mixed_params(2),
                 sgd(0.9, 0, false, false), {6, 0}),
      sgd_sample("grad_scale 6 without momentum", t, 1000, mixed_params(1),
                 sgd(0, 0, false, false, 0.05), {6, -1}),
      sgd_sample("grad_scale 6, found_inf 1: nothing changes", t, 1100, mixed_params(2),
                 sgd(0.9, 0.3, true, false, 0.01), {6, 1}),
      sgd_sample("non-contiguous: transposed, strided grad, strided buffer, nesterov", t, 1200,
                 noncontiguous_params(2), sgd(0.9, 0, true, false, 0.01)),
      sgd_sample("non-contiguous, no momentum, grad_scale 6", t, 1300, noncontiguous_params(1),
                 sgd(0, 0, false, false, 0.05, true), {6, 0}),
      sgd_sample("[70000] beside 0-d and [3, 5], momentum, dampening 0.3", t, 1400,
                 large_params(2), sgd(0.9, 0.3, false, false, 0.01)),
  };
}

// -- fused_adagrad_. hyperparameters: lr, lr_decay, weight_decay, eps;
// flags: maximize. Slots: param, grad, state_sum.
const std::vector<SlotRange> kAdagradRanges = {kParamRange, kGradRange, {0.1, 2}};

Sample adagrad_sample(std::string description, DType t, uint64_t seed,
                      const std::vector<ParamSpec>& params, const AdagradHyper& h,
                      Scaling scaling = {}) {
  return call_sample(std::move(description), t, seed, params, kAdagradRanges, scaling,
                     {h.lr, h.lr_decay, h.weight_decay, h.eps}, {h.maximize});
}

AdagradHyper adagrad_hyper(const Call& c) {
  return AdagradHyper{c.hyper[0], c.hyper[1], c.hyper[2], c.hyper[3], c.flags[0] != 0};
}

void adagrad_update(std::vector<double>& e, const AdagradHyper& h, double step) {
  double& p = e[0];
  double& sum = e[2];
  const double g = (h.maximize ? -e[1] : e[1]) + h.weight_decay * p;
  sum += g * g;
  p -= h.lr / (1 + (step - 1) * h.lr_decay) * g / (std::sqrt(sum) + h.eps);
}

std::vector<Sample> adagrad_samples(DType t) {
  auto adagrad = [](double lr_decay, double weight_decay = 0, bool maximize = false) {
    return AdagradHyper{.lr = 0.1, .lr_decay = lr_decay, .weight_decay = weight_decay,
                        .eps = 1e-10, .maximize = maximize};
  };
  std::vector<ParamSpec> per_param_steps = mixed_params(1);
  for (size_t i = 0; i < per_param_steps.size(); ++i) per_param_steps[i].step = 1 + 3 * i;
  return {
      adagrad_sample("step 1: 0-d, empty, [5, 7], [3, 4, 2]", t, 100, mixed_params(1),
                     adagrad(0)),
      adagrad_sample("lr_decay 0.1, step 4", t, 200, mixed_params(4), adagrad(0.1)),
      adagrad_sample("weight decay 0.1, maximize, step 2", t, 300, mixed_params(2),
                     adagrad(0, 0.1, true)),
      adagrad_sample("lr_decay 0.05, steps 1, 4, 7, 10", t, 400, per_param_steps,
                     adagrad(0.05)),
      adagrad_sample("grad_scale 6, found_inf 0, lr_decay 0.1, step 3", t, 500, mixed_params(3),
                     adagrad(0.1), {6, 0}),
      adagrad_sample("grad_scale 6, found_inf 1: nothing changes", t, 600, mixed_params(3),
                     adagrad(0.1, 0.1), {6, 1}),
      adagrad_sample("non-contiguous: transposed, strided grad, strided sum, step 5", t, 700,
                     noncontiguous_params(5), adagrad(0.1, 0.05, true)),
      adagrad_sample("[70000] beside 0-d and [3, 5], lr_decay 0.1, step 3", t, 800,
                     large_params(3), adagrad(0.1, 0.01)),
  };
}

}  // namespace

TESSERA_CONFORMANCE_OP("fused_adam_") {
  return adam_case([](DType t) { return adam_samples(t, false); });
}

TESSERA_CONFORMANCE_OP("fused_adamw_") {
  return adam_case([](DType t) { return adam_samples(t, true); });
}

TESSERA_CONFORMANCE_OP("fused_sgd_") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = sgd_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Call call = call_of(s);
    const SgdHyper h = sgd_hyper(call);
    const DeviceLists d = device_lists(in, call, sgd_ranges(h).size());
    fused_sgd_(d.lists[0], d.lists[1], h.momentum != 0 ? d.lists[2] : std::vector<Tensor>{}, h,
               d.grad_scale, d.found_inf);
    return d.updated();
  };
  c.reference = [](const Sample& s) {
    const SgdHyper h = sgd_hyper(call_of(s));
    return step_reference(s, sgd_ranges(h).size(),
                          [&](std::vector<double>& e, double) { sgd_update(e, h); });
  };
  c.tolerance = step_tolerance;
  return c;
}

TESSERA_CONFORMANCE_OP("fused_adagrad_") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = adagrad_samples;
  c.run = [](const std::vector<Tensor>& in, const Sample& s) {
    const Call call = call_of(s);
    const DeviceLists d = device_lists(in, call, kAdagradRanges.size());
    fused_adagrad_(d.lists[0], d.lists[1], d.lists[2], call.steps, adagrad_hyper(call),
                   d.grad_scale, d.found_inf);
    return d.updated();
  };
  c.reference = [](const Sample& s) {
    const AdagradHyper h = adagrad_hyper(call_of(s));
    return step_reference(s, kAdagradRanges.size(), [&](std::vector<double>& e, double step) {
      adagrad_update(e, h, step);
    });
  };
  c.tolerance = step_tolerance;
  return c;
}

}  // namespace tessera::conformance
