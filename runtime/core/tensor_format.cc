// Tensor::to_string in PyTorch's style: "tensor([[1., 2.],\n        [3., 4.]])",
// summarizing with "..." past 1000 elements.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/core/tensor.h"

namespace tessera {

namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

struct Formatter {
  DType dtype;
  bool integer_valued = true;  // floats that are all whole numbers print as "1."
  bool use_scientific = false;

  std::string format(double v) const {
    char buf[64];
    if (dtype == DType::kBool) return v != 0 ? "True" : "False";
    if (is_integral(dtype)) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
      return buf;
    }
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (use_scientific) {
      std::snprintf(buf, sizeof buf, "%.4e", v);
    } else if (integer_valued) {
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    } else {
      std::snprintf(buf, sizeof buf, "%.4f", v);
    }
    return buf;
  }
};

void print_dim(std::ostringstream& out, const std::vector<double>& values, const Shape& sizes,
               const Shape& strides, size_t d, int64_t base, bool summarize,
               const Formatter& fmt, const std::vector<size_t>& widths, int indent) {
  if (d == sizes.size()) {
    std::string s = fmt.format(values[base]);
    out << std::string(widths[0] > s.size() ? widths[0] - s.size() : 0, ' ') << s;
    return;
  }
  out << "[";
  int64_t n = sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      out << (d + 1 == sizes.size() ? "..., " : "...,\n" + std::string(indent + d + 1, ' '));
      i = n - kEdgeItems;
    }
    print_dim(out, values, sizes, strides, d + 1, base + i * strides[d], summarize, fmt, widths,
              indent);
    if (i + 1 < n) {
      if (d + 1 == sizes.size()) {
        out << ", ";
      } else {
        out << "," << std::string(sizes.size() - d - 1, '\n') << std::string(indent + d + 1, ' ');
      }
    }
  }
  out << "]";
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(<undefined>)";
  std::vector<double> values = to_vector<double>();
  Formatter fmt{dtype()};
  double max_abs = 0, min_abs = INFINITY;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    if (v != std::floor(v)) fmt.integer_valued = false;
    max_abs = std::max(max_abs, std::fabs(v));
    if (v != 0) min_abs = std::min(min_abs, std::fabs(v));
  }
  if (is_floating(dtype()) &&
      (max_abs >= 1e8 || (!fmt.integer_valued && (min_abs < 1e-4 || max_abs / min_abs > 1000)))) {
    fmt.use_scientific = true;
  }
  size_t width = 0;
  for (double v : values) width = std::max(width, fmt.format(v).size());

  std::ostringstream out;
  const int indent = 7;  // strlen("tensor(")
  out << "tensor(";
  Shape strides = contiguous_strides(sizes());
  if (numel() == 0) {
    out << "[]";
  } else {
    print_dim(out, values, sizes(), strides, 0, 0, numel() > kSummarizeThreshold, fmt, {width},
              indent);
  }
  bool default_dtype = dtype() == DType::kF32 || dtype() == DType::kI64 || dtype() == DType::kBool;
  if (numel() == 0 && dim() != 1) out << ", size=" << shape_to_string(sizes());
  if (!default_dtype || (numel() == 0 && dtype() != DType::kF32)) {
    out << ", dtype=" << dtype_name(dtype());
  }
  if (!(device() == host_device())) out << ", device='" << device().to_string() << "'";
  out << ")";
  return out.str();
}

}  // namespace tessera
