// Which instruction-set extensions the CPU kernels may use beyond their
// x86-64-v3 (AVX2) baseline, decided once per process from CPUID.
#pragma once

namespace tessera::cpu {

// True when the CPU and the OS support AVX-512 F, DQ, BW and VL (what the
// *_avx512 sources are built for), unless TESSERA_CPU_ISA=avx2 asks for
// the baseline (to compare or test both paths on one machine).
bool cpu_has_avx512();

}  // namespace tessera::cpu
