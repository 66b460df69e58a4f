// tessera.Tensor: attributes, conversions (item, tolist, to, cpu), views
// and the Python protocol methods that are not ops. The op families add
// their functions and methods in their own files.
#include <optional>
#include <string>
#include <vector>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/shape_args.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::Device;
using tessera::DType;
using tessera::Shape;
using tessera::Tensor;

// Nested lists of sizes from a flat row-major vector.
template <typename T>
py::object nest(const std::vector<T>& flat, const Shape& sizes, size_t dim, size_t& pos) {
  if (dim == sizes.size()) return py::cast(flat[pos++]);
  py::list out(sizes[dim]);
  for (int64_t i = 0; i < sizes[dim]; ++i) out[i] = nest(flat, sizes, dim + 1, pos);
  return out;
}

py::object tolist(const Tensor& t) {
  size_t pos = 0;
  if (t.dtype() == DType::kBool) {
    std::vector<bool> v;
    {
      py::gil_scoped_release release;
      v = t.to_vector<bool>();
    }
    return nest(v, t.sizes(), 0, pos);
  }
  if (tessera::is_floating(t.dtype())) {
    std::vector<double> v;
    {
      py::gil_scoped_release release;
      v = t.to_vector<double>();
    }
    return nest(v, t.sizes(), 0, pos);
  }
  std::vector<int64_t> v;
  {
    py::gil_scoped_release release;
    v = t.to_vector<int64_t>();
  }
  return nest(v, t.sizes(), 0, pos);
}

tessera::Scalar item_of(const Tensor& t, const char* what) {
  TESSERA_CHECK(t.numel() == 1, ValueError, what, ": only a one-element tensor converts, got ",
                tessera::describe(t));
  return t.item();
}

// to(..., copy=True) always returns a new tensor.
Tensor converted(const Tensor& t, Device device, DType dtype, bool non_blocking, bool copy) {
  Tensor r = t.to(device, dtype, non_blocking);
  if (copy && r.is_same(t)) r = t.clone();
  return r;
}

// self itself when make() (run without the GIL) gives back the same
// handle, else the new tensor.
template <typename Make>
py::object self_or_new(const py::object& self, Make&& make) {
  const Tensor& t = self.cast<const Tensor&>();
  Tensor r;
  {
    py::gil_scoped_release release;
    r = make();
  }
  return r.is_same(t) ? self : py::cast(std::move(r));
}

Tensor flatten_dims(const Tensor& t, int64_t start, int64_t end) {
  if (t.dim() == 0) return t.reshape({1});
  start = tessera::wrap_dim(start, t.dim(), "flatten");
  end = tessera::wrap_dim(end, t.dim(), "flatten");
  TESSERA_CHECK(start <= end, ValueError, "flatten: start_dim ", start, " comes after end_dim ",
                end);
  Shape sizes(t.sizes().begin(), t.sizes().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= t.size(d);
  sizes.push_back(merged);
  sizes.insert(sizes.end(), t.sizes().begin() + end + 1, t.sizes().end());
  return t.reshape(sizes);
}

// Tensor's tp_new. pybind11's default would give an object whose C++
// Tensor was never constructed (its repr read garbage sizes); tensors come
// from factories and ops, which the extension makes without tp_new.
PyObject* refuse_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyErr_Format(PyExc_TypeError,
               "%s cannot be created with __new__: use tessera.tensor(data), "
               "tessera.empty(shape) or another factory",
               type->tp_name);
  return nullptr;
}

}  // namespace

TensorClass tensor_class(py::module_& m) {
  return py::reinterpret_borrow<TensorClass>(m.attr("Tensor"));
}

void register_tensor_class(py::module_& m) {
  TensorClass cls(m, "Tensor", py::dynamic_attr(), py::buffer_protocol(),
                  "A view of typed elements in the memory of one device: sizes, strides "
                  "(in elements), a storage offset and a dtype. Views share memory.");
  reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_new = refuse_new;

  // -- Attributes.
  cls.def_property_readonly("shape", [](const Tensor& t) { return t.sizes(); });
  cls.def_property_readonly("strides", [](const Tensor& t) { return t.strides(); });
  cls.def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); });
  cls.def_property_readonly("device", &Tensor::device);
  cls.def_property_readonly("ndim", &Tensor::dim);
  cls.def_property_readonly("itemsize", &Tensor::itemsize);
  cls.def_property_readonly("nbytes", &Tensor::nbytes);
  cls.def_property_readonly("T", [](const Tensor& t) {
    Shape dims;
    for (int64_t d = t.dim() - 1; d >= 0; --d) dims.push_back(d);
    return t.permute(dims);
  }, "The tensor with its dims reversed.");
  cls.def_property_readonly("mT", [](const Tensor& t) { return t.transpose(-2, -1); },
                            "The last two dims swapped.");
  cls.def("dim", &Tensor::dim);
  cls.def("numel", &Tensor::numel);
  cls.def("element_size", &Tensor::itemsize);
  cls.def("storage_offset", &Tensor::storage_offset);
  cls.def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); });
  cls.def("is_contiguous", &Tensor::is_contiguous);
  cls.def("is_pinned", &Tensor::is_pinned);
  cls.def("size", [](const Tensor& t) { return t.sizes(); });
  cls.def("size", &Tensor::size, "dim"_a);
  cls.def("stride", [](const Tensor& t) { return t.strides(); });
  cls.def("stride", &Tensor::stride, "dim"_a);
  cls.def("is_floating_point", [](const Tensor& t) { return tessera::is_floating(t.dtype()); });

  // -- Values.
  cls.def("item", [](const Tensor& t) {
    py::gil_scoped_release release;
    return item_of(t, "item");
  }, "The value of a one-element tensor as a Python number.");
  cls.def("tolist", &tolist, "The values as (nested) Python lists; a number for a 0-d tensor.");
  cls.def("__repr__", [](const Tensor& t) {
    py::gil_scoped_release release;
    return t.to_string();
  });
  cls.def("__len__", [](const Tensor& t) {
    if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
    return t.size(0);
  });
  // The views along dim 0, as PyTorch's. Without it Python would iterate
  // through __getitem__, and a 0-d tensor would iterate as empty instead of
  // raising.
  cls.def("__iter__", [](const Tensor& t) {
    if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
    py::list rows;
    for (int64_t i = 0; i < t.size(0); ++i) rows.append(py::cast(t.select(0, i)));
    return py::iter(rows);
  });
  cls.def("__bool__", [](const Tensor& t) {
    py::gil_scoped_release release;
    return item_of(t, "bool(tensor)").to<bool>();
  });
  cls.def("__float__", [](const Tensor& t) {
    py::gil_scoped_release release;
    return item_of(t, "float(tensor)").to<double>();
  });
  cls.def("__int__", [](const Tensor& t) {
    py::gil_scoped_release release;
    return item_of(t, "int(tensor)").to<int64_t>();
  });
  cls.def("__index__", [](const Tensor& t) {
    TESSERA_CHECK(!tessera::is_floating(t.dtype()) && t.dtype() != DType::kBool, TypeError,
                  "only integer tensors of a single element can be converted to an index, got ",
                  tessera::describe(t));
    py::gil_scoped_release release;
    return item_of(t, "index").to<int64_t>();
  });

  // -- Conversions.
  // to() returns self itself when nothing changes (as PyTorch's does), so
  // these take and give Python objects and release the GIL by hand.
  cls.def("to", [](py::object self, DType dtype, bool non_blocking, bool copy) {
    const Tensor& t = self.cast<const Tensor&>();
    return self_or_new(self, [&] { return converted(t, t.device(), dtype, non_blocking, copy); });
  }, "dtype"_a, "non_blocking"_a = false, "copy"_a = false);
  cls.def("to", [](py::object self, Device device, std::optional<DType> dtype, bool non_blocking,
                   bool copy) {
    const Tensor& t = self.cast<const Tensor&>();
    return self_or_new(self, [&] {
      return converted(t, device, dtype.value_or(t.dtype()), non_blocking, copy);
    });
  }, "device"_a, "dtype"_a = py::none(), "non_blocking"_a = false, "copy"_a = false);
  cls.def("to", [](py::object self, const Tensor& other, bool non_blocking, bool copy) {
    const Tensor& t = self.cast<const Tensor&>();
    return self_or_new(self, [&] {
      return converted(t, other.device(), other.dtype(), non_blocking, copy);
    });
  }, "other"_a, "non_blocking"_a = false, "copy"_a = false,
     "Converts to a device and/or dtype (or other's); returns self when nothing changes "
     "unless copy=True.");
  cls.def("cpu", [](py::object self) {
    const Tensor& t = self.cast<const Tensor&>();
    return self_or_new(self, [&] { return t.to(tessera::host_device()); });
  }, "This tensor on the host device (self if already there).");
  cls.def("contiguous", [](py::object self) {
    const Tensor& t = self.cast<const Tensor&>();
    return self_or_new(self, [&] { return t.contiguous(); });
  }, "Self when contiguous, else a contiguous copy.");
  cls.def("clone", &Tensor::clone, ReleaseGil());
  cls.def("pin_memory", &Tensor::pin_memory, ReleaseGil());
  cls.def("copy_", &Tensor::copy_, "src"_a, "non_blocking"_a = false, ReleaseGil(),
          "Copies src into self (broadcast, cast, across devices); returns self.");
  cls.def("fill_", &Tensor::fill_, "value"_a, ReleaseGil());
  cls.def("zero_", &Tensor::zero_, ReleaseGil());
  cls.def("float", [](const Tensor& t) { return t.to(DType::kF32); }, ReleaseGil());
  cls.def("double", [](const Tensor& t) { return t.to(DType::kF64); }, ReleaseGil());
  cls.def("half", [](const Tensor& t) { return t.to(DType::kF16); }, ReleaseGil());
  cls.def("bfloat16", [](const Tensor& t) { return t.to(DType::kBF16); }, ReleaseGil());
  cls.def("int", [](const Tensor& t) { return t.to(DType::kI32); }, ReleaseGil());
  cls.def("long", [](const Tensor& t) { return t.to(DType::kI64); }, ReleaseGil());
  cls.def("bool", [](const Tensor& t) { return t.to(DType::kBool); }, ReleaseGil());

  // -- Views (no copy; reshape copies only when a view is impossible).
  cls.def("view", [](const Tensor& t, const py::args& shape) {
    Shape s = shape_from_args(shape, "view");
    py::gil_scoped_release release;
    return t.view(s);
  });
  cls.def("reshape", [](const Tensor& t, const py::args& shape) {
    Shape s = shape_from_args(shape, "reshape");
    py::gil_scoped_release release;
    return t.reshape(s);
  });
  cls.def("permute", [](const Tensor& t, const py::args& dims) {
    Shape s = shape_from_args(dims, "permute");
    py::gil_scoped_release release;
    return t.permute(s);
  });
  cls.def("expand", [](const Tensor& t, const py::args& sizes) {
    Shape s = shape_from_args(sizes, "expand");
    py::gil_scoped_release release;
    return t.expand(s);
  });
  cls.def("expand_as", [](const Tensor& t, const Tensor& other) { return t.expand(other.sizes()); },
          "other"_a, ReleaseGil());
  cls.def("view_as", [](const Tensor& t, const Tensor& other) { return t.view(other.sizes()); },
          "other"_a, ReleaseGil());
  cls.def("reshape_as",
          [](const Tensor& t, const Tensor& other) { return t.reshape(other.sizes()); }, "other"_a,
          ReleaseGil());
  cls.def("transpose", &Tensor::transpose, "dim0"_a, "dim1"_a, ReleaseGil());
  cls.def("swapaxes", &Tensor::transpose, "axis0"_a, "axis1"_a, ReleaseGil());
  cls.def("t", &Tensor::t, ReleaseGil());
  cls.def("squeeze", [](const Tensor& t, std::optional<int64_t> dim) {
    return dim ? t.squeeze(*dim) : t.squeeze();
  }, "dim"_a = py::none(), ReleaseGil());
  cls.def("unsqueeze", &Tensor::unsqueeze, "dim"_a, ReleaseGil());
  cls.def("flatten", &flatten_dims, "start_dim"_a = 0, "end_dim"_a = -1, ReleaseGil());
  cls.def("narrow", &Tensor::narrow, "dim"_a, "start"_a, "length"_a, ReleaseGil());
  cls.def("select", &Tensor::select, "dim"_a, "index"_a, ReleaseGil());
  cls.def("as_strided", &Tensor::as_strided, "size"_a, "stride"_a,
          "storage_offset"_a = py::none(), ReleaseGil());

  m.def("flatten", &flatten_dims, "input"_a, "start_dim"_a = 0, "end_dim"_a = -1, ReleaseGil());
  m.def("transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
        "input"_a, "dim0"_a, "dim1"_a, ReleaseGil());
  m.def("permute", [](const Tensor& t, const Shape& dims) { return t.permute(dims); }, "input"_a,
        "dims"_a, ReleaseGil());
  m.def("reshape", [](const Tensor& t, const Shape& shape) { return t.reshape(shape); }, "input"_a,
        "shape"_a, ReleaseGil());
  m.def("squeeze", [](const Tensor& t, std::optional<int64_t> dim) {
    return dim ? t.squeeze(*dim) : t.squeeze();
  }, "input"_a, "dim"_a = py::none(), ReleaseGil());
  m.def("unsqueeze", [](const Tensor& t, int64_t dim) { return t.unsqueeze(dim); }, "input"_a,
        "dim"_a, ReleaseGil());
  m.def("narrow", [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return t.narrow(d, s, l); },
        "input"_a, "dim"_a, "start"_a, "length"_a, ReleaseGil());
  m.def("select", [](const Tensor& t, int64_t d, int64_t i) { return t.select(d, i); }, "input"_a,
        "dim"_a, "index"_a, ReleaseGil());
  m.def("clone", [](const Tensor& t) { return t.clone(); }, "input"_a, ReleaseGil());
  m.def("as_strided", [](const Tensor& t, const Shape& size, const Shape& stride,
                         std::optional<int64_t> offset) { return t.as_strided(size, stride, offset); },
        "input"_a, "size"_a, "stride"_a, "storage_offset"_a = py::none(), ReleaseGil());
}

}  // namespace tessera_py
