#include "runtime/ops/matmul_precision.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/core/error.h"

namespace tessera {
namespace {

MatmulPrecision from_environment() {
  const char* env = std::getenv("TESSERA_FLOAT32_MATMUL_PRECISION");
  if (env == nullptr || *env == '\0') return MatmulPrecision::kHighest;
  try {
    return parse_matmul_precision(env);
  } catch (const ValueError& e) {
    // Read at first use, possibly from a static initializer: warn, keep
    // the default.
    std::fprintf(stderr, "tessera: ignoring TESSERA_FLOAT32_MATMUL_PRECISION: %s\n", e.what());
    return MatmulPrecision::kHighest;
  }
}

std::atomic<MatmulPrecision>& setting() {
  static std::atomic<MatmulPrecision> value{from_environment()};
  return value;
}

}  // namespace

void set_float32_matmul_precision(MatmulPrecision precision) {
  setting().store(precision, std::memory_order_relaxed);
}

MatmulPrecision float32_matmul_precision() { return setting().load(std::memory_order_relaxed); }

MatmulPrecision parse_matmul_precision(std::string_view name) {
  if (name == "highest") return MatmulPrecision::kHighest;
  if (name == "high") return MatmulPrecision::kHigh;
  if (name == "medium") return MatmulPrecision::kMedium;
  throw ValueError("set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got '" +
                   std::string(name) + "'");
}

std::string_view matmul_precision_name(MatmulPrecision precision) {
  switch (precision) {
    case MatmulPrecision::kHighest: return "highest";
    case MatmulPrecision::kHigh: return "high";
    case MatmulPrecision::kMedium: return "medium";
  }
  return "highest";
}

}  // namespace tessera
