// Reading safetensors files: SafetensorsFile (the mapped, validated file)
// and load_safetensors.
#include "runtime/io/safetensors.h"

#include <cstdint>
#include <cstring>

#include "runtime/core/error.h"
#include "runtime/core/little_endian.h"
#include "runtime/io/mapped_file.h"
#include "runtime/io/safetensors_header.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

template <typename... Args>
[[noreturn]] void fail(const std::string& path, const Args&... parts) {
  throw ValueError(detail::concat("safetensors file '", path, "': ", parts...));
}

// A host tensor over [bytes, bytes + entry.nbytes) of mapping, holding the
// mapping alive. The Storage has no allocator: the memory is borrowed.
Tensor borrow_mapped(const std::shared_ptr<MappedFile>& mapping, char* bytes,
                     const SafetensorsFile::Entry& entry, Device host) {
  StoragePtr storage(new Storage(host, bytes, entry.nbytes, /*allocator=*/nullptr),
                     [mapping](Storage* s) { delete s; });
  return Tensor::from_storage(std::move(storage), entry.dtype, entry.shape,
                              contiguous_strides(entry.shape));
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.path_ = path;
  file.mapping_ = MappedFile::open(path);
  const size_t file_bytes = file.mapping_->size();
  if (file_bytes < 8) {
    fail(path, "the file is ", file_bytes, " bytes, too short for the 8-byte header length ",
         "that starts a safetensors file");
  }
  // The first 8 bytes: the header length, little-endian.
  const uint64_t header_bytes = load_le64(file.mapping_->data());
  if (header_bytes > safetensors::kMaxHeaderBytes) {
    fail(path, "the header length ", header_bytes, " is beyond the limit of ",
         safetensors::kMaxHeaderBytes, " bytes (is this a safetensors file?)");
  }
  if (header_bytes > file_bytes - 8) {
    fail(path, "the header length ", header_bytes, " runs past the end of the file (",
         file_bytes - 8, " bytes follow the length; is this a safetensors file?)");
  }
  file.data_start_ = 8 + static_cast<size_t>(header_bytes);
  safetensors::Header header = safetensors::parse_header(
      std::string_view(file.mapping_->data() + 8, static_cast<size_t>(header_bytes)),
      file_bytes - file.data_start_, path);
  for (size_t i = 0; i < header.names.size(); ++i) {
    file.entries_.emplace(header.names[i], std::move(header.entries[i]));
  }
  file.names_ = std::move(header.names);
  file.metadata_ = std::move(header.metadata);
  return file;
}

bool SafetensorsFile::contains(std::string_view name) const {
  return entries_.find(name) != entries_.end();
}

const SafetensorsFile::Entry& SafetensorsFile::entry(std::string_view name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) fail(path_, "has no tensor named '", name, "'");
  return it->second;
}

Tensor SafetensorsFile::tensor(std::string_view name, Device device) const {
  const Entry& e = entry(name);
  char* bytes = mapping_->data() + data_start_ + e.offset;
  const Device host = host_device();
  // Kernels load whole elements, which must be aligned to their size; the
  // reference writer aligns every tensor, other writers may not.
  const bool aligned = reinterpret_cast<uintptr_t>(bytes) % itemsize(e.dtype) == 0;
  Tensor on_host;
  if (aligned) {
    on_host = borrow_mapped(mapping_, bytes, e, host);
  } else {
    on_host = empty(e.shape, TensorOptions(e.dtype, host));
    if (e.nbytes > 0) std::memcpy(on_host.data_ptr(), bytes, e.nbytes);
  }
  // Only the host device's kernels read host pages: any other device
  // (even one whose memory the host can read) gets its own copy.
  if (device == host) return on_host;
  return on_host.to(device);
}

std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  std::map<std::string, Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.tensor(name, device));
  return tensors;
}

}  // namespace tessera
