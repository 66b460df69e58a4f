// Loading and saving safetensors files, the weights format of Hugging Face
// models: an 8-byte little-endian header length N, N bytes of JSON
// ({"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
// ..., "__metadata__": {"key": "value"}}), then the data section, which the
// tensors' [begin, end) byte ranges cover exactly.
//
//   SafetensorsFile file = SafetensorsFile::open("model.safetensors");
//   Tensor w = file.tensor("encoder.layer.0.attention.self.query.weight", host_device());
//   std::map<std::string, Tensor> all = load_safetensors("model.safetensors", device);
//   save_safetensors("out.safetensors", {{"w", w}}, {{"format", "pt"}});
//
// Files come from anywhere, so every defect (a header length past the end
// of the file, JSON that does not parse, an unknown dtype, offsets out of
// range, overlapping or leaving holes, sizes that overflow) is a ValueError
// naming the file and what is wrong; nothing is read before it is checked.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/dtype.h"
#include "runtime/core/tensor.h"

namespace tessera {

class MappedFile;

// A read-only view of one safetensors file, memory-mapped. Cheap to move;
// the tensors it gives keep the mapping alive on their own.
class SafetensorsFile {
 public:
  // Maps and validates the whole header. ValueError on any defect.
  static SafetensorsFile open(const std::string& path);

  struct Entry {
    DType dtype;
    Shape shape;
    size_t offset;  // into the data section
    size_t nbytes;
  };

  // The tensors' names in data-offset order.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(std::string_view name) const;
  // ValueError naming the file and the tensor when there is none so named.
  const Entry& entry(std::string_view name) const;
  // The header's "__metadata__" (empty when it has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor on device. On the host device (cpu) it borrows the mapped
  // pages, no copy, and keeps the mapping alive; writes to it stay in this
  // process (copy-on-write), the file is never changed. Data whose address
  // is not a multiple of its element size (a file whose writer did not
  // align it) is copied instead, since kernels load whole elements. On any
  // other device the bytes are copied there.
  Tensor tensor(std::string_view name, Device device) const;

  const std::string& path() const { return path_; }
  // Bytes of the file before the data section: 8 + the header length.
  size_t data_start() const { return data_start_; }

 private:
  SafetensorsFile() = default;

  std::string path_;
  std::shared_ptr<MappedFile> mapping_;
  size_t data_start_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, Entry, std::less<>> entries_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of the file at path, on device (borrowing the mapping on
// the host device, as SafetensorsFile::tensor does).
std::map<std::string, Tensor> load_safetensors(const std::string& path, Device device);

// Writes tensors (from any device; copied to the host and made contiguous
// as needed) and metadata to path in the layout the reference
// implementation writes: tensors ordered by dtype, widest first, then by
// name (so each one's data is aligned to its element size), the header
// padded with spaces to a multiple of 8 bytes. The file is written under a
// temporary name in the same folder and renamed over path, so readers
// (and tensors still borrowing the old file's pages) never see a partial
// file. ValueError for an undefined tensor, an empty or reserved name,
// names or metadata that are not valid UTF-8, and any I/O failure (naming
// path and the system's reason).
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace tessera
