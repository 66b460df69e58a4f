// 64-bit little-endian integers in byte buffers, for file formats that fix
// their byte order (safetensors' header length, the Vulkan pipeline-cache
// envelope), whatever the host's.
#pragma once

#include <cstdint>

namespace tessera {

inline void store_le64(void* out, uint64_t v) {
  auto* bytes = static_cast<unsigned char*>(out);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));
}

inline uint64_t load_le64(const void* in) {
  const auto* bytes = static_cast<const unsigned char*>(in);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | bytes[i];
  return v;
}

}  // namespace tessera
