#include "runtime/ops/dispatch.h"

#include <atomic>
#include <mutex>

#include "runtime/core/environment.h"
#include "runtime/core/error.h"

namespace tessera {

namespace {

bool fallback_enabled_from_env() {
  return !env_switch("TESSERA_DISABLE_CPU_FALLBACK").value_or(false);
}

std::atomic<bool>& fallback_enabled() {
  static std::atomic<bool> enabled{fallback_enabled_from_env()};
  return enabled;
}

struct FallbackCounts {
  std::mutex mutex;
  std::map<std::string, int64_t> counts;
};

FallbackCounts& fallback_counts() {
  static FallbackCounts c;
  return c;
}

}  // namespace

void set_cpu_fallback_enabled(bool enabled) { fallback_enabled().store(enabled); }
bool cpu_fallback_enabled() { return fallback_enabled().load(); }

std::map<std::string, int64_t> cpu_fallback_counts() {
  FallbackCounts& c = fallback_counts();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.counts;
}

void reset_cpu_fallback_counts() {
  FallbackCounts& c = fallback_counts();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.counts.clear();
}

namespace detail {

void note_cpu_fallback(const char* op, Device device) {
  TESSERA_CHECK(cpu_fallback_enabled(), NotImplementedError, "op '", op,
                "' has no kernel for device ", device.to_string(),
                " and the CPU fallback is disabled (TESSERA_DISABLE_CPU_FALLBACK)");
  FallbackCounts& c = fallback_counts();
  std::lock_guard<std::mutex> lock(c.mutex);
  ++c.counts[op];
}

void throw_no_kernel(const char* op, Device device) {
  throw NotImplementedError(detail::concat("op '", op, "' has no kernel for device ",
                                           device.to_string(), " nor for the host device"));
}

}  // namespace detail

}  // namespace tessera
