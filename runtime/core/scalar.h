// A single number of one of three kinds, as PyTorch's c10::Scalar: a
// Python-style bool, int or float. The kind decides type promotion
// (a float Scalar makes an integer tensor's result float32).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/core/dtype.h"

namespace tessera {

class Scalar {
 public:
  enum class Kind : uint8_t { kBool, kInt, kFloat };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::kBool) { i_ = v; }  // NOLINT: implicit like a number
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::kInt) { i_ = static_cast<int64_t>(v); }  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::kFloat) { d_ = static_cast<double>(v); }  // NOLINT
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}      // NOLINT
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_integral() const { return kind_ == Kind::kInt; }
  bool is_floating() const { return kind_ == Kind::kFloat; }

  DTypeCategory category() const {
    switch (kind_) {
      case Kind::kBool: return DTypeCategory::kBool;
      case Kind::kInt: return DTypeCategory::kIntegral;
      case Kind::kFloat: return DTypeCategory::kFloating;
    }
    return DTypeCategory::kFloating;
  }

  // The value converted to T with C++ conversion rules (as a cast would).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return kind_ == Kind::kFloat ? d_ != 0.0 : i_ != 0;
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(static_cast<float>(to<double>()));
    } else {
      return kind_ == Kind::kFloat ? static_cast<T>(d_) : static_cast<T>(i_);
    }
  }

  std::string to_string() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace tessera
