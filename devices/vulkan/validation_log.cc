#include "devices/vulkan/validation_log.h"

#include "runtime/core/error.h"

namespace tessera::vulkan {

void ValidationLog::record_error(std::string_view message) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_count_ == 0) first_error_ = std::string(message);
  ++error_count_;
}

void ValidationLog::throw_if_errors(std::string_view where) {
  std::string first;
  int count = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_count_ == 0) [[likely]] return;
    first.swap(first_error_);
    count = error_count_;
    error_count_ = 0;
  }
  throw DeviceError(detail::concat("vulkan: ", count, " validation error(s) before ", where,
                                   "; the first: ", first));
}

}  // namespace tessera::vulkan
