#include "bindings/csrc/results.h"

#include <stdexcept>
#include <string>

namespace tessera_py {

py::object return_type(py::module_& m, const char* name,
                       std::initializer_list<const char*> fields) {
  py::module_ types = py::hasattr(m, "return_types")
                          ? py::reinterpret_borrow<py::module_>(m.attr("return_types"))
                          : m.def_submodule("return_types",
                                            "The types of ops' multiple results: tuples with "
                                            "named fields, as torch.return_types.");
  py::tuple names(fields.size());
  size_t i = 0;
  for (const char* f : fields) names[i++] = py::str(f);
  if (py::hasattr(types, name)) {
    py::object existing = types.attr(name);
    if (!py::tuple(existing.attr("_fields")).equal(names)) {
      throw std::logic_error(std::string("return_types.") + name +
                             " is registered twice with different fields");
    }
    return existing;
  }
  py::object type = py::module_::import("collections")
                        .attr("namedtuple")(name, names, "module"_a = types.attr("__name__"));
  types.attr(name) = type;
  return type;
}

tessera::Tensor* out_tensor(const py::object& out, const char* op) {
  if (out.is_none()) return nullptr;
  if (!py::isinstance<tessera::Tensor>(out)) {
    throw py::type_error(std::string(op) + "(): out must be a tensor, got " +
                         py::str(py::type::of(out).attr("__name__")).cast<std::string>());
  }
  return out.cast<tessera::Tensor*>();
}

std::optional<OutPair> out_pair(const py::object& out, const char* op, const char* fields) {
  if (out.is_none()) return std::nullopt;
  const std::string expected =
      std::string(op) + "(): out must be a tuple of two tensors (" + fields + ")";
  if (!py::isinstance<py::tuple>(out) && !py::isinstance<py::list>(out)) {
    throw py::type_error(expected + ", got " +
                         py::str(py::type::of(out).attr("__name__")).cast<std::string>());
  }
  py::sequence seq = py::reinterpret_borrow<py::sequence>(out);
  if (seq.size() != 2) {
    throw py::type_error(expected + ", got " + std::to_string(seq.size()) + " entries");
  }
  OutPair pair;
  pair.objects = out;
  for (size_t i = 0; i < 2; ++i) {
    py::object item = seq[i];
    if (!py::isinstance<tessera::Tensor>(item)) {
      throw py::type_error(expected + ", got " +
                           py::str(py::type::of(item).attr("__name__")).cast<std::string>() +
                           " at position " + std::to_string(i));
    }
    (i == 0 ? pair.first : pair.second) = item.cast<tessera::Tensor*>();
  }
  return pair;
}

}  // namespace tessera_py
