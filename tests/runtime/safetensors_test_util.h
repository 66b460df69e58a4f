// What the safetensors tests share: files in the test's temporary folder,
// safetensors bytes built by hand, and a tensor's bytes read back.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace tessera::safetensors_testing {

// A path no other call returns, in Bazel's TEST_TMPDIR (else /tmp).
inline std::string temp_path(const std::string& stem) {
  static std::atomic<int> counter{0};
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + stem + "_" +
         std::to_string(counter++) + ".safetensors";
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The 8-byte little-endian length, as a file starts with it.
inline std::string length_prefix(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
  return out;
}

// A safetensors file's bytes: the length of header, header, then data.
inline std::string file_bytes(const std::string& header, const std::string& data = "") {
  return length_prefix(header.size()) + header + data;
}

// Writes bytes to a new temporary file and returns its path.
inline std::string temp_file(const std::string& bytes, const std::string& stem = "case") {
  std::string path = temp_path(stem);
  write_file(path, bytes);
  return path;
}

// The tensor's elements as bytes, row-major, read on the host.
inline std::string host_bytes(const Tensor& t) {
  const Tensor h = t.to(host_device()).contiguous();
  if (h.nbytes() == 0) return {};
  return std::string(static_cast<const char*>(h.data_ptr()), h.nbytes());
}

}  // namespace tessera::safetensors_testing
