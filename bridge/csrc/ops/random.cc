// Random ops over the runtime's Philox generators (runtime_generator picks
// the torch.Generator's or the device's default one), so that one seed gives
// the same values as the runtime's own C++ API on every tessera device:
// uniform_, normal_ (and normal with tensor mean/std), random_ (three
// forms), randperm, bernoulli (float and tensor p), native_dropout and its
// backward.
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <optional>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/generator.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using OptGenerator = std::optional<at::Generator>;
using RT = tessera::Tensor;

at::Tensor& uniform_(at::Tensor& self, double from, double to, OptGenerator gen) {
  const OpScope scope(self);
  RT s = to_runtime(self, "uniform_");
  tessera::Generator* g = runtime_generator(gen, self.device());
  call_runtime([&] { tessera::uniform_(s, from, to, g); });
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, OptGenerator gen) {
  const OpScope scope(self);
  RT s = to_runtime(self, "normal_");
  tessera::Generator* g = runtime_generator(gen, self.device());
  call_runtime([&] { tessera::normal_(s, mean, std, g); });
  return self;
}

// -- normal with tensor mean and/or std: standard normal draws scaled by std
// and shifted by mean (broadcast), in mean's dtype (std's when mean is a
// float), as PyTorch composes it.
void check_std(const RT& std) {
  const bool negative = tessera::any(tessera::lt(std, tessera::Scalar(0))).item<bool>();
  TORCH_CHECK(!negative, "normal expects all elements of std >= 0.0");
}

RT normal_draw(const tessera::Shape& shape, tessera::DType dtype, tessera::Device device,
               tessera::Generator* g) {
  RT out = tessera::empty(shape, tessera::TensorOptions(dtype, device));
  tessera::normal_(out, 0.0, 1.0, g);
  return out;
}

at::Tensor normal_tensor_float(const at::Tensor& mean, double std, OptGenerator gen) {
  const OpScope scope(mean);
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  tessera::Generator* g = runtime_generator(gen, mean.device());
  return to_torch(call_runtime([&] {
    const RT m = to_runtime(mean, "normal");
    RT out = normal_draw(m.sizes(), m.dtype(), m.device(), g);
    tessera::mul_(out, tessera::Scalar(std));
    return out.add_(m);
  }));
}

at::Tensor normal_float_tensor(double mean, const at::Tensor& std, OptGenerator gen) {
  const OpScope scope(std);
  tessera::Generator* g = runtime_generator(gen, std.device());
  return to_torch(call_runtime([&] {
    const RT s = to_runtime(std, "normal");
    check_std(s);
    RT out = normal_draw(s.sizes(), s.dtype(), s.device(), g);
    out.mul_(s);
    return tessera::add_(out, tessera::Scalar(mean));
  }));
}

at::Tensor normal_tensor_tensor(const at::Tensor& mean, const at::Tensor& std,
                                OptGenerator gen) {
  const OpScope scope(mean, std);
  TORCH_CHECK(mean.device() == std.device(), "normal: expected mean and std on one device, got ",
              mean.device(), " and ", std.device());
  tessera::Generator* g = runtime_generator(gen, mean.device());
  return to_torch(call_runtime([&] {
    const RT m = to_runtime(mean, "normal"), s = to_runtime(std, "normal");
    check_std(s);
    RT out = normal_draw(tessera::broadcast_shapes(m.sizes(), s.sizes(), "normal"), m.dtype(),
                         m.device(), g);
    out.mul_(s);
    return out.add_(m);
  }));
}

// The out= forms: draw, then resize out and cast the draw into it.
at::Tensor& into(at::Tensor& out, const at::Tensor& drawn) {
  const OpScope scope(out);
  return write_out(out, to_runtime(drawn, "normal"));
}

at::Tensor& normal_tensor_float_out(const at::Tensor& mean, double std, OptGenerator gen,
                                    at::Tensor& out) {
  return into(out, normal_tensor_float(mean, std, gen));
}

at::Tensor& normal_float_tensor_out(double mean, const at::Tensor& std, OptGenerator gen,
                                    at::Tensor& out) {
  return into(out, normal_float_tensor(mean, std, gen));
}

at::Tensor& normal_tensor_tensor_out(const at::Tensor& mean, const at::Tensor& std,
                                     OptGenerator gen, at::Tensor& out) {
  return into(out, normal_tensor_tensor(mean, std, gen));
}

// -- randperm: the runtime has none; a uniformly random permutation is the
// stable argsort of independent random 62-bit keys (ties, whose chance is
// about n^2 / 2^63, still give a permutation).
int64_t default_to(c10::ScalarType t);

at::Tensor& randperm_out(int64_t n, OptGenerator gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  TORCH_CHECK(n <= default_to(out.scalar_type()), "randperm: n is too large for result tensor "
              "type: '", out.scalar_type(), "' (n=", n, ")");
  const OpScope scope(out);
  resize_output(out, {n});
  RT o = to_runtime(out, "randperm");
  tessera::Generator* g = runtime_generator(gen, out.device());
  call_runtime([&] {
    const RT keys = tessera::randint(0, int64_t{1} << 62, {n},
                                     tessera::TensorOptions(tessera::DType::kI64, o.device()), g);
    o.copy_(tessera::argsort(keys, 0, /*descending=*/false, /*stable=*/true));
  });
  return out;
}

// -- random_: integers uniform in [from, to), drawn by the runtime's
// randint in self's dtype and copied into self (which may be strided).
at::Tensor& random_range(at::Tensor& self, int64_t from, int64_t to, OptGenerator gen,
                         const char* op) {
  const OpScope scope(self);
  RT s = to_runtime(self, op);
  tessera::Generator* g = runtime_generator(gen, self.device());
  call_runtime([&] {
    const RT drawn = tessera::randint(from, to, s.sizes(), tessera::TensorOptions(s.dtype(), s.device()), g);
    s.copy_(drawn);
  });
  return self;
}

// PyTorch's default upper end (inclusive) for random_() and random_(from):
// the largest integer the dtype holds with every integer below it, i.e.
// 2^digits for floating types and the maximum for integers. For int64 the
// runtime's exclusive int64 bound stops one short: INT64_MAX itself is
// never drawn.
int64_t default_to(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool: return 2;
    case c10::ScalarType::Byte: return int64_t{1} << 8;
    case c10::ScalarType::Char: return int64_t{1} << 7;
    case c10::ScalarType::Short: return int64_t{1} << 15;
    case c10::ScalarType::Int: return int64_t{1} << 31;
    case c10::ScalarType::Long: return std::numeric_limits<int64_t>::max();
    case c10::ScalarType::Half: return (int64_t{1} << 11) + 1;
    case c10::ScalarType::BFloat16: return (int64_t{1} << 8) + 1;
    case c10::ScalarType::Float: return (int64_t{1} << 24) + 1;
    case c10::ScalarType::Double: return (int64_t{1} << 53) + 1;
    default: break;
  }
  to_runtime_dtype(t, "random_");  // TypeError naming the dtype
  return 0;
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        OptGenerator gen) {
  return random_range(self, from, to.has_value() ? *to : default_to(self.scalar_type()), gen,
                      "random_");
}

at::Tensor& random_to(at::Tensor& self, int64_t to, OptGenerator gen) {
  return random_range(self, 0, to, gen, "random_");
}

at::Tensor& random_all(at::Tensor& self, OptGenerator gen) {
  return random_range(self, 0, default_to(self.scalar_type()), gen, "random_");
}

// -- bernoulli.
at::Tensor& bernoulli_float_(at::Tensor& self, double p, OptGenerator gen) {
  const OpScope scope(self);
  RT s = to_runtime(self, "bernoulli_");
  tessera::Generator* g = runtime_generator(gen, self.device());
  call_runtime([&] { tessera::bernoulli_(s, p, g); });
  return self;
}

at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p, OptGenerator gen) {
  const OpScope scope(self);
  RT s = to_runtime(self, "bernoulli_");
  const RT prob = to_runtime(p, "bernoulli_");
  tessera::Generator* g = runtime_generator(gen, self.device());
  call_runtime([&] { tessera::bernoulli_(s, prob, g); });
  return self;
}

// bernoulli(self): self holds the probabilities.
at::Tensor bernoulli(const at::Tensor& self, OptGenerator gen) {
  const OpScope scope(self);
  tessera::Generator* g = runtime_generator(gen, self.device());
  return to_torch(call_runtime([&] { return tessera::bernoulli(to_runtime(self, "bernoulli"), g); }));
}

at::Tensor& bernoulli_out(const at::Tensor& self, OptGenerator gen, at::Tensor& out) {
  const OpScope scope(self, out);
  resize_output(out, self.sizes());
  return bernoulli_tensor_(out, self, gen);
}

at::Tensor bernoulli_p(const at::Tensor& self, double p, OptGenerator gen) {
  const OpScope scope(self);
  tessera::Generator* g = runtime_generator(gen, self.device());
  return to_torch(
      call_runtime([&] { return tessera::bernoulli(to_runtime(self, "bernoulli"), p, g); }));
}

// -- dropout: (output, bool mask). train=None means training, as on CPU.
std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  const OpScope scope(input);
  tessera::Generator* g = runtime_generator(std::nullopt, input.device());
  auto [output, mask] = call_runtime([&] {
    return tessera::native_dropout(to_runtime(input, "native_dropout"), p, train.value_or(true), g);
  });
  return {to_torch(output), to_torch(mask)};
}

at::Tensor native_dropout_backward(const at::Tensor& grad, const at::Tensor& mask, double scale) {
  const OpScope scope(grad, mask);
  return to_torch(call_runtime([&] {
    return tessera::native_dropout_backward(to_runtime(grad, "native_dropout_backward"),
                                            to_runtime(mask, "native_dropout_backward"), scale);
  }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("uniform_", TORCH_FN(uniform_));
  m.impl("normal_", TORCH_FN(normal_));
  m.impl("random_.from", TORCH_FN(random_from));
  m.impl("random_.to", TORCH_FN(random_to));
  m.impl("random_", TORCH_FN(random_all));
  m.impl("bernoulli_.float", TORCH_FN(bernoulli_float_));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  m.impl("bernoulli", TORCH_FN(bernoulli));
  m.impl("bernoulli.out", TORCH_FN(bernoulli_out));
  m.impl("bernoulli.p", TORCH_FN(bernoulli_p));
  m.impl("normal.Tensor_float", TORCH_FN(normal_tensor_float));
  m.impl("normal.float_Tensor", TORCH_FN(normal_float_tensor));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normal_tensor_tensor));
  m.impl("normal.Tensor_float_out", TORCH_FN(normal_tensor_float_out));
  m.impl("normal.float_Tensor_out", TORCH_FN(normal_float_tensor_out));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normal_tensor_tensor_out));
  m.impl("randperm.generator_out", TORCH_FN(randperm_out));
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
}

}  // namespace
}  // namespace torch_tessera
