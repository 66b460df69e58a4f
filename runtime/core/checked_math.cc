#include "runtime/core/checked_math.h"

namespace tessera {

int64_t checked_numel(std::span<const int64_t> sizes, const char* what) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    TESSERA_CHECK(s >= 0, ValueError, what, ": negative dimension ", s);
    n = checked_mul(n, s, what);
  }
  return n;
}

size_t checked_storage_bytes(std::span<const int64_t> sizes,
                             std::span<const int64_t> strides,
                             int64_t storage_offset, size_t itemsize,
                             const char* what) {
  TESSERA_CHECK(sizes.size() == strides.size(), ValueError, what, ": ",
                sizes.size(), " sizes but ", strides.size(), " strides");
  TESSERA_CHECK(storage_offset >= 0, ValueError, what,
                ": negative storage offset ", storage_offset);
  int64_t max_offset = storage_offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    TESSERA_CHECK(sizes[d] >= 0, ValueError, what, ": negative dimension ",
                  sizes[d]);
    if (sizes[d] == 0) return 0;
    TESSERA_CHECK(strides[d] >= 0, ValueError, what,
                  ": negative stride ", strides[d], " in dim ", d);
    max_offset = checked_add(max_offset, checked_mul(sizes[d] - 1, strides[d], what), what);
  }
  size_t elements = static_cast<size_t>(checked_add(max_offset, 1, what));
  return checked_mul_size(elements, itemsize, what);
}

}  // namespace tessera
