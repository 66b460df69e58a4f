#include "tests/conformance/conformance.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "runtime/core/checked_math.h"
#include "runtime/device/device_registry.h"

namespace tessera::conformance {

const std::vector<std::string>& known_device_types() {
  static const std::vector<std::string> types = {"cpu", "vulkan", "cuda", "template"};
  return types;
}

namespace {

// One op's cases on one device type, as a Catch test case.
class DeviceCaseInvoker final : public Catch::ITestInvoker {
 public:
  DeviceCaseInvoker(std::string type, std::string op, DeviceCaseFn run)
      : type_(std::move(type)), op_(std::move(op)), run_(run) {}

  void invoke() const override {
    DeviceInterface* iface = DeviceRegistry::instance().find(type_);
    if (iface == nullptr || iface->device_count() == 0) {
      TESSERA_SKIP("no " + type_ + " device on this machine");
    }
    run_(type_, op_);
  }

 private:
  std::string type_, op_;
  DeviceCaseFn run_;
};

}  // namespace

namespace {
std::set<std::string>& case_ops() {
  static std::set<std::string> ops;
  return ops;
}
}  // namespace

const std::set<std::string>& registered_case_ops() { return case_ops(); }

std::vector<RegisteredOpCase>& op_cases() {
  static std::vector<RegisteredOpCase> cases;
  return cases;
}

const std::vector<RegisteredOpCase>& registered_op_cases() { return op_cases(); }

bool register_op_case(const char* op, OpCaseFactory make) {
  op_cases().push_back({op, make});
  return true;
}

bool register_device_cases(const char* op, const char* kind, DeviceCaseFn run, const char* file,
                           int line) {
  case_ops().insert(op);
  for (const std::string& type : known_device_types()) {
    const std::string name = type + ": " + op + kind;  // Catch copies it
    Catch::AutoReg(new DeviceCaseInvoker(type, op, run), Catch::SourceLineInfo(file, line),
                   Catch::StringRef(), Catch::NameAndTags(Catch::StringRef(name)));
  }
  return true;
}

namespace {

// splitmix64: a small, well-mixed generator for deterministic inputs.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::pair<double, double> dtype_range(DType dtype) {
  switch (dtype) {
    case DType::kBool: return {0, 1};
    case DType::kU8: return {0, 255};
    case DType::kI8: return {-128, 127};
    case DType::kI16: return {-32768, 32767};
    case DType::kI32: return {-2147483648.0, 2147483647.0};
    default: return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
}

std::string format_values(const std::vector<double>& v, size_t around) {
  std::ostringstream out;
  size_t lo = around > 3 ? around - 3 : 0, hi = std::min(v.size(), around + 4);
  out << "[" << (lo > 0 ? "..., " : "");
  for (size_t i = lo; i < hi; ++i) out << v[i] << (i + 1 < hi ? ", " : "");
  out << (hi < v.size() ? ", ...]" : "]");
  return out.str();
}

bool close(double got, double want, Tolerance tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF16: return {1e-3, 1e-5};
    case DType::kBF16: return {1.6e-2, 1e-5};
    case DType::kF32: return {1.3e-6, 1e-5};
    case DType::kF64: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

double round_to_dtype(double v, DType dtype) {
  switch (dtype) {
    case DType::kBool: return v != 0 ? 1 : 0;
    case DType::kF16: return static_cast<float>(Half(static_cast<float>(v)));
    case DType::kBF16: return static_cast<float>(BFloat16(static_cast<float>(v)));
    case DType::kF32: return static_cast<float>(v);
    case DType::kF64: return v;
    default: {
      // Integers wrap as two's complement, as the kernels' integer math does.
      if (!std::isfinite(v)) return v;
      auto wrap = [](double x, int bits, bool is_signed) {
        uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x));
        uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
        u &= mask;
        if (is_signed && bits < 64 && (u >> (bits - 1))) return static_cast<double>(static_cast<int64_t>(u | ~mask));
        if (is_signed && bits == 64) return static_cast<double>(static_cast<int64_t>(u));
        return static_cast<double>(u);
      };
      switch (dtype) {
        case DType::kU8: return wrap(v, 8, false);
        case DType::kI8: return wrap(v, 8, true);
        case DType::kI16: return wrap(v, 16, true);
        case DType::kI32: return wrap(v, 32, true);
        default: return wrap(v, 64, true);
      }
    }
  }
}

Tensor unique_rows_index(int64_t rows, int64_t cols, int64_t size, int64_t step) {
  Tensor t = empty({rows, cols}, TensorOptions(DType::kI64));
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = (j * step + i) % size;
  }
  return t;
}

Tensor make_input(const Shape& sizes, DType dtype, uint64_t seed, double lo, double hi) {
  auto [min, max] = dtype_range(dtype);
  if (is_integral(dtype) || dtype == DType::kBool) {
    lo = std::max(std::ceil(lo), min);
    hi = std::min(std::floor(hi), max);
  }
  Tensor f64 = empty(sizes, TensorOptions(DType::kF64, host_device()));
  double* p = f64.data<double>();
  for (int64_t i = 0; i < f64.numel(); ++i) {
    double u = static_cast<double>(mix(seed * 0x100000001b3ull + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    double v = lo + (hi - lo) * u;
    if (dtype == DType::kBool) {
      v = u < 0.5 ? 0 : 1;
    } else if (!is_floating(dtype)) {
      v = std::min(std::floor(v + 0.5), hi);
    }
    p[i] = v;
  }
  return f64.to(dtype);
}

Tensor copy_like(const Tensor& t, Device device) {
  if (t.numel() == 0) return empty(t.sizes(), TensorOptions(t.dtype(), device));
  // Copy the storage span so strides and overlaps survive the copy.
  int64_t span = 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.sizes()[d] - 1) * t.strides()[d];
  Tensor host_span = Tensor::from_storage(t.storage(), t.dtype(), {span}, {1}, t.storage_offset());
  Tensor span_copy = device == t.device() ? host_span.clone() : host_span.to(device);
  return span_copy.as_strided(t.sizes(), t.strides(), span_copy.storage_offset());
}

Tensor to_device_like(const Tensor& t, Device device) {
  return t.device() == device ? t : copy_like(t, device);
}

std::vector<double> values_of(const Tensor& t) { return t.to_vector<double>(); }

std::vector<Sample> elementwise_samples(DType dtype, int arity, double lo, double hi) {
  std::vector<Sample> out;
  uint64_t seed = 1;
  auto input = [&](const Shape& s) { return make_input(s, dtype, seed++, lo, hi); };
  auto add = [&](std::string desc, std::vector<Tensor> in) {
    Sample s;
    s.description = std::move(desc);
    s.inputs = std::move(in);
    out.push_back(std::move(s));
  };
  auto same = [&](const Shape& shape, const std::function<Tensor(Tensor)>& view) {
    std::vector<Tensor> in;
    for (int k = 0; k < arity; ++k) in.push_back(view(input(shape)));
    return in;
  };
  auto id = [](Tensor t) { return t; };
  add("0-d", same({}, id));
  add("zero-size [0, 3]", same({0, 3}, id));
  add("contiguous [5, 7]", same({5, 7}, id));
  add("transposed [7, 5] viewed as [5, 7]", same({7, 5}, [](Tensor t) { return t.t(); }));
  add("strided slice [4, 9] step 2 in dim 1",
      same({4, 9}, [](Tensor t) { return t.slice(1, 0, std::nullopt, 2); }));
  if (arity > 1) {
    std::vector<Tensor> in;
    in.push_back(input({3, 1, 5}));
    for (int k = 1; k < arity; ++k) in.push_back(input({k % 2 ? Shape{4, 1} : Shape{5}}));
    add("broadcast [3, 1, 5] with [4, 1] / [5]", std::move(in));
    std::vector<Tensor> in0d;
    in0d.push_back(input({2, 3}));
    for (int k = 1; k < arity; ++k) in0d.push_back(input({}));
    add("tensor with 0-d operands", std::move(in0d));
  } else {
    add("expanded [1, 6] to [4, 6]", same({1, 6}, [](Tensor t) { return t.expand({4, 6}); }));
  }
  add("larger than L2 [1024, 1100]", same({1024, 1100}, id));
  return out;
}

Expected map_reference(const std::vector<Tensor>& inputs, DType out_dtype,
                       const std::function<double(const std::vector<double>&)>& f) {
  Shape shape;
  for (const Tensor& t : inputs) shape = broadcast_shapes(shape, t.sizes(), "reference");
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : inputs) vals.push_back(values_of(t.expand(shape)));
  Expected e{shape, out_dtype, {}};
  int64_t n = checked_numel(shape, "reference");
  e.values.resize(n);
  std::vector<double> args(inputs.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < inputs.size(); ++k) args[k] = vals[k][i];
    e.values[i] = round_to_dtype(f(args), out_dtype);
  }
  return e;
}

Sample sample_of(std::string description, std::vector<Tensor> inputs, Shape dims,
                 std::vector<Scalar> scalars, bool flag) {
  Sample s;
  s.description = std::move(description);
  s.inputs = std::move(inputs);
  s.dims = std::move(dims);
  s.scalars = std::move(scalars);
  s.flag = flag;
  return s;
}

int64_t numel_of(const Shape& shape) { return checked_numel(shape, "numel_of"); }

void for_each_coord(const Shape& shape, const std::function<void(const Shape&)>& f) {
  const int64_t n = numel_of(shape);
  Shape c(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      c[d] = rem % shape[d];
      rem /= shape[d];
    }
    f(c);
  }
}

Expected build_expected(const Shape& shape, DType dtype,
                        const std::function<double(const Shape&)>& f) {
  Expected e{shape, dtype, {}};
  for_each_coord(shape, [&](const Shape& c) { e.values.push_back(round_to_dtype(f(c), dtype)); });
  return e;
}

void for_each_line(const Shape& sizes, int64_t dim, std::vector<double>& v,
                   const std::function<void(std::vector<double*>&)>& f) {
  if (sizes.empty()) {
    std::vector<double*> line{v.data()};
    if (!v.empty()) f(line);
    return;
  }
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < sizes.size(); ++d) inner *= sizes[d];
  const int64_t n = sizes[dim];
  const int64_t outer = n == 0 ? 0 : static_cast<int64_t>(v.size()) / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<double*> line;
      for (int64_t k = 0; k < n; ++k) line.push_back(&v[(o * n + k) * inner + i]);
      f(line);
    }
  }
}

// How much of the suite a device ran with its own kernels: per op and
// dtype, whether any sample needed the host (a CPU fallback or a kernel's
// host staging). Printed once at exit, one line per device that ran
// cases, so a backend's coverage is a number in every test log. With
// TESSERA_CONFORMANCE_REPORT=FILE, every op x dtype is also written to FILE
// as JSON (native, host or failing, and the host kernels): what
// `./dev device-report` tabulates.
class NativeCoverage {
 public:
  static NativeCoverage& instance() {
    static NativeCoverage coverage;
    return coverage;
  }
  void record(const std::string& device, const std::string& op, DType dtype,
              const std::map<std::string, int64_t>& host_ops, bool failed) {
    Combination c{op, std::string(dtype_name(dtype)), failed, {}};
    for (const auto& [name, count] : host_ops) c.host_kernels.push_back(name);
    entries_[device].push_back(std::move(c));
  }
  ~NativeCoverage() {
    write_report();
    for (const auto& [device, combinations] : entries_) {
      std::vector<std::string> staged;
      for (const Combination& c : combinations) {
        if (c.host_kernels.empty()) continue;
        staged.push_back(c.op + " " + c.dtype + " (" + joined(c.host_kernels, ", ") + ")");
      }
      std::printf("conformance native coverage on %s: %lld of %lld op x dtype combinations "
                  "ran without the host\n",
                  device.c_str(), static_cast<long long>(combinations.size() - staged.size()),
                  static_cast<long long>(combinations.size()));
      if (staged.empty() || device.rfind("cpu", 0) == 0) continue;
      std::printf("  host-staged (op dtype (kernels)):");
      for (const std::string& line : staged) std::printf(" %s;", line.c_str());
      std::printf("\n");
    }
  }

 private:
  struct Combination {
    std::string op, dtype;
    bool failed;
    std::vector<std::string> host_kernels;  // the kernels that took the host, by name

    const char* status() const {
      return failed ? "failing" : host_kernels.empty() ? "native" : "host";
    }
  };

  static std::string joined(const std::vector<std::string>& parts, const char* separator) {
    std::string out;
    for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
    return out;
  }

  static std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out + "\"";
  }

  void write_report() const {
    const char* path = std::getenv("TESSERA_CONFORMANCE_REPORT");
    if (path == nullptr || path[0] == '\0') return;
    std::FILE* f = std::fopen(path, "w");
    if (f == nullptr) {
      std::fprintf(stderr, "conformance: cannot write TESSERA_CONFORMANCE_REPORT=%s\n", path);
      return;
    }
    std::fprintf(f, "{\"devices\": {");
    bool first_device = true;
    for (const auto& [device, combinations] : entries_) {
      std::fprintf(f, "%s%s: [", first_device ? "" : ", ", json_string(device).c_str());
      first_device = false;
      for (size_t i = 0; i < combinations.size(); ++i) {
        const Combination& c = combinations[i];
        std::fprintf(f, "%s{\"op\": %s, \"dtype\": %s, \"status\": %s, \"host_kernels\": %s}",
                     i ? ", " : "", json_string(c.op).c_str(), json_string(c.dtype).c_str(),
                     json_string(c.status()).c_str(),
                     json_string(joined(c.host_kernels, ",")).c_str());
      }
      std::fprintf(f, "]");
    }
    std::fprintf(f, "}}\n");
    std::fclose(f);
  }

  // Every op x dtype each device ran, in order.
  std::map<std::string, std::vector<Combination>> entries_;
};

// Fallback counts that grew between two snapshots.
std::map<std::string, int64_t> grown_counts(const std::map<std::string, int64_t>& before,
                                            const std::map<std::string, int64_t>& after) {
  std::map<std::string, int64_t> grown;
  for (const auto& [name, count] : after) {
    auto it = before.find(name);
    int64_t was = it == before.end() ? 0 : it->second;
    if (count > was) grown[name] = count - was;
  }
  return grown;
}

std::optional<std::string> mismatch(const Tensor& got, const Expected& want, Tolerance tol) {
  std::ostringstream why;
  if (got.dtype() != want.dtype || got.sizes() != want.sizes) {
    why << "got " << dtype_name(got.dtype()) << shape_to_string(got.sizes()) << ", want "
        << dtype_name(want.dtype) << shape_to_string(want.sizes);
    return why.str();
  }
  std::vector<double> values = values_of(got);
  for (size_t i = 0; i < values.size(); ++i) {
    if (close(values[i], want.values[i], tol)) continue;
    why << "mismatch at flat index " << i << ": got " << values[i] << ", want " << want.values[i]
        << " (rtol " << tol.rtol << ", atol " << tol.atol << ")\n  got  "
        << format_values(values, i) << "\n  want " << format_values(want.values, i);
    return why.str();
  }
  return std::nullopt;
}

void run_op_case(const std::string& device_type, const std::string& op, const OpCase& c) {
  Device device{DeviceType::from_name(device_type), 0};
  int64_t checked = 0;
  for (DType dtype : c.dtypes) {
    std::map<std::string, int64_t> host_ops;
    bool failed = false;  // any sample of this dtype (for the report)
    for (const Sample& sample : c.samples(dtype)) {
      std::string where = op + " " + std::string(dtype_name(dtype)) + " " + sample.description +
                          " on " + device.to_string();
      INFO(where);
      std::vector<Tensor> dev_inputs;
      for (const Tensor& t : sample.inputs) dev_inputs.push_back(to_device_like(t, device));
      std::vector<Tensor> outs;
      std::map<std::string, int64_t> before = cpu_fallback_counts();
      try {
        outs = c.run(dev_inputs, sample);
      } catch (const std::exception& e) {
        failed = true;
        FAIL_CHECK("threw: " << e.what());
        continue;
      }
      for (const auto& [name, count] : grown_counts(before, cpu_fallback_counts())) {
        host_ops[name] += count;
      }
      std::vector<Expected> expected = c.reference(sample);
      failed = failed || outs.size() != expected.size();
      REQUIRE(outs.size() == expected.size());
      for (size_t k = 0; k < outs.size(); ++k) {
        const Tensor& got = outs[k];
        const Expected& want = expected[k];
        INFO("output " << k << ": got " << describe(got) << ", want "
                       << dtype_name(want.dtype) << shape_to_string(want.sizes));
        CHECK(got.device() == device);
        if (got.device() != device) {
          failed = true;
          continue;
        }
        Tolerance tol = c.tolerance ? c.tolerance(dtype, sample) : default_tolerance(want.dtype);
        if (std::optional<std::string> why = mismatch(got, want, tol)) {
          failed = true;
          FAIL_CHECK(*why);
          continue;
        }
        ++checked;
      }
    }
    NativeCoverage::instance().record(device.to_string(), op, dtype, host_ops, failed);
  }
  CHECK(checked > 0);
  std::printf("conformance: %s on %s: %lld outputs checked\n", op.c_str(),
              device.to_string().c_str(), static_cast<long long>(checked));
}

void run_error_cases(const std::string& device_type, const std::string& op,
                     const std::vector<ErrorCase>& cases) {
  Device device{DeviceType::from_name(device_type), 0};
  for (const ErrorCase& c : cases) {
    INFO(op << ": " << c.description << " on " << device.to_string());
    bool threw = false;
    try {
      c.run(device);
    } catch (const Error& e) {
      threw = true;
      INFO("message: " << e.what());
      CHECK(error_kind_name(e.kind()) == std::string(error_kind_name(c.kind)));
      for (const std::string& part : c.message_parts) {
        CHECK_THAT(std::string(e.what()), Catch::Contains(part));
      }
    } catch (const std::exception& e) {
      threw = true;
      FAIL_CHECK("threw a non-tessera exception: " << e.what());
    }
    if (!threw) FAIL_CHECK("did not throw");
  }
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {DType::kBool, DType::kU8,  DType::kI8,   DType::kI16,
                                       DType::kI32,  DType::kI64, DType::kF16,  DType::kBF16,
                                       DType::kF32,  DType::kF64};
  return v;
}
const std::vector<DType>& floating_dtypes() {
  static const std::vector<DType> v = {DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  return v;
}
const std::vector<DType>& numeric_dtypes() {
  static const std::vector<DType> v = {DType::kU8,  DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
                                       DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  return v;
}
const std::vector<DType>& integral_dtypes() {
  static const std::vector<DType> v = {DType::kU8, DType::kI8, DType::kI16, DType::kI32, DType::kI64};
  return v;
}
const std::vector<DType>& integral_and_bool_dtypes() {
  static const std::vector<DType> v = {DType::kBool, DType::kU8, DType::kI8,
                                       DType::kI16,  DType::kI32, DType::kI64};
  return v;
}

}  // namespace tessera::conformance
