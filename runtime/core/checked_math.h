// Overflow-checked size arithmetic. Element counts, byte sizes and strides
// come from user input, so every product and sum over them goes through
// these helpers and overflow becomes a ValueError instead of a wrapped size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/core/error.h"

namespace tessera {

inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  TESSERA_CHECK(!__builtin_mul_overflow(a, b, &r), ValueError, what,
                ": integer overflow computing ", a, " * ", b);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  TESSERA_CHECK(!__builtin_add_overflow(a, b, &r), ValueError, what,
                ": integer overflow computing ", a, " + ", b);
  return r;
}

inline size_t checked_mul_size(size_t a, size_t b, const char* what) {
  size_t r;
  TESSERA_CHECK(!__builtin_mul_overflow(a, b, &r), ValueError, what,
                ": size overflow computing ", a, " * ", b);
  return r;
}

inline size_t checked_add_size(size_t a, size_t b, const char* what) {
  size_t r;
  TESSERA_CHECK(!__builtin_add_overflow(a, b, &r), ValueError, what,
                ": size overflow computing ", a, " + ", b);
  return r;
}

// Number of elements of a shape; negative sizes are rejected.
int64_t checked_numel(std::span<const int64_t> sizes, const char* what);

// Bytes needed to hold elements [0, max offset] of a strided layout starting
// at storage_offset, or 0 when the layout has no elements.
size_t checked_storage_bytes(std::span<const int64_t> sizes,
                             std::span<const int64_t> strides,
                             int64_t storage_offset, size_t itemsize,
                             const char* what);

}  // namespace tessera
