// Messages of the Khronos validation layer (TESSERA_VULKAN_VALIDATION=1).
// The layer reports through a debug messenger callback, possibly on a
// driver thread, where throwing is not allowed; errors are recorded here
// and thrown as DeviceError at the next synchronization, so a test that
// misuses the API fails instead of printing a warning nobody reads.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace tessera::vulkan {

class ValidationLog {
 public:
  // Records an error message (kept: the first one and the count).
  void record_error(std::string_view message);

  // Throws DeviceError with the first recorded error and the count, if any,
  // and clears the log; `where` names the synchronization that noticed.
  void throw_if_errors(std::string_view where);

 private:
  std::mutex mutex_;
  std::string first_error_;
  int error_count_ = 0;
};

}  // namespace tessera::vulkan
