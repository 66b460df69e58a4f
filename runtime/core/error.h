// The error kinds of the runtime. Every check that a user can trip throws
// one of these; each maps to one Python exception type in the bindings and
// the bridge. Checks are always on: input validation never uses assert().
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera {

enum class ErrorKind {
  kValue,           // wrong shape, bad argument value       -> ValueError
  kType,            // unsupported or mismatched dtype       -> TypeError
  kIndex,           // dim or index out of range             -> IndexError
  kOutOfMemory,     // allocation failed after freeing cache -> torch.OutOfMemoryError
  kDevice,          // device or driver failure, wrong device -> RuntimeError
  kNotImplemented,  // no kernel and fallback disabled       -> NotImplementedError
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

class ValueError : public Error {
 public:
  explicit ValueError(std::string m) : Error(ErrorKind::kValue, std::move(m)) {}
};
class TypeError : public Error {
 public:
  explicit TypeError(std::string m) : Error(ErrorKind::kType, std::move(m)) {}
};
class IndexError : public Error {
 public:
  explicit IndexError(std::string m) : Error(ErrorKind::kIndex, std::move(m)) {}
};
class OutOfMemoryError : public Error {
 public:
  explicit OutOfMemoryError(std::string m)
      : Error(ErrorKind::kOutOfMemory, std::move(m)) {}
};
class DeviceError : public Error {
 public:
  explicit DeviceError(std::string m) : Error(ErrorKind::kDevice, std::move(m)) {}
};
class NotImplementedError : public Error {
 public:
  explicit NotImplementedError(std::string m)
      : Error(ErrorKind::kNotImplemented, std::move(m)) {}
};

namespace detail {
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace tessera

// TESSERA_CHECK(cond, ErrorType, message parts...): throws ErrorType with the
// parts streamed together when cond is false. The parts are only formatted
// on failure, so checks cost a branch on the hot path.
#define TESSERA_CHECK(cond, ErrorType, ...)                          \
  do {                                                               \
    if (!(cond)) [[unlikely]] {                                      \
      throw ::tessera::ErrorType(::tessera::detail::concat(__VA_ARGS__)); \
    }                                                                \
  } while (false)
