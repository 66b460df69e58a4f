// The validation errors of the fused optimizer steps (fused_adam_ in its
// Adam and AdamW forms, fused_sgd_, fused_adagrad_): list lengths, a state
// tensor of another shape, dtype or device, integer parameters, and a
// grad_scale or found_inf of more (or fewer) than one element. Each message
// names PyTorch's op and the list. The op cases are in optimizer_cases.cc.
#include <algorithm>
#include <functional>
#include <stdexcept>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// A device of another type than d's: the error cases that need one run
// only where this machine has two device types.
bool has_two_device_types() {
  const std::vector<Device> devices = DeviceRegistry::instance().all_devices();
  return std::any_of(devices.begin(), devices.end(),
                     [&](const Device& x) { return x.type != devices.front().type; });
}

Device other_device(Device d) {
  for (const Device& x : DeviceRegistry::instance().all_devices()) {
    if (x.type != d.type) return x;
  }
  throw std::logic_error("no device of another type");
}

Tensor f32(Device d, const Shape& s) { return ones(s, d); }
Tensor typed(Device d, const Shape& s, DType t) { return ones(s, TensorOptions(t, d)); }

// An Adam call over two parameters [2, 3] and [4] with matching state,
// after `edit` changes its arguments.
struct AdamArgs {
  std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
  std::vector<double> steps;
  AdamHyper hyper{.lr = 0.05, .beta1 = 0.9, .beta2 = 0.999, .weight_decay = 0, .eps = 1e-8};
  Tensor grad_scale, found_inf;
};

void call_adam(Device d, const std::function<void(AdamArgs&)>& edit) {
  auto list = [&] { return std::vector<Tensor>{f32(d, {2, 3}), f32(d, {4})}; };
  AdamArgs a{list(), list(), list(), list(), {}, {1, 1}};
  edit(a);
  fused_adam_(a.params, a.grads, a.exp_avgs, a.exp_avg_sqs, a.max_exp_avg_sqs, a.steps,
              a.hyper, a.grad_scale, a.found_inf);
}

void call_sgd(Device d, double momentum, const std::function<void(std::vector<Tensor>& params,
                                                                  std::vector<Tensor>& grads,
                                                                  std::vector<Tensor>& bufs,
                                                                  Tensor& grad_scale,
                                                                  Tensor& found_inf)>& edit) {
  auto list = [&] { return std::vector<Tensor>{f32(d, {2, 3}), f32(d, {4})}; };
  std::vector<Tensor> params = list(), grads = list(), bufs = momentum != 0 ? list()
                                                                            : std::vector<Tensor>{};
  Tensor grad_scale, found_inf;
  edit(params, grads, bufs, grad_scale, found_inf);
  fused_sgd_(params, grads, bufs,
             SgdHyper{.lr = 0.1, .weight_decay = 0, .momentum = momentum, .dampening = 0},
             grad_scale, found_inf);
}

void call_adagrad(Device d, const std::function<void(std::vector<Tensor>& params,
                                                     std::vector<Tensor>& grads,
                                                     std::vector<Tensor>& sums,
                                                     std::vector<double>& steps,
                                                     Tensor& grad_scale, Tensor& found_inf)>& edit) {
  auto list = [&] { return std::vector<Tensor>{f32(d, {2, 3}), f32(d, {4})}; };
  std::vector<Tensor> params = list(), grads = list(), sums = list();
  std::vector<double> steps = {1, 1};
  Tensor grad_scale, found_inf;
  edit(params, grads, sums, steps, grad_scale, found_inf);
  fused_adagrad_(params, grads, sums, steps,
                 AdagradHyper{.lr = 0.1, .lr_decay = 0, .weight_decay = 0, .eps = 1e-10},
                 grad_scale, found_inf);
}


}  // namespace

TESSERA_CONFORMANCE_ERRORS("fused_adam_") {
  std::vector<ErrorCase> cases = {
      {"one gradient for two parameters",
       [](Device d) { call_adam(d, [](AdamArgs& a) { a.grads.pop_back(); }); },
       ErrorKind::kValue, {"_fused_adam_", "expected 2 grads", "got 1"}},
      {"an exp_avg of another shape",
       [](Device d) { call_adam(d, [d](AdamArgs& a) { a.exp_avgs[0] = f32(d, {3, 2}); }); },
       ErrorKind::kValue, {"_fused_adam_", "exp_avgs 0", "float32[3, 2]", "float32[2, 3]"}},
      {"an exp_avg_sq of another dtype",
       [](Device d) {
         call_adam(d, [d](AdamArgs& a) { a.exp_avg_sqs[1] = typed(d, {4}, DType::kF64); });
       },
       ErrorKind::kValue, {"_fused_adam_", "exp_avg_sqs 1", "float64[4]", "float32[4]"}},
      {"an undefined exp_avg",
       [](Device d) { call_adam(d, [](AdamArgs& a) { a.exp_avgs[1] = Tensor(); }); },
       ErrorKind::kValue, {"_fused_adam_", "exp_avgs 1", "undefined"}},
      {"AdamW with amsgrad and no max_exp_avg_sqs",
       [](Device d) {
         call_adam(d, [](AdamArgs& a) {
           a.hyper.decoupled_weight_decay = true;
           a.hyper.amsgrad = true;
         });
       },
       ErrorKind::kValue, {"_fused_adamw_", "expected 2 max_exp_avg_sqs", "got 0"}},
      {"one step count for two parameters",
       [](Device d) { call_adam(d, [](AdamArgs& a) { a.steps = {1}; }); }, ErrorKind::kValue,
       {"_fused_adam_", "2 state_steps", "got 1"}},
      {"integer parameters",
       [](Device d) {
         call_adam(d, [d](AdamArgs& a) {
           for (auto* list : {&a.params, &a.grads, &a.exp_avgs, &a.exp_avg_sqs}) {
             *list = {typed(d, {2, 3}, DType::kI64), typed(d, {4}, DType::kI64)};
           }
         });
       },
       ErrorKind::kType, {"_fused_adam_", "floating parameters", "parameter 0", "int64[2, 3]"}},
      {"AdamW with a grad_scale of two elements",
       [](Device d) {
         call_adam(d, [d](AdamArgs& a) {
           a.hyper.decoupled_weight_decay = true;
           a.grad_scale = f32(d, {2});
         });
       },
       ErrorKind::kValue, {"_fused_adamw_", "one-element grad_scale", "float32[2]"}},
      {"a found_inf of three elements",
       [](Device d) { call_adam(d, [d](AdamArgs& a) { a.found_inf = f32(d, {3}); }); },
       ErrorKind::kValue, {"_fused_adam_", "one-element found_inf", "float32[3]"}},
  };
  if (has_two_device_types()) {
    cases.push_back(
        {"an exp_avg on another device",
         [](Device d) {
           call_adam(d, [d](AdamArgs& a) { a.exp_avgs[1] = f32(other_device(d), {4}); });
         },
         ErrorKind::kValue, {"_fused_adam_", "exp_avgs 1", "must match its parameter"}});
  }
  return cases;
}

TESSERA_CONFORMANCE_ERRORS("fused_sgd_") {
  using Tensors = std::vector<Tensor>;
  std::vector<ErrorCase> cases = {
      {"three gradients for two parameters",
       [](Device d) {
         call_sgd(d, 0, [d](Tensors&, Tensors& grads, Tensors&, Tensor&, Tensor&) {
           grads.push_back(f32(d, {1}));
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "expected 2 grads", "got 3"}},
      {"momentum without momentum buffers",
       [](Device d) {
         call_sgd(d, 0.9, [](Tensors&, Tensors&, Tensors& bufs, Tensor&, Tensor&) {
           bufs.clear();
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "expected 2 momentum_buffer_list", "got 0"}},
      {"a momentum buffer of another dtype",
       [](Device d) {
         call_sgd(d, 0.9, [d](Tensors&, Tensors&, Tensors& bufs, Tensor&, Tensor&) {
           bufs[0] = typed(d, {2, 3}, DType::kF16);
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "momentum_buffer_list 0", "float16[2, 3]"}},
      {"a gradient of another shape",
       [](Device d) {
         call_sgd(d, 0, [d](Tensors&, Tensors& grads, Tensors&, Tensor&, Tensor&) {
           grads[1] = f32(d, {2, 2});
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "grads 1", "float32[2, 2]", "float32[4]"}},
      {"integer parameters",
       [](Device d) {
         call_sgd(d, 0, [d](Tensors& params, Tensors& grads, Tensors&, Tensor&, Tensor&) {
           params = grads = {typed(d, {2, 3}, DType::kI32), typed(d, {4}, DType::kI32)};
         });
       },
       ErrorKind::kType, {"_fused_sgd_", "floating parameters", "int32[2, 3]"}},
      {"a grad_scale of two elements",
       [](Device d) {
         call_sgd(d, 0.9, [d](Tensors&, Tensors&, Tensors&, Tensor& grad_scale, Tensor&) {
           grad_scale = f32(d, {1, 2});
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "one-element grad_scale", "float32[1, 2]"}},
      {"a found_inf of no elements",
       [](Device d) {
         call_sgd(d, 0, [d](Tensors&, Tensors&, Tensors&, Tensor&, Tensor& found_inf) {
           found_inf = f32(d, {0});
         });
       },
       ErrorKind::kValue, {"_fused_sgd_", "one-element found_inf", "float32[0]"}},
  };
  if (has_two_device_types()) {
    cases.push_back(
        {"a gradient on another device",
         [](Device d) {
           call_sgd(d, 0, [d](Tensors&, Tensors& grads, Tensors&, Tensor&, Tensor&) {
             grads[0] = f32(other_device(d), {2, 3});
           });
         },
         ErrorKind::kValue, {"_fused_sgd_", "grads 0", "must match its parameter"}});
  }
  return cases;
}

TESSERA_CONFORMANCE_ERRORS("fused_adagrad_") {
  using Tensors = std::vector<Tensor>;
  using Steps = std::vector<double>;
  std::vector<ErrorCase> cases = {
      {"one state_sum for two parameters",
       [](Device d) {
         call_adagrad(d, [](Tensors&, Tensors&, Tensors& sums, Steps&, Tensor&, Tensor&) {
           sums.pop_back();
         });
       },
       ErrorKind::kValue, {"_fused_adagrad_", "expected 2 state_sums", "got 1"}},
      {"a state_sum of another shape",
       [](Device d) {
         call_adagrad(d, [d](Tensors&, Tensors&, Tensors& sums, Steps&, Tensor&, Tensor&) {
           sums[0] = f32(d, {2, 3, 1});
         });
       },
       ErrorKind::kValue, {"_fused_adagrad_", "state_sums 0", "float32[2, 3, 1]"}},
      {"three step counts for two parameters",
       [](Device d) {
         call_adagrad(d, [](Tensors&, Tensors&, Tensors&, Steps& steps, Tensor&, Tensor&) {
           steps.push_back(1);
         });
       },
       ErrorKind::kValue, {"_fused_adagrad_", "2 state_steps", "got 3"}},
      {"integer parameters",
       [](Device d) {
         call_adagrad(d, [d](Tensors& params, Tensors& grads, Tensors& sums, Steps&, Tensor&,
                             Tensor&) {
           params = grads = sums = {typed(d, {2, 3}, DType::kI64), typed(d, {4}, DType::kI64)};
         });
       },
       ErrorKind::kType, {"_fused_adagrad_", "floating parameters", "int64[2, 3]"}},
      {"a grad_scale of four elements",
       [](Device d) {
         call_adagrad(d, [d](Tensors&, Tensors&, Tensors&, Steps&, Tensor& grad_scale, Tensor&) {
           grad_scale = f32(d, {4});
         });
       },
       ErrorKind::kValue, {"_fused_adagrad_", "one-element grad_scale", "float32[4]"}},
      {"a found_inf of two elements",
       [](Device d) {
         call_adagrad(d, [d](Tensors&, Tensors&, Tensors&, Steps&, Tensor&, Tensor& found_inf) {
           found_inf = f32(d, {2, 1});
         });
       },
       ErrorKind::kValue, {"_fused_adagrad_", "one-element found_inf", "float32[2, 1]"}},
  };
  if (has_two_device_types()) {
    cases.push_back(
        {"a state_sum on another device",
         [](Device d) {
           call_adagrad(d, [d](Tensors&, Tensors&, Tensors& sums, Steps&, Tensor&, Tensor&) {
             sums[1] = f32(other_device(d), {4});
           });
         },
         ErrorKind::kValue, {"_fused_adagrad_", "state_sums 1", "must match its parameter"}});
  }
  return cases;
}

}  // namespace tessera::conformance
