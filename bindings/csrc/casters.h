// pybind11 conversions for the runtime's small value types, so that op
// bindings take them as ordinary arguments:
//  - tessera::Scalar from a Python bool, int or float (or anything with
//    __index__ / __float__, such as NumPy scalars), keeping its kind, which
//    decides type promotion as in PyTorch;
//  - tessera::Shape (sizes, strides, dims) from a sequence of ints, or a
//    single int where a one-entry list is meant (`sum(x, dim=1)`).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"

namespace pybind11::detail {

template <>
struct type_caster<tessera::Scalar> {
  PYBIND11_TYPE_CASTER(tessera::Scalar, const_name("Union[bool, int, float]"));

  bool load(handle src, bool convert) {
    PyObject* o = src.ptr();
    if (PyBool_Check(o)) {
      value = tessera::Scalar(o == Py_True);
      return true;
    }
    if (PyLong_Check(o)) return load_int(o);
    if (PyFloat_Check(o)) {
      value = tessera::Scalar(PyFloat_AS_DOUBLE(o));
      return true;
    }
    if (!convert) return false;
    // NumPy scalars and other number types: integers through __index__,
    // the rest through __float__. Sequences and tensors are not numbers.
    if (PyIndex_Check(o)) {
      object index = reinterpret_steal<object>(PyNumber_Index(o));
      if (!index) {
        PyErr_Clear();
        return false;
      }
      return load_int(index.ptr());
    }
    if (Py_TYPE(o)->tp_as_number != nullptr && Py_TYPE(o)->tp_as_number->nb_float != nullptr &&
        !PySequence_Check(o)) {
      double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value = tessera::Scalar(d);
      return true;
    }
    return false;
  }

  static handle cast(const tessera::Scalar& s, return_value_policy, handle) {
    if (s.is_bool()) return PyBool_FromLong(s.to<bool>() ? 1 : 0);
    if (s.is_integral()) return PyLong_FromLongLong(s.to<int64_t>());
    return PyFloat_FromDouble(s.to<double>());
  }

 private:
  bool load_int(PyObject* o) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
      throw value_error("an integer argument does not fit in int64 (values from " +
                        std::to_string(std::numeric_limits<int64_t>::min()) + " to " +
                        std::to_string(std::numeric_limits<int64_t>::max()) + ")");
    }
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    value = tessera::Scalar(static_cast<int64_t>(v));
    return true;
  }
};

template <>
struct type_caster<tessera::Shape> {
  // One int is a shape too (padding=1, reshape(x, 6)): the name says so for
  // the type stubs, where bindings/generate_stubs.py writes a returned
  // Shape as the tuple that cast() makes.
  PYBIND11_TYPE_CASTER(tessera::Shape, const_name("Union[int, Sequence[int]]"));

  bool load(handle src, bool) {
    PyObject* o = src.ptr();
    if (PyLong_Check(o) && !PyBool_Check(o)) {
      const long long v = PyLong_AsLongLong(o);
      if (v == -1 && PyErr_Occurred()) {
        // Past int64: not a shape. The OverflowError must not stay set
        // while pybind11 tries the other overloads.
        PyErr_Clear();
        return false;
      }
      value = tessera::Shape{v};
      return true;
    }
    if (!PySequence_Check(o) || PyUnicode_Check(o) || PyBytes_Check(o)) return false;
    // A tensor is a sequence too, but never a shape.
    if (PyObject_HasAttrString(o, "__dlpack__")) return false;
    sequence seq = reinterpret_borrow<sequence>(src);
    tessera::Shape out;
    out.reserve(seq.size());
    // object, not handle: the item may be a new object (range(10**6, ...))
    // that only the iterator's temporary would own.
    for (object item : seq) {
      PyObject* i = item.ptr();
      if (PyBool_Check(i) || !PyIndex_Check(i)) return false;
      object index = reinterpret_steal<object>(PyNumber_Index(i));
      if (!index) {
        PyErr_Clear();
        return false;
      }
      long long v = PyLong_AsLongLong(index.ptr());
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      out.push_back(v);
    }
    value = std::move(out);
    return true;
  }

  static handle cast(const tessera::Shape& s, return_value_policy, handle) {
    tuple t(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      t[i] = reinterpret_steal<object>(PyLong_FromLongLong(s[i]));
    }
    return t.release();
  }
};

}  // namespace pybind11::detail
