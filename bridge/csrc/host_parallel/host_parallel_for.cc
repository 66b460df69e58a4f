// tessera_host_parallel_for: the thread pool of the C++ kernels that
// torch.compile generates for tessera devices (torch_tessera/
// _inductor_kernels.py rewrites their OpenMP loops into calls of this).
//
// Why not OpenMP: the runtime's CPU kernels (GEMM, attention, layer norm)
// run on oneTBB. OpenMP's threads spin for milliseconds after each parallel
// region, so a compiled transformer block on 2 cores ran its mm calls 20-40%
// slower beside the generated kernels. On oneTBB's shared workers the two
// take turns without spinning against each other.
//
// Loaded by the package (host_kernels.py) and found by the generated kernels
// with dlopen(RTLD_NOLOAD) by its soname; the one exported symbol is a C
// function, so no C++ ABI crosses the boundary.
#include <algorithm>
#include <cstdint>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

extern "C" {

// Calls body(context, begin, end) over disjoint ranges covering [0, count)
// iterations, one contiguous range per thread (the static schedule of the
// OpenMP loops it replaces). The body must not throw.
__attribute__((visibility("default"))) void tessera_host_parallel_for(
    int64_t count, void (*body)(void* context, int64_t begin, int64_t end), void* context) {
  if (count <= 0) return;
  const size_t limit = oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
  const int64_t threads = static_cast<int64_t>(
      std::min<size_t>(static_cast<size_t>(oneapi::tbb::this_task_arena::max_concurrency()), limit));
  if (count == 1 || threads <= 1) {
    body(context, 0, count);
    return;
  }
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, count),
      [&](const oneapi::tbb::blocked_range<int64_t>& r) { body(context, r.begin(), r.end()); },
      oneapi::tbb::static_partitioner());
}

}  // extern "C"
