// Test helpers shared by the core and op unit tests: building tensors from
// plain values, reading them back independently of the runtime's own copy
// paths, naive casts, closeness checks with readable failure reports, and
// exception matchers that check both the error type and its message.
//
// The readers and writers here walk sizes/strides/storage_offset by hand
// through data<T>(), so they are an independent reference for the runtime's
// to_vector, copy_ and view code.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/half.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"
#include "runtime/stream/stream.h"

namespace tessera::testing {

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {
      DType::kBool, DType::kU8,  DType::kI8,   DType::kI16, DType::kI32,
      DType::kI64,  DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  return v;
}

inline const std::vector<DType>& floating_dtypes() {
  static const std::vector<DType> v = {DType::kF16, DType::kBF16, DType::kF32,
                                       DType::kF64};
  return v;
}

// Integer dtypes (no bool).
inline const std::vector<DType>& integral_dtypes() {
  static const std::vector<DType> v = {DType::kU8, DType::kI8, DType::kI16,
                                       DType::kI32, DType::kI64};
  return v;
}

inline std::string dname(DType t) { return std::string(dtype_name(t)); }

inline std::string shape_str(const Shape& s) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < s.size(); ++i) out << (i ? ", " : "") << s[i];
  out << "]";
  return out.str();
}

inline int64_t naive_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// Row-major strides, computed here (not by the runtime).
inline Shape naive_contiguous_strides(const Shape& sizes) {
  Shape st(sizes.size(), 1);
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

// Converts a stored value of C++ type T to double.
template <typename T>
double value_to_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1.0 : 0.0;
  } else {
    return static_cast<double>(v);
  }
}

// Converts a value of C++ type S to C++ type D as a C++ static_cast does
// (16-bit floats through float), which is what PyTorch's casts do.
template <typename D, typename S>
D naive_convert(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
      return static_cast<float>(s) != 0.0f;
    } else {
      return s != S{};
    }
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(static_cast<float>(s));
  } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return static_cast<D>(static_cast<float>(s));
  } else {
    return static_cast<D>(s);
  }
}

// v (a double) stored as dtype t, read back as double. v must be in range
// for integer types.
inline double cast_value(double v, DType t) {
  return dispatch_dtype(t, [&](auto tag) -> double {
    using T = decltype(tag);
    return value_to_double(naive_convert<T>(v));
  });
}

// The value v, first stored as dtype src and then cast to dtype dst, as
// double: the naive reference for copy_/to(). v must be in range for src.
inline double cast_value(double v, DType src, DType dst) {
  return dispatch_dtype(src, [&](auto stag) -> double {
    using S = decltype(stag);
    S s = naive_convert<S>(v);
    return dispatch_dtype(dst, [&](auto dtag) -> double {
      using D = decltype(dtag);
      return value_to_double(naive_convert<D>(s));
    });
  });
}

// Calls fn(linear_row_major_index, element_offset) for every element of t.
inline void for_each_offset(const Tensor& t,
                            const std::function<void(int64_t, int64_t)>& fn) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  int64_t n = naive_numel(sizes);
  if (n == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    fn(i, off);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// Writes values (row-major over t's logical shape) into t's elements through
// its strides, converting from double with static_cast semantics.
inline void write_strided(const Tensor& t, const std::vector<double>& values) {
  REQUIRE(static_cast<int64_t>(values.size()) == naive_numel(t.sizes()));
  synchronize(t.device());
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* base = static_cast<T*>(t.data_ptr());
    for_each_offset(t, [&](int64_t i, int64_t off) {
      base[off] = naive_convert<T>(values[i]);
    });
  });
}

// Reads t's elements through its strides, row-major, as doubles.
inline std::vector<double> read_strided(const Tensor& t) {
  synchronize(t.device());
  std::vector<double> out(static_cast<size_t>(naive_numel(t.sizes())));
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* base = static_cast<const T*>(t.data_ptr());
    for_each_offset(t, [&](int64_t i, int64_t off) {
      out[i] = value_to_double(base[off]);
    });
  });
  return out;
}

// A new contiguous host tensor of dtype t and shape holding values.
inline Tensor make_tensor(const std::vector<double>& values, const Shape& shape,
                          DType dtype = DType::kF32) {
  Tensor t = empty(shape, dtype);
  write_strided(t, values);
  return t;
}

// 0, 1, 2, ... n-1 as doubles.
inline std::vector<double> iota(int64_t n, double start = 0.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

// Deterministic pseudo-random values in [lo, hi) (a small LCG, not the
// runtime's generator).
inline std::vector<double> lcg_values(int64_t n, uint64_t seed, double lo,
                                      double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    v[i] = lo + (hi - lo) * u;
  }
  return v;
}

// Integer-valued pseudo-random values in [lo, hi].
inline std::vector<double> lcg_ints(int64_t n, uint64_t seed, int64_t lo,
                                    int64_t hi) {
  std::vector<double> v = lcg_values(n, seed, 0.0, 1.0);
  for (double& x : v) {
    x = static_cast<double>(lo + static_cast<int64_t>(x * (hi - lo + 1)));
  }
  return v;
}

inline std::vector<double> to_doubles(const Tensor& t) {
  return t.to_vector<double>();
}

// Empty string when every actual[i] is within atol + rtol * |expected[i]|
// (NaNs match NaNs, infinities match equal infinities); else a report of
// the first mismatches.
inline std::string close_report(const std::vector<double>& actual,
                                const std::vector<double>& expected,
                                double rtol = 0.0, double atol = 0.0) {
  std::ostringstream out;
  if (actual.size() != expected.size()) {
    out << "size mismatch: actual " << actual.size() << " vs expected "
        << expected.size();
    return out.str();
  }
  int bad = 0;
  double worst = 0;
  size_t worst_i = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool ok;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
    } else {
      ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    }
    if (!ok) {
      if (bad < 5) {
        out.precision(10);
        out << "[" << i << "] actual " << a << " expected " << e << "; ";
      }
      double err = std::fabs(a - e);
      if (!(err <= worst)) {
        worst = err;
        worst_i = i;
      }
      ++bad;
    }
  }
  if (bad) {
    out << bad << " of " << actual.size() << " mismatched (rtol " << rtol
        << ", atol " << atol << "), worst at " << worst_i;
  }
  return out.str();
}

// Per-element tolerances.
inline std::string close_report_tol(const std::vector<double>& actual,
                                    const std::vector<double>& expected,
                                    const std::vector<double>& tol) {
  std::ostringstream out;
  if (actual.size() != expected.size() || tol.size() != expected.size()) {
    out << "size mismatch: actual " << actual.size() << " vs expected "
        << expected.size();
    return out.str();
  }
  int bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool ok = (std::isnan(a) && std::isnan(e)) || a == e ||
              std::fabs(a - e) <= tol[i];
    if (!ok) {
      if (bad < 5) {
        out.precision(10);
        out << "[" << i << "] actual " << a << " expected " << e << " tol "
            << tol[i] << "; ";
      }
      ++bad;
    }
  }
  if (bad) out << bad << " of " << actual.size() << " mismatched";
  return out.str();
}

// Checks t's values against expected (row-major), also through the
// independent strided reader.
#define TESSERA_CHECK_VALUES(t, expected, rtol, atol)                         \
  do {                                                                        \
    CHECK(::tessera::testing::close_report(::tessera::testing::to_doubles(t), \
                                           (expected), (rtol), (atol)) ==     \
          "");                                                                \
    CHECK(::tessera::testing::close_report(                                   \
              ::tessera::testing::read_strided(t), (expected), (rtol),        \
              (atol)) == "");                                                 \
  } while (false)

// Matches an exception whose what() contains every one of the parts.
class MessageContains : public Catch::MatcherBase<std::exception> {
 public:
  MessageContains(std::initializer_list<std::string> parts) : parts_(parts) {}
  explicit MessageContains(std::vector<std::string> parts)
      : parts_(std::move(parts)) {}
  bool match(const std::exception& e) const override {
    std::string what = e.what();
    for (const std::string& p : parts_) {
      if (what.find(p) == std::string::npos) return false;
    }
    return true;
  }
  std::string describe() const override {
    std::string s = "has a message containing all of:";
    for (const std::string& p : parts_) s += " \"" + p + "\"";
    return s;
  }

 private:
  std::vector<std::string> parts_;
};

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// As MessageContains, ignoring case.
class MessageContainsNoCase : public Catch::MatcherBase<std::exception> {
 public:
  MessageContainsNoCase(std::initializer_list<std::string> parts)
      : parts_(parts) {}
  bool match(const std::exception& e) const override {
    std::string what = lower(e.what());
    for (const std::string& p : parts_) {
      if (what.find(lower(p)) == std::string::npos) return false;
    }
    return true;
  }
  std::string describe() const override {
    std::string s = "has a message containing (any case) all of:";
    for (const std::string& p : parts_) s += " \"" + p + "\"";
    return s;
  }

 private:
  std::vector<std::string> parts_;
};

// CHECK_THROWS_MATCHES with the error type and message parts.
#define TESSERA_CHECK_THROWS(expr, ErrorType, ...)          \
  CHECK_THROWS_MATCHES(expr, ::tessera::ErrorType,          \
                       ::tessera::testing::MessageContains({__VA_ARGS__}))

// The error kind thrown by fn, or "none"/"other: what" when fn does not
// throw a tessera::Error. For the few cases where PyTorch's RuntimeError
// maps to more than one sensible kind.
inline std::string thrown_kind(const std::function<void()>& fn,
                               std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return error_kind_name(e.kind());
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "none";
}

}  // namespace tessera::testing
