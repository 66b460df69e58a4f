#include "runtime/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "runtime/core/error.h"

namespace tessera {

namespace {

[[noreturn]] void fail(const std::string& path, const char* what, int error_number) {
  throw ValueError(detail::concat("cannot ", what, " '", path, "': ",
                                  std::generic_category().message(error_number)));
}

// Closes a descriptor on every path out of open(); the mapping does not
// need it once made.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) fail(path, "open", errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) fail(path, "stat", errno);
  TESSERA_CHECK(S_ISREG(info.st_mode), ValueError, "cannot map '", path,
                "': not a regular file");
  const size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(path, nullptr, 0));
  // MAP_PRIVATE + PROT_WRITE on a read-only descriptor is allowed: writes
  // are copy-on-write and never reach the file.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
  if (data == MAP_FAILED) fail(path, "map", errno);
  std::unique_ptr<MappedFile> mapped;
  try {
    mapped.reset(new MappedFile(path, static_cast<char*>(data), size));
  } catch (...) {
    ::munmap(data, size);
    throw;
  }
  return std::shared_ptr<MappedFile>(std::move(mapped));  // unmaps if this throws
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace tessera
