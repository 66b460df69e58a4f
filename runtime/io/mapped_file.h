// A whole file mapped into memory, copy-on-write. Tensors loaded from a
// weights file borrow its pages instead of copying them: the mapping is
// shared_ptr-owned and each borrowing Storage holds a reference, so the
// pages outlive the object that opened the file for as long as a tensor
// uses them.
//
// The mapping is MAP_PRIVATE with read and write access: a tensor is
// writable (in place ops, copy_), and a write to a borrowed page gives the
// process its own copy of that page; the file itself never changes, and a
// read-only mapping would turn such a write into a crash.
//
// As with any mapped file, the pages are read from the file lazily: if
// another process truncates the file while it is mapped, touching the lost
// pages raises SIGBUS. Replace files by renaming a new one over them (what
// save_safetensors does) rather than rewriting them in place.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace tessera {

class MappedFile {
 public:
  // Opens and maps the regular file at path. An empty file maps to no
  // memory (data() is null). ValueError naming the path and the system's
  // reason when it cannot be opened, is not a regular file, or cannot be
  // mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Writable: writes land in private copies of the pages.
  char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, char* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  char* data_;
  size_t size_;
};

}  // namespace tessera
