#include "runtime/core/error.h"

namespace tessera {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValue: return "ValueError";
    case ErrorKind::kType: return "TypeError";
    case ErrorKind::kIndex: return "IndexError";
    case ErrorKind::kOutOfMemory: return "OutOfMemoryError";
    case ErrorKind::kDevice: return "DeviceError";
    case ErrorKind::kNotImplemented: return "NotImplementedError";
  }
  return "Error";
}

}  // namespace tessera
