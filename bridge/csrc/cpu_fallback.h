// The boxed CPU fallback: an aten op with no tessera kernel runs on the
// CPU (inputs copied there, outputs copied back). Each use is counted per
// op; the fallback can be switched off, turning such calls into
// NotImplementedError, with TESSERA_DISABLE_CPU_FALLBACK=1 or
// set_fallback_enabled(false). That switch is the runtime's own
// (tessera::cpu_fallback_enabled), so it governs both fallbacks at once.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <map>
#include <string>

namespace torch_tessera {

// The fallback as a boxed kernel, for kernels that hand a call on to it
// (complex_routing.h).
void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack);

std::map<std::string, int64_t> fallback_stats();
void reset_fallback_stats();
void set_fallback_enabled(bool enabled);
bool fallback_enabled();

}  // namespace torch_tessera
