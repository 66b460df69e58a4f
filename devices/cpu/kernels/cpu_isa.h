// Which instruction-set extensions the CPU kernels may use beyond their
// x86-64-v3 (AVX2) baseline, decided once per process from CPUID.
#pragma once

namespace tessera::cpu {

// True when the CPU and the OS support AVX-512 F, DQ, BW and VL (what the
// *_avx512 sources are built for). TESSERA_CPU_ISA=avx2 asks for the
// baseline (to compare or test both paths on one machine); =avx512 for the
// default. Any other value, or avx512 on a CPU without it, is reported on
// stderr and the CPU's own answer kept: this runs while the device
// registers, where an exception would end the process before main.
bool cpu_has_avx512();

}  // namespace tessera::cpu
