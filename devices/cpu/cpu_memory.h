// Host memory for the CPU device, and what the machine has of it.
#pragma once

#include <cstddef>

namespace tessera::cpu {

// Alignment of every CPU allocation: a cache line, and the widest vector
// register (AVX-512), so kernels may use aligned vector loads.
inline constexpr size_t kCpuAlignment = 64;

// nbytes of host memory aligned to kCpuAlignment (a request of 0 bytes gets
// a minimal block, so every call that succeeds returns a distinct pointer).
// Returns nullptr when the memory cannot be had (out of memory, or more than
// the machine has in all); never throws for that.
void* aligned_host_alloc(size_t nbytes);
void aligned_host_free(void* ptr);

// Physical memory of the machine in bytes, capped by the cgroup (v2)
// memory limit when one applies; 0 if unknown.
size_t total_host_memory();
// Memory available for new allocations now: MemAvailable from
// /proc/meminfo (free pages plus reclaimable cache), else free pages from
// sysconf, capped by what the cgroup limit leaves.
size_t available_host_memory();

}  // namespace tessera::cpu
