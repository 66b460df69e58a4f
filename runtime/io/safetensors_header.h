// The JSON header of a safetensors file, both ways: parsing it with every
// check the format needs before any size in it is used, and writing it in
// the reference implementation's layout. Used by safetensors.cc and
// safetensors_writer.cc; the JSON library stays inside the .cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"
#include "runtime/io/safetensors.h"

namespace tessera::safetensors {

// A header longer than this is refused before it is read, as the reference
// implementation refuses it: no real file has one, and a garbage length
// must not make the reader parse gigabytes.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Far beyond any real tensor; bounds the work of a hostile "shape".
inline constexpr size_t kMaxRank = 64;

// "F32", "BOOL", ...: the format's name of a dtype.
std::string_view format_dtype_name(DType t);

struct Header {
  std::vector<std::string> names;               // in data-offset order
  std::vector<SafetensorsFile::Entry> entries;  // entries[i] is names[i]'s
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// Parses and checks json, the header of the file at path (named in every
// error), whose data section has data_bytes bytes: each entry's dtype,
// shape and offsets, that the tensors cover the data section exactly
// without overlapping, no name twice, and the metadata. ValueError on any
// defect.
Header parse_header(std::string_view json, size_t data_bytes, const std::string& path);

struct TensorToWrite {
  std::string_view name;
  const Tensor* tensor;  // on the host, contiguous
};

// Orders tensors as the reference writer does: by dtype, widest first
// (in its dtype order), then by name, so that every tensor's data starts
// at a multiple of its element size when the data section does.
void sort_for_writing(std::vector<TensorToWrite>& tensors);

// The header for tensors, whose data follows in this order: compact JSON
// with "__metadata__" first when there is any, padded with spaces to a
// multiple of 8 bytes. ValueError naming path for a name or metadata that
// is not valid UTF-8, or a header beyond kMaxHeaderBytes.
std::string encode_header(std::span<const TensorToWrite> tensors,
                          const std::map<std::string, std::string>& metadata,
                          const std::string& path);

}  // namespace tessera::safetensors
