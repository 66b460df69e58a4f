// save_safetensors: the header (safetensors_header.cc), then each tensor's
// bytes, written to a temporary file beside the destination and renamed
// over it, so that the destination is either the old file or the whole new
// one, never a partial write.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <system_error>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/little_endian.h"
#include "runtime/io/safetensors.h"
#include "runtime/io/safetensors_header.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

template <typename... Args>
[[noreturn]] void fail(const std::string& path, const Args&... parts) {
  throw ValueError(detail::concat("save_safetensors: '", path, "': ", parts...));
}

std::string system_reason(int error_number) {
  return std::generic_category().message(error_number);
}

// A new file named after the destination, in its folder (rename works only
// within one file system); removed on destruction unless committed.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& destination) : destination_(destination) {
    static std::atomic<uint64_t> counter{0};
    // O_EXCL: never write into a file of someone else's; on a clash with a
    // leftover of a crashed writer, take the next name.
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      path_ = detail::concat(destination, ".", ::getpid(), ".", counter++, ".tmp");
      // 0666, less the umask: the permissions a new file gets anyway.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) {
        fail(destination, "cannot create the temporary file '", path_, "': ",
             system_reason(errno));
      }
    }
    if (fd_ < 0) fail(destination, "cannot create a temporary file beside it");
  }

  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write(const void* data, size_t nbytes) {
    const char* next = static_cast<const char*>(data);
    while (nbytes > 0) {
      const ssize_t written = ::write(fd_, next, nbytes);
      if (written < 0) {
        if (errno == EINTR) continue;
        fail(destination_, "cannot write '", path_, "': ", system_reason(errno));
      }
      next += written;
      nbytes -= static_cast<size_t>(written);
    }
  }

  // Makes the data durable, then puts the file in place of the destination.
  void commit() {
    if (::fsync(fd_) != 0) fail(destination_, "cannot flush '", path_, "': ", system_reason(errno));
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) fail(destination_, "cannot close '", path_, "': ", system_reason(errno));
    if (::rename(path_.c_str(), destination_.c_str()) != 0) {
      fail(destination_, "cannot rename '", path_, "' to it: ", system_reason(errno));
    }
    committed_ = true;
  }

 private:
  std::string destination_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  TESSERA_CHECK(!path.empty(), ValueError, "save_safetensors: empty path");
  const Device host = host_device();
  // Host, contiguous copies where needed; held until written.
  std::vector<Tensor> host_tensors;
  std::vector<safetensors::TensorToWrite> layout;
  host_tensors.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    if (name.empty()) fail(path, "a tensor has an empty name");
    if (name == "__metadata__") {
      fail(path, "'__metadata__' is the format's metadata entry, not a tensor name");
    }
    if (!tensor.defined()) fail(path, "tensor '", name, "' is undefined");
    host_tensors.push_back(tensor.to(host).contiguous());
    layout.push_back({name, &host_tensors.back()});  // reserved: the address stays
  }
  safetensors::sort_for_writing(layout);
  const std::string header = safetensors::encode_header(layout, metadata, path);

  unsigned char length[8];
  store_le64(length, header.size());
  TemporaryFile file(path);
  file.write(length, sizeof(length));
  file.write(header.data(), header.size());
  for (const safetensors::TensorToWrite& entry : layout) {
    if (entry.tensor->nbytes() > 0) file.write(entry.tensor->data_ptr(), entry.tensor->nbytes());
  }
  file.commit();
}

}  // namespace tessera
