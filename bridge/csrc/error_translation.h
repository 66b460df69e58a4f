// Runtime errors become the c10 error of the same kind, which PyTorch's
// Python layer raises as ValueError, TypeError, IndexError,
// torch.OutOfMemoryError, NotImplementedError or RuntimeError.
#pragma once

#include "runtime/core/error.h"

namespace torch_tessera {

[[noreturn]] void rethrow_as_c10(const tessera::Error& e);

}  // namespace torch_tessera

// Runs `statement`, translating any tessera::Error it throws.
#define TESSERA_TRANSLATE_ERRORS(statement)        \
  do {                                             \
    try {                                          \
      statement;                                   \
    } catch (const ::tessera::Error& tessera_e_) { \
      ::torch_tessera::rethrow_as_c10(tessera_e_); \
    }                                              \
  } while (0)
