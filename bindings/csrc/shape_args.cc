#include "bindings/csrc/shape_args.h"

#include <string>

namespace tessera_py {

tessera::Shape shape_from_args(const py::args& args, const char* op) {
  py::detail::make_caster<tessera::Shape> caster;
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) {
    if (caster.load(args[0], true)) return py::detail::cast_op<tessera::Shape>(caster);
  } else if (caster.load(args, true)) {
    return py::detail::cast_op<tessera::Shape>(caster);
  }
  std::string got;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) got += ", ";
    got += py::str(py::type::of(args[i]).attr("__name__")).cast<std::string>();
  }
  throw py::type_error(std::string(op) + "(): expected sizes as ints or one sequence of ints, got (" +
                       got + ")");
}

}  // namespace tessera_py
