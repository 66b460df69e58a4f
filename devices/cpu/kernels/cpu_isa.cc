#include "devices/cpu/kernels/cpu_isa.h"

#include <cstdlib>
#include <cstring>

namespace tessera::cpu {

namespace {

bool detect_avx512() {
  if (const char* isa = std::getenv("TESSERA_CPU_ISA"); isa != nullptr && *isa != '\0') {
    if (std::strcmp(isa, "avx2") == 0) return false;
  }
#if defined(__x86_64__)
  // libgcc's checks include the OS's XCR0 bits for the zmm and mask state.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

}  // namespace

bool cpu_has_avx512() {
  static const bool has = detect_avx512();
  return has;
}

}  // namespace tessera::cpu
