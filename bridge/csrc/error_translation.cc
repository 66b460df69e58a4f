#include "bridge/csrc/error_translation.h"

#include <c10/util/Exception.h>

#include <cctype>
#include <string>

#include "bridge/csrc/device_list.h"

namespace torch_tessera {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
}

// The runtime names its devices ("cpu:0", "vulkan:1"); a PyTorch user knows
// them as tessera:N. Whole names only: "cpu:0" is not rewritten inside
// "cpu:01".
std::string with_tessera_names(std::string message) {
  const auto& devices = visible_devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string runtime_name = devices[i].to_string();
    const std::string torch_name = "tessera:" + std::to_string(i);
    for (size_t at = message.find(runtime_name); at != std::string::npos;
         at = message.find(runtime_name, at)) {
      const size_t end = at + runtime_name.size();
      const bool whole = (at == 0 || !is_name_char(message[at - 1])) &&
                         (end == message.size() || !is_name_char(message[end]));
      if (!whole) {
        at = end;
        continue;
      }
      message.replace(at, runtime_name.size(), torch_name);
      at += torch_name.size();
    }
  }
  return message;
}

}  // namespace

void rethrow_as_c10(const tessera::Error& e) {
  const std::string message = with_tessera_names(e.what());
  switch (e.kind()) {
    case tessera::ErrorKind::kIndex:
      C10_THROW_ERROR(IndexError, message);
    case tessera::ErrorKind::kOutOfMemory:
      C10_THROW_ERROR(OutOfMemoryError, message);
    case tessera::ErrorKind::kNotImplemented:
      C10_THROW_ERROR(NotImplementedError, message);
    case tessera::ErrorKind::kValue:
    case tessera::ErrorKind::kType:
    case tessera::ErrorKind::kDevice:
      break;
  }
  C10_THROW_ERROR(Error, message);
}

}  // namespace torch_tessera
