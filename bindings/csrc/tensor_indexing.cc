// Tensor.__getitem__ and __setitem__, with NumPy's rules and PyTorch's
// placement of the advanced dims:
//  - ints, slices (positive steps), None, Ellipsis and Python bools index
//    basically: the result is a view of self (select, slice, unsqueeze),
//    so writing through it changes self;
//  - integer tensors (and lists or arrays of ints) index advancedly, and
//    bool tensors (and lists of bools) are masks, standing for the indices
//    of their true positions. The index tensors broadcast together to a
//    shape B, which takes the place of the indexed dims when they are
//    adjacent and comes first otherwise. As in PyTorch (unlike NumPy) an int
//    beside index tensors stays basic: x[:, i, :, 0] keeps B in dim 1.
//    The result is a new tensor;
//  - a list in a key is always an index array, as in NumPy (x[[0, 1]] picks
//    two rows), never a tuple of indices.
// The key is parsed with the GIL held; the ops run with it released.
#include "bindings/csrc/tensor_indexing.h"

#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::Scalar;
using tessera::Shape;
using tessera::Tensor;
using tessera::TensorOptions;

// One entry of a key.
struct IndexEntry {
  enum class Kind { kInteger, kSlice, kNewAxis, kEllipsis, kBool, kTensor };
  Kind kind = Kind::kNewAxis;
  int64_t integer = 0;       // kInteger
  bool boolean = false;      // kBool
  int64_t start = 0;         // kSlice, in Python's meaning (negative from the end)
  int64_t stop = INT64_MAX;  // kSlice
  int64_t step = 1;          // kSlice
  Tensor tensor;             // kTensor: integer indices or a bool mask
};

std::string type_name(py::handle o) {
  return py::str(py::type::of(o).attr("__name__")).cast<std::string>();
}

bool is_mask_dtype(DType t) { return t == DType::kBool || t == DType::kU8; }

// A nested sequence or an array as a host tensor, through tessera.tensor()
// (of dtype when given). In a key, bools make a mask and ints indices; an
// empty list indexes nothing, as NumPy's empty intp array.
Tensor tensor_from_sequence(py::handle obj, std::optional<DType> dtype = std::nullopt) {
  py::object module = py::module_::import(
      py::str(py::type::of<Tensor>().attr("__module__")).cast<std::string>().c_str());
  Tensor t = module.attr("tensor")(obj, "dtype"_a = dtype ? py::cast(*dtype) : py::none())
                 .cast<Tensor>();
  if (!dtype && t.numel() == 0 && !tessera::is_integral(t.dtype())) {
    py::gil_scoped_release release;
    t = t.to(DType::kI64);
  }
  return t;
}

// The value of o's __index__ (NumPy's integer scalars and 0-d integer
// arrays), if it has one that works.
std::optional<int64_t> index_value(PyObject* o) {
  if (!PyIndex_Check(o)) return std::nullopt;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!index) {
    PyErr_Clear();  // e.g. a 1-d NumPy array: an index array, not an int
    return std::nullopt;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw py::index_error("index " + py::str(index).cast<std::string>() + " is out of bounds");
  }
  return v;
}

py::index_error invalid_index(py::handle item) {
  return py::index_error(
      "only integers, slices (`:`), ellipsis (`...`), None, bools and integer or bool tensors "
      "(or sequences of them) are valid indices, got " + type_name(item));
}

IndexEntry parse_entry(py::handle item) {
  PyObject* o = item.ptr();
  IndexEntry e;
  if (py::isinstance<Tensor>(item)) {
    e.kind = IndexEntry::Kind::kTensor;
    e.tensor = item.cast<Tensor>();
  } else if (o == Py_None) {
    e.kind = IndexEntry::Kind::kNewAxis;
  } else if (o == Py_Ellipsis) {
    e.kind = IndexEntry::Kind::kEllipsis;
  } else if (PyBool_Check(o)) {
    e.kind = IndexEntry::Kind::kBool;
    e.boolean = o == Py_True;
  } else if (PySlice_Check(o)) {
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(o, &start, &stop, &step) != 0) throw py::error_already_set();
    if (step < 0) throw py::value_error("step must be greater than zero");
    e.kind = IndexEntry::Kind::kSlice;
    e.start = start;
    e.stop = stop;
    e.step = step;
  } else if (std::optional<int64_t> integer = index_value(o)) {
    e.kind = IndexEntry::Kind::kInteger;
    e.integer = *integer;
  } else if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
    e.kind = IndexEntry::Kind::kTensor;
    try {
      e.tensor = tensor_from_sequence(item);
    } catch (const py::error_already_set& error) {
      if (!error.matches(PyExc_TypeError) && !error.matches(PyExc_ValueError)) throw;
      throw invalid_index(item);  // a sequence of something other than numbers
    }
  } else {
    throw invalid_index(item);
  }
  return e;
}

// A tuple is a key of several entries; anything else is one entry.
std::vector<IndexEntry> parse_key(py::handle key) {
  std::vector<IndexEntry> entries;
  if (PyTuple_Check(key.ptr())) {
    for (py::handle item : py::reinterpret_borrow<py::tuple>(key)) {
      entries.push_back(parse_entry(item));
    }
  } else {
    entries.push_back(parse_entry(key));
  }
  return entries;
}

// The dims of self an entry indexes.
int64_t dims_consumed(const IndexEntry& e) {
  switch (e.kind) {
    case IndexEntry::Kind::kInteger:
    case IndexEntry::Kind::kSlice: return 1;
    case IndexEntry::Kind::kTensor: return is_mask_dtype(e.tensor.dtype()) ? e.tensor.dim() : 1;
    default: return 0;
  }
}

// An index tensor of the advanced part, int64 on the view's device, for
// dim `dim` of the view.
struct AdvancedIndex {
  int64_t dim;
  Tensor index;
};

// A key applied: the basic entries as a view of self, the advanced ones
// left to apply to it (dims ascending).
struct IndexPlan {
  Tensor view;
  std::vector<AdvancedIndex> advanced;
};

IndexPlan plan_index(const char* op, const Tensor& self, const std::vector<IndexEntry>& entries) {
  int64_t consumed = 0, ellipses = 0;
  for (const IndexEntry& e : entries) {
    consumed += dims_consumed(e);
    ellipses += e.kind == IndexEntry::Kind::kEllipsis;
  }
  TESSERA_CHECK(ellipses <= 1, IndexError, "an index can only have a single ellipsis ('...')");
  TESSERA_CHECK(consumed <= self.dim(), IndexError, "too many indices for tensor of dimension ",
                self.dim(), " (got ", consumed, ")");
  IndexPlan plan{self, {}};
  Tensor& v = plan.view;
  int64_t d = 0;    // the next dim of the view
  int64_t src = 0;  // the next dim of self, for messages
  for (const IndexEntry& e : entries) {
    switch (e.kind) {
      case IndexEntry::Kind::kInteger: {
        const int64_t n = v.size(d);
        TESSERA_CHECK(e.integer >= -n && e.integer < n, IndexError, "index ", e.integer,
                      " is out of bounds for dimension ", src, " with size ", n);
        v = v.select(d, e.integer);
        ++src;
        break;
      }
      case IndexEntry::Kind::kSlice:
        v = v.slice(d, e.start, e.stop, e.step);
        ++d, ++src;
        break;
      case IndexEntry::Kind::kNewAxis:
        v = v.unsqueeze(d++);
        break;
      case IndexEntry::Kind::kBool:
        // x[True] adds a dim of size 1, x[False] one of size 0.
        v = v.unsqueeze(d);
        if (!e.boolean) v = v.slice(d, 0, 0);
        ++d;
        break;
      case IndexEntry::Kind::kEllipsis: {
        const int64_t skipped = self.dim() - consumed;
        d += skipped;
        src += skipped;
        break;
      }
      case IndexEntry::Kind::kTensor: {
        const Tensor& t = e.tensor;
        if (is_mask_dtype(t.dtype())) {
          for (int64_t k = 0; k < t.dim(); ++k) {
            TESSERA_CHECK(t.size(k) == v.size(d + k), IndexError, "The shape of the mask ",
                          tessera::shape_to_string(t.sizes()), " at index ", k,
                          " does not match the shape of the indexed tensor ",
                          tessera::shape_to_string(self.sizes()), " at index ", src + k);
          }
          if (t.dim() == 0) {  // a 0-d mask acts as a Python bool
            v = v.unsqueeze(d);
            if (!t.item<bool>()) v = v.slice(d, 0, 0);
            ++d;
            break;
          }
          const Tensor positions = tessera::nonzero(t.to(v.device()));  // [count, t.dim()]
          for (int64_t k = 0; k < t.dim(); ++k) {
            plan.advanced.push_back({d + k, positions.select(1, k)});
          }
          d += t.dim();
          src += t.dim();
          break;
        }
        TESSERA_CHECK(t.dtype() == DType::kI64 || t.dtype() == DType::kI32, IndexError,
                      "tensors used as indices must be long, int, byte or bool tensors, got ",
                      tessera::describe(t));
        Tensor index = t.to(v.device(), DType::kI64);
        tessera::indexing::check_index_bounds(op, index, v.size(d), src, /*allow_negative=*/true);
        plan.advanced.push_back({d, std::move(index)});
        ++d, ++src;
        break;
      }
    }
  }
  return plan;
}

// Where the advanced part's result dims go.
struct AdvancedLayout {
  Shape broadcast;    // B: the index tensors' broadcast shape
  int64_t first = 0;  // B's position in the result (0 unless the indexed dims are adjacent)
  Shape indexed;      // the sizes of the indexed dims of the view
  Shape permutation;  // of the view: the indexed dims first, then the rest in order
  Shape rest;         // the sizes of the rest
};

AdvancedLayout layout_of(const IndexPlan& plan) {
  AdvancedLayout l;
  std::vector<bool> indexed(plan.view.dim(), false);
  bool adjacent = true;
  for (size_t j = 0; j < plan.advanced.size(); ++j) {
    const AdvancedIndex& a = plan.advanced[j];
    adjacent = adjacent && a.dim == plan.advanced[0].dim + static_cast<int64_t>(j);
    indexed[a.dim] = true;
    l.indexed.push_back(plan.view.size(a.dim));
    l.permutation.push_back(a.dim);
    try {
      l.broadcast = tessera::broadcast_shapes(l.broadcast, a.index.sizes(), "index");
    } catch (const tessera::ValueError&) {
      std::string shapes;
      for (const AdvancedIndex& b : plan.advanced) {
        shapes += (shapes.empty() ? "" : ", ") + tessera::shape_to_string(b.index.sizes());
      }
      throw tessera::IndexError(
          "shape mismatch: indexing tensors could not be broadcast together with shapes " +
          shapes);
    }
  }
  for (int64_t d = 0; d < plan.view.dim(); ++d) {
    if (indexed[d]) continue;
    l.permutation.push_back(d);
    l.rest.push_back(plan.view.size(d));
  }
  l.first = adjacent ? plan.advanced[0].dim : 0;
  return l;
}

// The result's sizes: rest with B inserted at `first`.
Shape result_sizes(const AdvancedLayout& l) {
  Shape sizes(l.rest.begin(), l.rest.begin() + l.first);
  sizes.insert(sizes.end(), l.broadcast.begin(), l.broadcast.end());
  sizes.insert(sizes.end(), l.rest.begin() + l.first, l.rest.end());
  return sizes;
}

// view[indices...]: the indexed dims, moved to the front and merged into
// one, are gathered with index_select at the row-major linear index of
// each broadcast index tuple.
Tensor advanced_get(const IndexPlan& plan) {
  const AdvancedLayout l = layout_of(plan);
  Tensor linear;
  int64_t rows = 1;
  for (size_t j = 0; j < plan.advanced.size(); ++j) {
    // The bounds were checked, so remainder only wraps negative indices.
    Tensor wrapped = tessera::remainder(plan.advanced[j].index, Scalar(l.indexed[j]));
    linear = j == 0 ? wrapped : tessera::add(tessera::mul(linear, Scalar(l.indexed[j])), wrapped);
    rows *= l.indexed[j];
  }
  linear = linear.expand(l.broadcast).reshape({-1});
  Shape merged{rows};
  merged.insert(merged.end(), l.rest.begin(), l.rest.end());
  const Tensor source = plan.view.permute(l.permutation).reshape(merged);
  Shape gathered_sizes = l.broadcast;
  gathered_sizes.insert(gathered_sizes.end(), l.rest.begin(), l.rest.end());
  Tensor gathered = tessera::index_select(source, 0, linear).view(gathered_sizes);
  if (l.first == 0) return gathered;
  // B back in place of the (adjacent) indexed dims.
  const int64_t nb = static_cast<int64_t>(l.broadcast.size());
  Shape order;
  for (int64_t d = 0; d < l.first; ++d) order.push_back(nb + d);
  for (int64_t d = 0; d < nb; ++d) order.push_back(d);
  for (int64_t d = nb + l.first; d < gathered.dim(); ++d) order.push_back(d);
  return gathered.permute(order).contiguous();
}

// values without the leading size-1 dims beyond `ndim` (x[0] = t[None]
// works, as in NumPy and PyTorch).
Tensor strip_leading_ones(const Tensor& values, int64_t ndim) {
  Tensor v = values;
  while (v.dim() > ndim && v.size(0) == 1) v = v.squeeze(0);
  return v;
}

// view[indices...] = values (values: the view's dtype and device).
void advanced_put(const IndexPlan& plan, const Tensor& values, bool accumulate) {
  const AdvancedLayout l = layout_of(plan);
  const Shape result = result_sizes(l);
  const Tensor v = strip_leading_ones(values, static_cast<int64_t>(result.size()));
  Shape common;
  try {
    common = tessera::broadcast_shapes(v.sizes(), result, "index_put");
  } catch (const tessera::ValueError&) {
  }
  TESSERA_CHECK(common == result, ValueError, "shape mismatch: value tensor of shape ",
                tessera::shape_to_string(values.sizes()),
                " cannot be broadcast to indexing result of shape ",
                tessera::shape_to_string(result));
  Tensor expanded = v.expand(result);
  if (l.first != 0) {  // B first, as index_put_ takes it
    const int64_t nb = static_cast<int64_t>(l.broadcast.size());
    Shape order;
    for (int64_t d = 0; d < nb; ++d) order.push_back(l.first + d);
    for (int64_t d = 0; d < l.first; ++d) order.push_back(d);
    for (int64_t d = l.first + nb; d < expanded.dim(); ++d) order.push_back(d);
    expanded = expanded.permute(order);
  }
  std::vector<Tensor> indices;
  for (const AdvancedIndex& a : plan.advanced) indices.push_back(a.index);
  Tensor target = plan.view.permute(l.permutation);  // a view of self
  tessera::index_put_(target, indices, expanded, accumulate);
}

// The value of x[key] = value: a tensor (cast to self's dtype and moved to
// its device where needed), a number, or a sequence or array made a tensor
// of self's dtype.
struct AssignedValue {
  std::optional<Tensor> tensor;
  Scalar number;
};

AssignedValue parse_value(py::handle value, DType dtype) {
  AssignedValue v;
  if (py::isinstance<Tensor>(value)) {
    v.tensor = value.cast<Tensor>();
  } else if (PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) ||
             PyFloat_Check(value.ptr())) {
    v.number = value.cast<Scalar>();
  } else if (PySequence_Check(value.ptr()) && !PyUnicode_Check(value.ptr())) {
    v.tensor = tensor_from_sequence(value, dtype);
  } else {
    try {
      v.number = value.cast<Scalar>();  // NumPy scalars and other numbers
    } catch (const py::cast_error&) {
      throw py::type_error("can't assign a " + type_name(value) +
                           " to a tensor; expected a tensor, a number or a sequence of numbers");
    }
  }
  return v;
}

void put_plan(IndexPlan& plan, const Tensor& self, const AssignedValue& value, bool accumulate) {
  Tensor& view = plan.view;
  if (plan.advanced.empty()) {
    if (!value.tensor) {
      if (accumulate) {
        view.add_(tessera::full({}, value.number, TensorOptions(view.dtype(), view.device())));
      } else {
        view.fill_(value.number);
      }
      return;
    }
    Tensor src = strip_leading_ones(*value.tensor, view.dim());
    // x[1:] = x[:-1] reads the old values, as NumPy does.
    if (src.device() == self.device() && src.storage() == self.storage()) src = src.clone();
    if (accumulate) {
      view.add_(src);
    } else {
      view.copy_(src);
    }
    return;
  }
  const Tensor values =
      value.tensor ? value.tensor->to(view.device(), view.dtype())
                   : tessera::full({}, value.number, TensorOptions(view.dtype(), view.device()));
  advanced_put(plan, values, accumulate);
}

Tensor get_item(const Tensor& self, const std::vector<IndexEntry>& entries) {
  const IndexPlan plan = plan_index("__getitem__", self, entries);
  return plan.advanced.empty() ? plan.view : advanced_get(plan);
}

}  // namespace

Tensor& index_put_with_slices(Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                              const Tensor& values, bool accumulate) {
  TESSERA_CHECK(values.dtype() == self.dtype(), TypeError,
                "index_put_: Index put requires the source and destination dtypes match, got ",
                tessera::describe(self), " for the destination and ", tessera::describe(values),
                " for the source");
  std::vector<IndexEntry> entries;
  for (const std::optional<Tensor>& index : indices) {
    IndexEntry e;
    if (index) {
      e.kind = IndexEntry::Kind::kTensor;
      e.tensor = *index;
    } else {
      e.kind = IndexEntry::Kind::kSlice;
    }
    entries.push_back(std::move(e));
  }
  IndexPlan plan = plan_index("index_put_", self, entries);
  AssignedValue value;
  value.tensor = values;
  put_plan(plan, self, value, accumulate);
  return self;
}

void register_tensor_indexing(py::module_& m) {
  TensorClass cls = tensor_class(m);
  cls.def("__getitem__", [](const Tensor& self, const py::object& key) {
    const std::vector<IndexEntry> entries = parse_key(key);
    py::gil_scoped_release release;
    return get_item(self, entries);
  }, "key"_a,
     "self[key]: ints, slices, None, ... and Python bools give a view; integer and bool "
     "tensors (or lists) index advancedly and give a new tensor.");
  cls.def("__setitem__", [](Tensor& self, const py::object& key, const py::object& value) {
    const std::vector<IndexEntry> entries = parse_key(key);
    const AssignedValue assigned = parse_value(value, self.dtype());
    py::gil_scoped_release release;
    IndexPlan plan = plan_index("__setitem__", self, entries);
    put_plan(plan, self, assigned, /*accumulate=*/false);
  }, "key"_a, "value"_a,
     "self[key] = value: value (a tensor, a number or a sequence) is broadcast to self[key] "
     "and cast to self's dtype.");
}

}  // namespace tessera_py
