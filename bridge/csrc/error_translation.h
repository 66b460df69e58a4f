// Runtime errors become the c10 errors PyTorch itself raises for the same
// faults, so code written against PyTorch catches them: index errors ->
// IndexError, out of memory -> torch.OutOfMemoryError, no kernel ->
// NotImplementedError, and wrong values, dtypes and devices -> RuntimeError
// (PyTorch's TORCH_CHECK; the runtime's own Python bindings keep the finer
// ValueError/TypeError split). The message is the runtime's, with runtime
// device names ("cpu:0") replaced by their tessera names ("tessera:0").
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
