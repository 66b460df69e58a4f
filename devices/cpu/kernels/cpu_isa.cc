#include "devices/cpu/kernels/cpu_isa.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tessera::cpu {

namespace {

bool hardware_has_avx512() {
#if defined(__x86_64__)
  // libgcc's checks include the OS's XCR0 bits for the zmm and mask state.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool detect_avx512() {
  const bool hardware = hardware_has_avx512();
  const char* env = std::getenv("TESSERA_CPU_ISA");
  if (env == nullptr || *env == '\0') return hardware;
  const std::string_view isa(env);
  if (isa == "avx2") return false;
  if (isa == "avx512") {
    if (!hardware) {
      std::fprintf(stderr,
                   "tessera: ignoring TESSERA_CPU_ISA=avx512: this CPU lacks AVX-512 F/DQ/BW/VL; "
                   "using avx2\n");
    }
    return hardware;
  }
  std::fprintf(stderr, "tessera: ignoring TESSERA_CPU_ISA='%s' (expected avx2 or avx512); using %s\n",
               env, hardware ? "avx512" : "avx2");
  return hardware;
}

}  // namespace

bool cpu_has_avx512() {
  static const bool has = detect_avx512();
  return has;
}

}  // namespace tessera::cpu
