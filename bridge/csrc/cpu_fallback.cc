#include "bridge/csrc/cpu_fallback.h"

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <mutex>

#include "bridge/csrc/device_mix.h"
#include "bridge/csrc/ops/complex_routing.h"
#include "runtime/ops/dispatch.h"

namespace torch_tessera {
namespace {

std::mutex stats_mutex;
std::map<std::string, int64_t>& stats() {
  static std::map<std::string, int64_t> counts;
  return counts;
}

std::string op_name(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// The device rule of native kernels, which the fallback would otherwise
// skip by moving everything to the CPU: tensors on one tessera device, plus
// 0-d CPU tensors (scalars). Index lists (List[Optional[Tensor]]) may hold
// CPU tensors, as for CUDA.
void check_devices(const std::string& name, const c10::FunctionSchema& schema,
                   const torch::jit::Stack& stack) {
  const size_t n = schema.arguments().size();
  at::Tensor first;  // the first tensor that is not a CPU scalar
  auto check = [&](const at::Tensor& t, const std::string& arg) {
    if (!t.defined() || is_cpu_scalar(t)) return;
    if (!first.defined()) {
      first = t;
      return;
    }
    check_device_mix((name + " (argument " + arg + ")").c_str(), first, t);
  };
  for (size_t i = 0; i < n; ++i) {
    const c10::IValue& v = stack[stack.size() - n + i];
    const std::string& arg = schema.arguments()[i].name();
    if (v.isTensor()) {
      check(v.toTensor(), arg);
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) check(t, arg);
    }
  }
}

}  // namespace

void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = op_name(op);
  check_devices(name, op.schema(), *stack);
  TORCH_CHECK_NOT_IMPLEMENTED(tessera::cpu_fallback_enabled(), "tessera has no kernel for ", name,
                              " and the CPU fallback is off (TESSERA_DISABLE_CPU_FALLBACK or "
                              "torch_tessera.set_fallback_enabled(False))");
  {
    std::lock_guard<std::mutex> lock(stats_mutex);
    ++stats()[name];
  }
  at::native::cpu_fallback(op, stack);
}

namespace {

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_boxed>());
}

}  // namespace

namespace {

std::map<std::string, ComplexKernel>& complex_kernels() {
  static std::map<std::string, ComplexKernel> kernels;
  return kernels;
}

}  // namespace

// Filled during static initialization, read after it (first complex call).
void add_complex_kernel(const char* name, ComplexKernel kernel) {
  complex_kernels().insert_or_assign(name, std::move(kernel));
}

c10::KernelFunction complex_kernel_for(const std::string& name,
                                       const c10::impl::CppSignature& expected) {
  const auto it = complex_kernels().find(name);
  if (it == complex_kernels().end()) {
    return c10::KernelFunction::makeFromBoxedFunction<&cpu_fallback_boxed>();
  }
  TORCH_CHECK(it->second.signature == expected, "tessera: the complex kernel of ", name,
              " has signature ", it->second.signature.name(), ", the op's kernel ",
              expected.name());
  return it->second.kernel;
}

c10::OperatorHandle find_aten_op(const std::string& name) {
  const size_t dot = name.find('.');
  const std::string base = "aten::" + name.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
  return c10::Dispatcher::singleton().findSchemaOrThrow(base.c_str(), overload.c_str());
}

std::map<std::string, int64_t> fallback_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  return stats();
}

void reset_fallback_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  stats().clear();
}

// One switch for both fallbacks: the runtime's (which also serves the
// tessera module and C++ callers) is the only state.
void set_fallback_enabled(bool enabled) { tessera::set_cpu_fallback_enabled(enabled); }

bool fallback_enabled() { return tessera::cpu_fallback_enabled(); }

}  // namespace torch_tessera
