// The conformance suite: every op, over dtypes and shape classes, on every
// device, against a naive reference computed in double on the host.
//
// An op's cases are written once, as an OpCase, and
//   TESSERA_CONFORMANCE_OP("add") { return OpCase{...}; }
// turns them into one Catch2 test case per known device type
// ("cpu: add", "vulkan: add", ...). A device type that is not linked in,
// or has no device on this machine, reports its test cases as skipped.
//   TESSERA_CONFORMANCE_ERRORS("add") { return std::vector<ErrorCase>{...}; }
// does the same for the op's error cases: each must throw the given error
// kind with a message containing the given parts.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/tessera.h"
#include "tests/support/skip.h"

namespace tessera::conformance {

// The device types the suite knows; each op gets a test case per type. The
// list is in conformance.cc, so a new device type (./dev new-device)
// recompiles that file alone.
const std::vector<std::string>& known_device_types();

// Values an op must produce: sizes, dtype and row-major values in double.
struct Expected {
  Shape sizes;
  DType dtype;
  std::vector<double> values;
};

// One call of an op. Inputs live on the host; the runner moves them to the
// device under test keeping their layout class (a transposed input stays
// transposed there; see to_device_like).
struct Sample {
  std::string description;
  std::vector<Tensor> inputs;
  std::vector<Scalar> scalars;  // op arguments, meaning defined per op
  Shape dims;                   // dims/sizes argument, meaning per op
  bool flag = false;            // a boolean argument (keepdim, ...)
};

struct Tolerance {
  double rtol;
  double atol;
};

// torch.testing.assert_close's defaults for dtype; exact for integers.
Tolerance default_tolerance(DType dtype);

struct OpCase {
  std::vector<DType> dtypes;
  // Samples for one dtype (the shape classes of the op).
  std::function<std::vector<Sample>(DType)> samples;
  // Runs the op on the device; `inputs` are the sample's inputs on it.
  std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Sample&)> run;
  // The expected outputs, from the sample's host inputs.
  std::function<std::vector<Expected>(const Sample&)> reference;
  // Overrides default_tolerance (e.g. scaled by a reduction's length).
  std::function<Tolerance(DType, const Sample&)> tolerance;
};

struct ErrorCase {
  std::string description;
  std::function<void(Device)> run;  // must throw
  ErrorKind kind;
  std::vector<std::string> message_parts;
};

// -- Inputs.
// Deterministic host values for dtype: floats in [lo, hi], integers in
// [lo, hi] clamped to the dtype's range, bools half true.
Tensor make_input(const Shape& sizes, DType dtype, uint64_t seed, double lo = -3.0,
                  double hi = 3.0);
// An int64 host tensor of shape [rows, cols] with index (i, j) =
// (j * step + i) % size: each row is free of duplicates when cols <= size
// and step is coprime to size (scatter indices).
Tensor unique_rows_index(int64_t rows, int64_t cols, int64_t size, int64_t step);
// A copy of t on device (its own device too) with the same strides and
// overlaps: a copy of its storage span, viewed as t is.
Tensor copy_like(const Tensor& t, Device device);
// t itself when it is on device, else copy_like(t, device).
Tensor to_device_like(const Tensor& t, Device device);
// Row-major values of a tensor, in double (on the host).
std::vector<double> values_of(const Tensor& t);

// Shape classes for an elementwise op with `arity` operands: 0-d,
// zero-size, contiguous, transposed, strided slice, broadcast (expanded and
// mixed ranks), and one larger than the L2 cache. Values in [lo, hi].
std::vector<Sample> elementwise_samples(DType dtype, int arity, double lo = -3.0,
                                        double hi = 3.0);

// Applies f to each element (row-major) of the broadcast of the inputs.
Expected map_reference(const std::vector<Tensor>& inputs, DType out_dtype,
                       const std::function<double(const std::vector<double>&)>& f);

// A Sample from its parts.
Sample sample_of(std::string description, std::vector<Tensor> inputs, Shape dims = {},
                 std::vector<Scalar> scalars = {}, bool flag = false);

// A host tensor's values with its shape, addressed by coordinates.
struct Nd {
  Shape shape;
  std::vector<double> v;
  explicit Nd(const Tensor& t) : shape(t.sizes()), v(values_of(t)) {}
  int64_t offset(const Shape& c) const {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + c[d];
    return off;
  }
  double at(const Shape& c) const { return v[static_cast<size_t>(offset(c))]; }
  double& at(const Shape& c) { return v[static_cast<size_t>(offset(c))]; }
};

// Row-major helpers for references.
int64_t numel_of(const Shape& shape);
// Calls f(coords) for every coordinate of shape, in row-major order.
void for_each_coord(const Shape& shape, const std::function<void(const Shape&)>& f);
// Expected values f(coords) over shape, rounded as dtype stores them.
Expected build_expected(const Shape& shape, DType dtype,
                        const std::function<double(const Shape&)>& f);
// Calls f with pointers to each line along dim of row-major values v of a
// tensor of `sizes` (a 0-d tensor is one line of one value).
void for_each_line(const Shape& sizes, int64_t dim, std::vector<double>& v,
                   const std::function<void(std::vector<double*>&)>& f);

// Rounds v as dtype stores it (so references match 16-bit results and
// integer wrap-around).
double round_to_dtype(double v, DType dtype);

// -- The runner, used by the macros.
void run_op_case(const std::string& device_type, const std::string& op, const OpCase& c);
void run_error_cases(const std::string& device_type, const std::string& op,
                     const std::vector<ErrorCase>& cases);

// All dtypes, and common subsets.
const std::vector<DType>& all_dtypes();
const std::vector<DType>& floating_dtypes();       // f16 bf16 f32 f64
const std::vector<DType>& numeric_dtypes();        // all but bool
const std::vector<DType>& integral_dtypes();       // u8 i8 i16 i32 i64
const std::vector<DType>& integral_and_bool_dtypes();

}  // namespace tessera::conformance

#define TESSERA_CONF_CAT2(a, b) a##b
#define TESSERA_CONF_CAT(a, b) TESSERA_CONF_CAT2(a, b)

namespace tessera::conformance {

// Runs one op's cases on one device type.
using DeviceCaseFn = void (*)(const std::string& device_type, const std::string& op);

// Registers the Catch test case "<type>: <op><kind>" for every known device
// type; each runs `run` on its type, or is skipped where the type has no
// device. For the macros below (a static initializer): returns true.
bool register_device_cases(const char* op, const char* kind, DeviceCaseFn run, const char* file,
                           int line);

// The op labels of every registered case ("gelu", "pow floating", ...), for
// the check that each op of the runtime's op tables has cases.
const std::set<std::string>& registered_case_ops();

// Every TESSERA_CONFORMANCE_OP's label and case, in registration order: the
// op fuzzer (tests/fuzz/op_fuzz.cc) runs them with inputs of its own making.
using OpCaseFactory = OpCase (*)();
struct RegisteredOpCase {
  std::string op;
  OpCaseFactory make;
};
const std::vector<RegisteredOpCase>& registered_op_cases();
bool register_op_case(const char* op, OpCaseFactory make);
// Error cases are not kept (the fuzzer makes its own bad inputs).
inline bool register_op_case(const char*, std::vector<ErrorCase> (*)()) { return true; }

// Why got differs from want beyond tol (device aside): dtype, shape, or the
// first value out of tolerance; nothing when it matches.
std::optional<std::string> mismatch(const Tensor& got, const Expected& want, Tolerance tol);

}  // namespace tessera::conformance

#define TESSERA_CONF_DEFINE(kind, op, ret, runner, fn)                                \
  static ret fn();                                                                     \
  static const bool TESSERA_CONF_CAT(fn, _kept) =                                      \
      ::tessera::conformance::register_op_case(op, &fn);                               \
  static const bool TESSERA_CONF_CAT(fn, _registered) =                                \
      ::tessera::conformance::register_device_cases(                                   \
          op, kind,                                                                    \
          [](const std::string& type, const std::string& name) {                       \
            ::tessera::conformance::runner(type, name, fn());                          \
          },                                                                           \
          __FILE__, __LINE__);                                                         \
  static ret fn()

#define TESSERA_CONFORMANCE_OP(op)                                         \
  TESSERA_CONF_DEFINE("", op, ::tessera::conformance::OpCase, run_op_case, \
                      TESSERA_CONF_CAT(tessera_conformance_op_, __LINE__))

#define TESSERA_CONFORMANCE_ERRORS(op)                                                   \
  TESSERA_CONF_DEFINE(" errors", op, std::vector<::tessera::conformance::ErrorCase>,     \
                      run_error_cases, TESSERA_CONF_CAT(tessera_conformance_errors_, __LINE__))
