#include "bridge/csrc/error_translation.h"

#include <c10/util/Exception.h>

namespace torch_tessera {

void rethrow_as_c10(const tessera::Error& e) {
  const std::string message = e.what();
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
