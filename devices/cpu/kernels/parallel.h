// Thread parallelism for the CPU kernels, on oneTBB.
//
// Small problems run inline on the calling thread: below the grain size the
// cost of waking TBB workers (a few microseconds) exceeds the work itself.
// Large ones are split with a static partitioner into about one contiguous
// chunk per worker, which keeps each thread streaming through its own part
// of memory (what bandwidth-bound elementwise loops want, as OpenMP's
// static schedule in PyTorch's CPU backend).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

namespace tessera::cpu {

// Elements below which an elementwise kernel runs on the calling thread.
inline constexpr int64_t kElementwiseGrain = 32768;

// Threads available to the kernels: TBB's arena size (which follows the
// process's CPU affinity), capped by any tbb::global_control limit such as
// the one TESSERA_NUM_THREADS sets (see cpu_device.cc). 1 disables threading.
inline int max_threads() {
  const size_t limit = oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
  const int arena = oneapi::tbb::this_task_arena::max_concurrency();
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(arena), limit));
}

// Calls f(begin, end) over disjoint ranges covering [0, n), in parallel when
// n exceeds grain. f must be safe to call concurrently on disjoint ranges.
template <typename F>
void parallel_for_range(int64_t n, int64_t grain, const F& f) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  if (n <= grain || max_threads() <= 1) {
    f(int64_t{0}, n);
    return;
  }
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, n, grain),
      [&f](const oneapi::tbb::blocked_range<int64_t>& r) { f(r.begin(), r.end()); },
      oneapi::tbb::static_partitioner());
}

// Calls f(i) for each i in [0, n), each call a separate task where worth it
// (for coarse work items such as matrix blocks or reduction chunks).
template <typename F>
void parallel_for_each(int64_t n, const F& f) {
  if (n <= 0) return;
  if (n == 1 || max_threads() <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, n, 1),
      [&f](const oneapi::tbb::blocked_range<int64_t>& r) {
        for (int64_t i = r.begin(); i < r.end(); ++i) f(i);
      },
      oneapi::tbb::auto_partitioner());
}

// parallel_for_each for items that hold `elements` elements in all: inline
// when that is at most one elementwise grain (a small model's parameter
// list, a small layer's rows), where waking the pool would cost more than
// the work.
template <typename F>
void parallel_for_each_sized(int64_t n, int64_t elements, const F& f) {
  if (elements <= kElementwiseGrain) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  parallel_for_each(n, f);
}

// memcpy split over threads for large copies (a single core rarely
// saturates memory bandwidth on its own).
inline void parallel_memcpy(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0 || dst == src) return;
  constexpr int64_t kGrainBytes = int64_t{1} << 20;  // 1 MiB per chunk at least
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  parallel_for_range(static_cast<int64_t>(nbytes), kGrainBytes, [=](int64_t b, int64_t e) {
    std::memcpy(d + b, s + b, static_cast<size_t>(e - b));
  });
}

}  // namespace tessera::cpu
