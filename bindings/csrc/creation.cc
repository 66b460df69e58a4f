// Creation and random functions: tensor(data), empty/zeros/ones/full (and
// *_like), arange, linspace, eye, rand/randn/randint/bernoulli and the
// Generator they take. Sizes come as ints or one sequence, as in PyTorch.
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/interop.h"
#include "bindings/csrc/shape_args.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/random/generator.h"

namespace tessera_py {

namespace {

using tessera::Device;
using tessera::DType;
using tessera::Generator;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;

// A device argument given as tessera.device or text ("vulkan:0"). Functions
// taking *sizes convert it here: pybind11 skips implicit conversions for
// keyword arguments that follow *args.
std::optional<Device> device_arg(const py::object& device) {
  if (device.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(device)) return Device::parse(device.cast<std::string>());
  return device.cast<Device>();
}

TensorOptions options(std::optional<DType> dtype, std::optional<Device> device) {
  TensorOptions o;
  o.dtype = dtype;
  if (device) o.device = *device;
  return o;
}

// -- tensor(data): nested sequences of numbers.

struct NestedData {
  Shape sizes;
  std::vector<Scalar> values;  // row-major
  tessera::DTypeCategory category = tessera::DTypeCategory::kBool;
  bool sizes_known = false;
};

// Deeper nesting is a list that contains itself (or a mistake): refused
// before the recursion below exhausts the C stack.
constexpr size_t kMaxNestingDepth = 256;

void collect(py::handle obj, size_t depth, NestedData& data) {
  if (depth > kMaxNestingDepth) {
    throw py::value_error("tensor(): the data is nested more than " +
                          std::to_string(kMaxNestingDepth) +
                          " deep (a sequence that contains itself?)");
  }
  PyObject* o = obj.ptr();
  // A 0-d tensor is a number here, as in torch.tensor([t0, t1]).
  const Tensor* zero_dim = nullptr;
  if (py::isinstance<Tensor>(obj) && obj.cast<const Tensor&>().dim() == 0) {
    zero_dim = &obj.cast<const Tensor&>();
  }
  const bool is_sequence =
      zero_dim == nullptr && PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o);
  if (!is_sequence) {
    if (data.sizes_known && depth != data.sizes.size()) {
      throw py::value_error("tensor(): the nested lists have different depths (a number at depth " +
                            std::to_string(depth) + ", lists at depth " +
                            std::to_string(data.sizes.size()) + ")");
    }
    if (!data.sizes_known) data.sizes_known = true;
    Scalar s;
    try {
      if (zero_dim != nullptr) {
        py::gil_scoped_release release;
        s = zero_dim->item();
      } else {
        s = obj.cast<Scalar>();
      }
    } catch (const py::cast_error&) {
      throw py::type_error("tensor(): expected numbers in nested sequences, got " +
                           py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
    }
    if (static_cast<int>(s.category()) > static_cast<int>(data.category)) {
      data.category = s.category();
    }
    data.values.push_back(s);
    return;
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  const int64_t n = static_cast<int64_t>(seq.size());
  if (!data.sizes_known) {
    if (depth == data.sizes.size()) data.sizes.push_back(n);
  } else if (depth >= data.sizes.size()) {
    throw py::value_error("tensor(): the nested lists have different depths (a list at depth " +
                          std::to_string(depth) + ")");
  }
  if (data.sizes[depth] != n) {
    throw py::value_error("tensor(): expected a sequence of length " +
                          std::to_string(data.sizes[depth]) + " at dim " + std::to_string(depth) +
                          ", got " + std::to_string(n));
  }
  if (n == 0 && !data.sizes_known) data.sizes_known = true;
  // py::object, not py::handle: a sequence's item may be a new object
  // (a range's int, a tensor's row, an array's scalar) that only the
  // iteration's temporary would own.
  for (py::object item : seq) collect(item, depth + 1, data);
}

Tensor tensor_from_nested(py::handle obj, std::optional<DType> dtype, Device device) {
  NestedData data;
  collect(obj, 0, data);
  // No values at all (tensor([]), tensor([[], []])): float32, as PyTorch.
  const DType result = dtype.value_or(tessera::default_dtype_for(
      data.values.empty() ? tessera::DTypeCategory::kFloating : data.category));
  py::gil_scoped_release release;
  Tensor host = tessera::empty(data.sizes, TensorOptions(result, tessera::host_device()));
  tessera::dispatch_dtype(result, [&](auto zero) {
    using T = decltype(zero);
    T* out = host.data<T>();
    for (size_t i = 0; i < data.values.size(); ++i) out[i] = data.values[i].to<T>();
  });
  return host.to(device);
}

Tensor make_tensor(py::handle data, std::optional<DType> dtype, std::optional<Device> device,
                   bool copy) {
  const Device target = device.value_or(tessera::host_device());
  if (py::isinstance<Tensor>(data)) {
    const Tensor& t = data.cast<const Tensor&>();
    py::gil_scoped_release release;
    Tensor r = t.to(target, dtype.value_or(t.dtype()));
    return copy && r.is_same(t) ? t.clone() : r;
  }
  if (std::optional<Tensor> shared = tensor_from_array_object(data)) {
    py::gil_scoped_release release;
    Tensor r = shared->to(target, dtype.value_or(shared->dtype()));
    return copy && r.is_same(*shared) ? shared->clone() : r;
  }
  return tensor_from_nested(data, dtype, target);
}

}  // namespace

void register_creation_ops(py::module_& m) {
  py::class_<Generator>(m, "Generator", "A Philox random number generator (same seed, same "
                                        "values on every device).")
      .def(py::init<uint64_t>(), "seed"_a = Generator::kDefaultSeed)
      .def("manual_seed", [](Generator& g, uint64_t seed) -> Generator& {
        g.manual_seed(seed);
        return g;
      }, "seed"_a, py::return_value_policy::reference)
      .def("initial_seed", &Generator::seed);
  m.def("manual_seed", &tessera::manual_seed, "seed"_a,
        "Seeds the default generator of every device.");
  m.def("default_generator", &tessera::default_generator, "device"_a,
        py::return_value_policy::reference, "The default generator of a device.");

  m.def("tensor", [](py::handle data, std::optional<DType> dtype, std::optional<Device> device) {
    return make_tensor(data, dtype, device, /*copy=*/true);
  }, "data"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     "A new tensor from a number, nested sequences of numbers, an array (NumPy, buffer, "
     "DLPack) or a tensor; always copies. Without dtype: bool, int64 or float32 after the "
     "values, or the array's dtype.");
  m.def("as_tensor", [](py::handle data, std::optional<DType> dtype, std::optional<Device> device) {
    return make_tensor(data, dtype, device, /*copy=*/false);
  }, "data"_a, "dtype"_a = py::none(), "device"_a = py::none(),
     "As tensor(), but shares memory with an array or tensor when dtype and device allow.");

  const char* sized_doc = "Sizes as ints or one sequence; dtype defaults to float32.";
  auto def_sized = [&](const char* name, auto make) {
    m.def(name, [make, name](const py::args& size, std::optional<DType> dtype,
                             const py::object& device) {
      Shape s = shape_from_args(size, name);
      TensorOptions o = options(dtype, device_arg(device));
      py::gil_scoped_release release;
      return make(s, o);
    }, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), sized_doc);
  };
  def_sized("empty", [](const Shape& s, TensorOptions o) { return tessera::empty(s, o); });
  def_sized("zeros", [](const Shape& s, TensorOptions o) { return tessera::zeros(s, o); });
  def_sized("ones", [](const Shape& s, TensorOptions o) { return tessera::ones(s, o); });
  m.def("full", [](const Shape& size, Scalar value, std::optional<DType> dtype,
                   std::optional<Device> device) {
    return tessera::full(size, value, options(dtype, device));
  }, "size"_a, "fill_value"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     ReleaseGil(), "Without dtype: bool, int64 or float32 after the kind of fill_value.");
  m.def("empty_strided", [](const Shape& size, const Shape& stride, std::optional<DType> dtype,
                            std::optional<Device> device) {
    return tessera::empty_strided(size, stride, options(dtype, device));
  }, "size"_a, "stride"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     ReleaseGil());
  m.def("empty_pinned", &tessera::empty_pinned, "size"_a, py::kw_only(),
        "dtype"_a = DType::kF32, ReleaseGil(),
        "Uninitialized host memory that is page-locked where a device can pin it: the source "
        "and target of asynchronous copies (non_blocking=True).");

  // *_like: the input's sizes, dtype and device unless given.
  auto like = [](const Tensor& t, std::optional<DType> dtype, std::optional<Device> device) {
    return TensorOptions(dtype.value_or(t.dtype()), device.value_or(t.device()));
  };
  m.def("empty_like", [like](const Tensor& t, std::optional<DType> dtype,
                             std::optional<Device> device) {
    return tessera::empty(t.sizes(), like(t, dtype, device));
  }, "input"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), ReleaseGil());
  m.def("zeros_like", [like](const Tensor& t, std::optional<DType> dtype,
                             std::optional<Device> device) {
    return tessera::zeros(t.sizes(), like(t, dtype, device));
  }, "input"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), ReleaseGil());
  m.def("ones_like", [like](const Tensor& t, std::optional<DType> dtype,
                            std::optional<Device> device) {
    return tessera::ones(t.sizes(), like(t, dtype, device));
  }, "input"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(), ReleaseGil());
  m.def("full_like", [like](const Tensor& t, Scalar value, std::optional<DType> dtype,
                            std::optional<Device> device) {
    return tessera::full(t.sizes(), value, like(t, dtype, device));
  }, "input"_a, "fill_value"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     ReleaseGil());

  m.def("arange", [](Scalar start, std::optional<Scalar> end, Scalar step,
                     std::optional<DType> dtype, std::optional<Device> device) {
    if (!end) return tessera::arange(start, options(dtype, device));
    return tessera::arange(start, *end, step, options(dtype, device));
  }, "start"_a, "end"_a = py::none(), "step"_a = 1, py::kw_only(), "dtype"_a = py::none(),
     "device"_a = py::none(), ReleaseGil(),
     "[start, end) by step; arange(n) is [0, n). Without dtype: int64 if all are integers, "
     "float32 otherwise.");
  m.def("linspace", [](Scalar start, Scalar end, int64_t steps, std::optional<DType> dtype,
                       std::optional<Device> device) {
    return tessera::linspace(start, end, steps, options(dtype, device));
  }, "start"_a, "end"_a, "steps"_a, py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     ReleaseGil());
  m.def("eye", [](int64_t n, std::optional<int64_t> cols, std::optional<DType> dtype,
                  std::optional<Device> device) {
    return tessera::eye(n, cols.value_or(n), options(dtype, device));
  }, "n"_a, "m"_a = py::none(), py::kw_only(), "dtype"_a = py::none(), "device"_a = py::none(),
     ReleaseGil());

  // -- Random.
  auto def_random = [&](const char* name, auto make, const char* doc) {
    m.def(name, [make, name](const py::args& size, Generator* generator,
                             std::optional<DType> dtype, const py::object& device) {
      Shape s = shape_from_args(size, name);
      TensorOptions o = options(dtype, device_arg(device));
      py::gil_scoped_release release;
      return make(s, o, generator);
    }, py::kw_only(), "generator"_a = py::none(), "dtype"_a = py::none(), "device"_a = py::none(),
       doc);
  };
  def_random("rand", [](const Shape& s, TensorOptions o, Generator* g) {
    return tessera::rand(s, o, g);
  }, "Uniform in [0, 1).");
  def_random("randn", [](const Shape& s, TensorOptions o, Generator* g) {
    return tessera::randn(s, o, g);
  }, "Standard normal.");
  m.def("randint", [](int64_t low, std::optional<int64_t> high, const Shape& size,
                      Generator* generator, std::optional<DType> dtype,
                      std::optional<Device> device) {
    if (!high) return tessera::randint(low, size, options(dtype, device), generator);
    return tessera::randint(low, *high, size, options(dtype, device), generator);
  }, "low"_a, "high"_a, "size"_a, py::kw_only(), "generator"_a = py::none(),
     "dtype"_a = py::none(), "device"_a = py::none(), ReleaseGil(),
     "Integers uniform in [low, high); default dtype int64.");
  m.def("randint", [](int64_t high, const Shape& size, Generator* generator,
                      std::optional<DType> dtype, std::optional<Device> device) {
    return tessera::randint(high, size, options(dtype, device), generator);
  }, "high"_a, "size"_a, py::kw_only(), "generator"_a = py::none(), "dtype"_a = py::none(),
     "device"_a = py::none(), ReleaseGil());
  m.def("bernoulli", [](const Tensor& p, Generator* generator) {
    return tessera::bernoulli(p, generator);
  }, "input"_a, py::kw_only(), "generator"_a = py::none(), ReleaseGil(),
     "1 with probability input[i], else 0; input's dtype.");
  m.def("bernoulli", [](const Tensor& t, double p, Generator* generator) {
    return tessera::bernoulli(t, p, generator);
  }, "input"_a, "p"_a, py::kw_only(), "generator"_a = py::none(), ReleaseGil());

  TensorClass cls = tensor_class(m);
  cls.def("uniform_", [](Tensor& t, double from, double to, Generator* g) -> Tensor& {
    return tessera::uniform_(t, from, to, g);
  }, "from_"_a = 0.0, "to"_a = 1.0, py::kw_only(), "generator"_a = py::none(), ReleaseGil());
  cls.def("normal_", [](Tensor& t, double mean, double std, Generator* g) -> Tensor& {
    return tessera::normal_(t, mean, std, g);
  }, "mean"_a = 0.0, "std"_a = 1.0, py::kw_only(), "generator"_a = py::none(), ReleaseGil());
  cls.def("bernoulli_", [](Tensor& t, double p, Generator* g) -> Tensor& {
    return tessera::bernoulli_(t, p, g);
  }, "p"_a = 0.5, py::kw_only(), "generator"_a = py::none(), ReleaseGil());
}

}  // namespace tessera_py
