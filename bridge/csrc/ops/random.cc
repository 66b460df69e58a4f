// Random ops over the runtime's Philox generators (runtime_generator picks
// the torch.Generator's or the device's default one), so that one seed gives
// the same values as the runtime's own C++ API on every tessera device:
// uniform_, normal_, random_ (three forms), bernoulli (float and tensor p),
// native_dropout and its backward.
#include <torch/library.h>

#include <cstdint>
#include <limits>
#include <optional>

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
  at::native::resize_output(out, self.sizes());
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
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
  m.impl("native_dropout", TORCH_FN(native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
}

}  // namespace
}  // namespace torch_tessera
