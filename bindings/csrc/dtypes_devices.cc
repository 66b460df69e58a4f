// tessera.dtype (tessera.float32, ...), tessera.device ("vulkan:0") and the
// list of devices with their properties.
#include <pybind11/operators.h>

#include <string>

#include "bindings/csrc/bindings.h"
#include "runtime/core/device.h"
#include "runtime/core/error.h"
#include "runtime/core/dtype.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_registry.h"

namespace tessera_py {

namespace {

using tessera::Device;
using tessera::DType;

py::dict properties_of(const Device& d) {
  tessera::DeviceProperties p = tessera::device_interface(d).properties(d.index);
  py::dict out;
  out["name"] = p.name;
  out["vendor"] = p.vendor;
  out["total_memory"] = p.total_memory;
  out["compute_units"] = p.compute_units;
  out["host_accessible"] = p.host_accessible;
  out["software"] = p.software;
  out["supports_float16"] = p.supports_f16;
  out["supports_float64"] = p.supports_f64;
  out["supports_int64"] = p.supports_i64;
  out["native_index"] = p.native_index;
  return out;
}

py::object* dtype_objects() {
  static py::object* objects = new py::object[tessera::kNumDTypes];  // never freed: module lifetime
  return objects;
}

}  // namespace

py::object dtype_object(tessera::DType t) { return dtype_objects()[static_cast<int>(t)]; }

void register_dtypes_devices(py::module_& m) {
  py::enum_<DType> dtype(m, "dtype", "The element type of a tensor (tessera.float32, ...).");
  const std::pair<const char*, DType> names[] = {
      {"bool", DType::kBool},       {"uint8", DType::kU8},     {"int8", DType::kI8},
      {"int16", DType::kI16},       {"int32", DType::kI32},    {"int64", DType::kI64},
      {"float16", DType::kF16},     {"bfloat16", DType::kBF16}, {"float32", DType::kF32},
      {"float64", DType::kF64},
  };
  for (const auto& [name, value] : names) dtype.value(name, value);
  // Replaced rather than added: def() would append an overload after
  // enum_'s own, which would keep answering.
  py::cpp_function dtype_text([](DType t) { return "tessera." + std::string(tessera::dtype_name(t)); },
                              py::is_method(dtype));
  dtype.attr("__repr__") = dtype_text;
  dtype.attr("__str__") = dtype_text;
  dtype.def_property_readonly("itemsize", [](DType t) { return tessera::itemsize(t); },
                              "Bytes per element.");
  dtype.def_property_readonly("is_floating_point", &tessera::is_floating);
  dtype.def_property_readonly("is_signed", &tessera::is_signed);
  dtype.def("__reduce__", [](DType t) {
    return py::make_tuple(py::module_::import("tessera").attr("_dtype_by_name"),
                          py::make_tuple(std::string(tessera::dtype_name(t))));
  });
  // One object per dtype, so that `t.dtype is tessera.float32` holds as in
  // PyTorch (dtype_object hands these out).
  for (const auto& [name, value] : names) {
    m.attr(name) = dtype.attr(name);
    dtype_objects()[static_cast<int>(value)] = dtype.attr(name);
  }
  // PyTorch's aliases.
  m.attr("half") = m.attr("float16");
  m.attr("float") = m.attr("float32");
  m.attr("double") = m.attr("float64");
  m.attr("short") = m.attr("int16");
  m.attr("int") = m.attr("int32");
  m.attr("long") = m.attr("int64");
  m.def("promote_types", &tessera::promote_types, "type1"_a, "type2"_a,
        "The dtype that both dtypes promote to, as torch.promote_types.");

  py::class_<Device> device(m, "device", "A device: a registered type and an index.");
  device.def(py::init([](const std::string& text) { return Device::parse(text); }), "device"_a,
             "From text such as 'cpu', 'vulkan:1' (the index defaults to 0).");
  device.def(py::init([](const std::string& type, int index) {
               return Device::parse(type + ":" + std::to_string(index));
             }),
             "type"_a, "index"_a);
  device.def(py::init([](const Device& d) { return d; }), "device"_a);
  device.def_property_readonly("type", [](const Device& d) { return std::string(d.type.name()); });
  device.def_property_readonly("index", [](const Device& d) { return d.index; });
  device.def("__str__", &Device::to_string);
  device.def("__repr__", [](const Device& d) {
    return "device(type='" + std::string(d.type.name()) + "', index=" + std::to_string(d.index) +
           ")";
  });
  device.def(py::self == py::self);
  // Text that names no device is unequal, as in PyTorch (`t.device == "cuda"`
  // on a machine without CUDA is False, not an error).
  device.def("__eq__", [](const Device& d, const std::string& text) {
    try {
      return d == Device::parse(text);
    } catch (const tessera::Error&) {
      return false;
    }
  });
  device.def("__hash__", [](const Device& d) { return std::hash<Device>()(d); });
  device.def("__reduce__", [](const Device& d) {
    return py::make_tuple(py::module_::import("tessera").attr("device"),
                          py::make_tuple(d.to_string()));
  });
  py::implicitly_convertible<py::str, Device>();

  m.def("devices", [] { return tessera::DeviceRegistry::instance().all_devices(); },
        "Every device of every loaded device library, in registration order.");
  m.def("device_count",
        [](const std::string& type) {
          tessera::DeviceInterface* iface = tessera::DeviceRegistry::instance().find(type);
          return iface == nullptr ? 0 : iface->device_count();
        },
        "type"_a, "How many devices of a type there are (0 for an unknown type).");
  m.def("get_device_properties", &properties_of, "device"_a,
        "A dict of the device's properties: name, vendor, total_memory, compute_units, "
        "host_accessible, software, supports_float16/float64/int64.");
  m.def("host_device", &tessera::host_device,
        "The device that holds host data and runs the CPU fallback (cpu:0).");
}

}  // namespace tessera_py
