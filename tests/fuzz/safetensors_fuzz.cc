// Fuzz target: the safetensors reader on hostile files. Every input is a
// whole file. It must either be refused with a ValueError, or open so that
// every tensor's bytes are exactly the file's bytes at the entry's offsets
// (compared with the input itself), and survive a save and reload with
// names, dtypes, shapes, bytes and metadata unchanged.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "runtime/tessera.h"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "safetensors_fuzz: %s\n", what.c_str());
  std::abort();
}

const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-fuzz-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp failed");
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

// The bytes of a contiguous host tensor.
std::string bytes_of(const tessera::Tensor& t) {
  const tessera::Tensor c = t.contiguous();
  if (c.numel() == 0) return {};
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

void check_round_trip(const tessera::SafetensorsFile& file) {
  const tessera::Device host = tessera::host_device();
  std::map<std::string, tessera::Tensor> tensors;
  for (const std::string& name : file.names()) tensors.emplace(name, file.tensor(name, host));
  const std::string out = (work_dir() / "out.safetensors").string();
  try {
    tessera::save_safetensors(out, tensors, file.metadata());
  } catch (const tessera::ValueError&) {
    // The writer refuses what the format allows but it cannot write back
    // (a reserved name, invalid UTF-8 it would have to escape): fine.
    return;
  }
  const tessera::SafetensorsFile again = tessera::SafetensorsFile::open(out);
  if (again.names().size() != file.names().size()) fail("round trip: tensor count changed");
  if (again.metadata() != file.metadata()) fail("round trip: metadata changed");
  for (const auto& [name, original] : tensors) {
    if (!again.contains(name)) fail("round trip: lost tensor '" + name + "'");
    const tessera::Tensor back = again.tensor(name, host);
    if (back.dtype() != original.dtype() || back.sizes() != original.sizes()) {
      fail("round trip: dtype or shape of '" + name + "' changed");
    }
    if (bytes_of(back) != bytes_of(original)) fail("round trip: bytes of '" + name + "' changed");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = (work_dir() / "in.safetensors").string();
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::optional<tessera::SafetensorsFile> file;
  try {
    file.emplace(tessera::SafetensorsFile::open(path));
  } catch (const tessera::ValueError&) {
    return 0;  // refused, as a defective file must be
  }
  const tessera::Device host = tessera::host_device();
  for (const std::string& name : file->names()) {
    const auto& entry = file->entry(name);
    const tessera::Tensor t = file->tensor(name, host);
    if (t.sizes() != entry.shape || t.dtype() != entry.dtype) fail("tensor differs from entry");
    if (static_cast<size_t>(t.nbytes()) != entry.nbytes) fail("tensor size differs from entry");
    if (file->data_start() + entry.offset + entry.nbytes > size) fail("entry past end of file");
    const std::string expected(reinterpret_cast<const char*>(data) + file->data_start() +
                                   entry.offset,
                               entry.nbytes);
    if (bytes_of(t) != expected) fail("bytes of '" + name + "' differ from the file");
  }
  check_round_trip(*file);
  return 0;
}
