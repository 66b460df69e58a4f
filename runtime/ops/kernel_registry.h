// Kernels keyed by (op, device type). An op is a struct from
// kernel_signatures.h; its slot index is assigned by name on first use, so
// lookup is two array indexings. Slots go by the op's name rather than by
// the template instance: each shared library (libtessera.so, every device
// library, an extension built with hidden visibility) has its own copy of
// slot<Op>()'s static, and all of them must agree.
//
// An op whose signature says `static constexpr bool optional = true` has a
// composite in its front end (try_call_kernel), or is left to the CPU
// fallback on devices without it (the special functions): a device may
// leave it out and loses only speed. Every other op is required of a device that
// claims the op set (the conformance suite counts anything missing as a
// CPU fallback).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace tessera {

inline constexpr int kMaxDeviceTypes = 16;

class KernelRegistry {
 public:
  static KernelRegistry& instance();

  template <typename Op>
  void register_kernel(DeviceType type, typename Op::Fn fn) {
    set(slot<Op>(), type, reinterpret_cast<void*>(fn));
  }

  // nullptr when the device type has no kernel for Op.
  template <typename Op>
  typename Op::Fn lookup(DeviceType type) const {
    return reinterpret_cast<typename Op::Fn>(get(slot<Op>(), type));
  }

  // Names of the ops that have a kernel for type, sorted.
  std::vector<std::string> ops_for(DeviceType type) const;
  // The same without the optional ops.
  std::vector<std::string> required_ops_for(DeviceType type) const;

 private:
  template <typename Op>
  static int slot() {
    static const int s = instance().slot_for(Op::name, is_optional<Op>());
    return s;
  }
  template <typename Op>
  static constexpr bool is_optional() {
    if constexpr (requires { Op::optional; }) {
      return Op::optional;
    } else {
      return false;
    }
  }
  int slot_for(const char* name, bool optional);
  std::vector<std::string> names_for(DeviceType type, bool with_optional) const;
  void set(int slot, DeviceType type, void* fn);
  void* get(int slot, DeviceType type) const;

  struct Row {
    const char* name = nullptr;
    bool optional = false;
    std::atomic<void*> fns[kMaxDeviceTypes] = {};
  };
  // Rows are never moved once created: a fixed-capacity array.
  static constexpr int kMaxOps = 512;
  Row rows_[kMaxOps];
  std::atomic<int> num_rows_{0};
  std::map<std::string, int> slots_;  // op name -> row, under mutex_
  mutable std::mutex mutex_;
};

}  // namespace tessera
