// Complex tensors on tessera: where a native kernel sees one.
//
// The runtime's kernels are real-valued. A complex tessera tensor is plain
// storage (two reals an element, see complex_views.h) that copies, views
// and a few ops handle natively; every other kernel must not read it as if
// it were real. TESSERA_ATEN_KERNELS(m) registers a file's aten kernels
// through a KernelTable, which wraps each one: a call with no complex
// tensor argument goes straight to the kernel (one dtype test a tensor
// argument); a call with one goes to the op's complex kernel if
// complex_ops.cc has one (register_complex_kernel), and otherwise to the
// CPU fallback, as an op with no kernel would, counted there. Kernels that
// handle complex tensors themselves register with impl_complex_aware.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/CompileTimeFunctionPointer.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "bridge/csrc/cpu_fallback.h"

namespace torch_tessera {

inline bool holds_complex(const at::Tensor& t) {
  return t.defined() && c10::isComplexType(t.scalar_type());
}
inline bool holds_complex(const std::optional<at::Tensor>& t) {
  return t.has_value() && holds_complex(*t);
}
inline bool holds_complex(at::TensorList ts) {
  for (const at::Tensor& t : ts) {
    if (holds_complex(t)) return true;
  }
  return false;
}
inline bool holds_complex(const c10::List<std::optional<at::Tensor>>& ts) {
  for (const std::optional<at::Tensor> t : ts) {
    if (holds_complex(t)) return true;
  }
  return false;
}
inline bool holds_complex(const at::ITensorListRef& ts) {
  for (const at::Tensor& t : ts) {
    if (holds_complex(t)) return true;
  }
  return false;
}
template <typename T>
bool holds_complex(const T&) {
  return false;
}

// A kernel for an op's complex calls, in the op's own unboxed signature.
struct ComplexKernel {
  c10::KernelFunction kernel;
  c10::impl::CppSignature signature;
};

// Registers `fn` as the complex kernel of op `name` ("mul.Tensor").
template <class FuncType, FuncType* kFn>
bool register_complex_kernel(const char* name, c10::CompileTimeFunctionPointer<FuncType, kFn> fn);

// The complex kernel of `name` if one was registered, else the fallback;
// TORCH_CHECKs that a registered one has the signature the caller expects.
c10::KernelFunction complex_kernel_for(const std::string& name,
                                       const c10::impl::CppSignature& expected);

// The op a routed kernel serves, found when it registers. One function
// registered for several ops computes the same thing for each (e.g.
// hardshrink_backward and softshrink_backward), so its complex calls go to
// the first op's complex kernel or fallback.
struct RoutedOp {
  std::string name;
  std::optional<c10::OperatorHandle> handle;
};

template <auto kFn>
struct ComplexRouted;

template <class R, class... A, R (*kFn)(A...)>
struct ComplexRouted<kFn> {
  // A function-local static: a static data member's dynamic initializer
  // could run after the registration that fills it.
  static RoutedOp& op() {
    static RoutedOp instance;
    return instance;
  }

  static R call(A... args) {
    if (!(holds_complex(args) || ...)) [[likely]] {
      return kFn(std::forward<A>(args)...);
    }
    static const c10::KernelFunction complex =
        complex_kernel_for(op().name, c10::impl::CppSignature::make<R(A...)>());
    return complex.call<R, A...>(*op().handle, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                 std::forward<A>(args)...);
  }
};

void add_complex_kernel(const char* name, ComplexKernel kernel);

template <class FuncType, FuncType* kFn>
bool register_complex_kernel(const char* name, c10::CompileTimeFunctionPointer<FuncType, kFn> fn) {
  add_complex_kernel(name, ComplexKernel{c10::KernelFunction::makeFromUnboxedFunction(fn),
                                         c10::impl::CppSignature::make<FuncType>()});
  return true;
}

// The handle of "name" or "name.overload" in the aten namespace.
c10::OperatorHandle find_aten_op(const std::string& name);

// Runs op `name` through the CPU fallback from inside a kernel of the
// op's own signature (for the cases a kernel leaves to the CPU).
template <class R, class... A>
R call_cpu_fallback(const char* name, A... args) {
  const c10::OperatorHandle op = find_aten_op(name);
  static const c10::KernelFunction fallback =
      c10::KernelFunction::makeFromBoxedFunction<&cpu_fallback_boxed>();
  return fallback.call<R, A...>(op, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                std::forward<A>(args)...);
}

// torch::Library for aten's PrivateUse1 kernels, with complex routing.
class KernelTable {
 public:
  explicit KernelTable(torch::Library& library) : library_(library) {}

  template <class FuncType, FuncType* kFn>
  KernelTable& impl(const char* name, c10::CompileTimeFunctionPointer<FuncType, kFn>) {
    RoutedOp& op = ComplexRouted<kFn>::op();
    if (op.name.empty()) {
      op.name = name;
      op.handle = find_aten_op(name);
    }
    library_.impl(name, TORCH_FN(ComplexRouted<kFn>::call));
    return *this;
  }

  // For kernels that accept complex tensors and handle them.
  template <class Func>
  KernelTable& impl_complex_aware(const char* name, Func&& fn) {
    library_.impl(name, std::forward<Func>(fn));
    return *this;
  }

 private:
  torch::Library& library_;
};

}  // namespace torch_tessera

#define TESSERA_KERNELS_CONCAT_(a, b) a##b
#define TESSERA_KERNELS_CONCAT(a, b) TESSERA_KERNELS_CONCAT_(a, b)

// TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) with complex routing: the body
// that follows registers through a KernelTable named m.
#define TESSERA_ATEN_KERNELS(m) TESSERA_ATEN_KERNELS_(m, TESSERA_KERNELS_CONCAT(tessera_kernels_, __LINE__))
#define TESSERA_ATEN_KERNELS_(m, fn)                                  \
  static void fn(::torch_tessera::KernelTable& m);                    \
  TORCH_LIBRARY_IMPL(aten, PrivateUse1, library) {                    \
    ::torch_tessera::KernelTable table(library);                      \
    fn(table);                                                        \
  }                                                                   \
  static void fn(::torch_tessera::KernelTable& m)
