// Zero-copy exchange: the buffer protocol (NumPy's np.asarray(t), and
// tensors from any buffer exporter) and DLPack both ways (__dlpack__,
// __dlpack_device__, from_dlpack). Memory that comes from another library
// is borrowed: the runtime Storage over it holds the exporter (a buffer
// view or a DLPack deleter) and releases it, with the GIL, when the last
// tensor over it goes.
#include "bindings/csrc/interop.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bindings/csrc/dlpack_abi.h"
#include "bindings/csrc/dlpack_layout.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/device/device_interface.h"
#include "runtime/device/device_registry.h"
#include "runtime/stream/stream.h"

namespace tessera_py {

namespace {

using tessera::Device;
using tessera::DType;
using tessera::Shape;
using tessera::Tensor;

bool host_accessible(const Device& d) {
  return tessera::device_interface(d).properties(d.index).host_accessible;
}

// Runs `release` with the GIL held when the interpreter is still alive.
template <typename Fn>
void with_gil_if_alive(Fn&& release) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  release();
}

// A tensor over borrowed memory [data, data + nbytes) on device; on_free
// runs when the last tensor over it is gone.
Tensor borrow(Device device, void* data, size_t nbytes, DType dtype, Shape sizes, Shape strides,
              std::function<void()> on_free) {
  auto* storage = new tessera::Storage(device, data, nbytes, /*allocator=*/nullptr);
  tessera::StoragePtr ptr(storage, [on_free = std::move(on_free)](tessera::Storage* s) {
    delete s;
    on_free();
  });
  return Tensor::from_storage(std::move(ptr), dtype, std::move(sizes), std::move(strides));
}

// -- The buffer protocol.

std::optional<DType> dtype_of_format(std::string format, size_t itemsize) {
  if (!format.empty() && (format[0] == '<' || format[0] == '=' || format[0] == '@')) {
    format = format.substr(1);
  }
  if (format.size() != 1) return std::nullopt;
  switch (format[0]) {
    case '?': return DType::kBool;
    case 'B': return DType::kU8;
    case 'b': return DType::kI8;
    case 'h': return DType::kI16;
    case 'i': return DType::kI32;
    case 'l':
    case 'q': return itemsize == 8 ? std::optional(DType::kI64) : std::optional(DType::kI32);
    case 'e': return DType::kF16;
    case 'f': return DType::kF32;
    case 'd': return DType::kF64;
    default: return std::nullopt;
  }
}

const char* format_of(DType t) {
  switch (t) {
    case DType::kBool: return "?";
    case DType::kU8: return "B";
    case DType::kI8: return "b";
    case DType::kI16: return "h";
    case DType::kI32: return "i";
    case DType::kI64: return "q";
    case DType::kF16: return "e";
    case DType::kF32: return "f";
    case DType::kF64: return "d";
    case DType::kBF16: return nullptr;
  }
  return nullptr;
}

// What to do with memory the exporter marks read-only: tensors are always
// writable, so sharing it would let a write change an immutable object
// (bytes, a read-only array). from_numpy/from_dlpack promise sharing and
// refuse; as_tensor/tensor() copy instead.
enum class ReadOnly { kRefuse, kCopy };

Tensor shared_or_copied(Tensor shared, bool read_only, ReadOnly policy, const char* op) {
  if (!read_only) return shared;
  if (policy == ReadOnly::kRefuse) {
    throw py::value_error(std::string(op) + ": the array is read-only, and a tensor sharing it "
                          "would be writable; pass a writable copy (for NumPy, a.copy()), or "
                          "use tessera.tensor() to copy");
  }
  py::gil_scoped_release release;
  return shared.clone();  // the borrowed view goes, releasing the exporter
}

Tensor tensor_from_buffer(py::handle obj, ReadOnly policy) {
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_RECORDS_RO) != 0) throw py::error_already_set();
  Py_buffer* raw = view.release();
  auto release = [raw] {
    with_gil_if_alive([raw] { PyBuffer_Release(raw); });
    delete raw;
  };
  std::optional<DType> dtype =
      dtype_of_format(raw->format ? raw->format : "B", static_cast<size_t>(raw->itemsize));
  if (!dtype) {
    std::string format = raw->format ? raw->format : "B";
    release();
    throw py::type_error("from_numpy/as_tensor: the buffer's element format '" + format +
                         "' has no tessera dtype (bool, uint8, int8/16/32/64, float16/32/64)");
  }
  Shape sizes, strides;
  for (int i = 0; i < raw->ndim; ++i) {
    sizes.push_back(raw->shape[i]);
    const Py_ssize_t s = raw->strides ? raw->strides[i] : 0;
    if (s < 0 || s % raw->itemsize != 0) {
      release();
      throw py::value_error("from_numpy/as_tensor: strides of " + std::to_string(s) +
                            " bytes are not supported (negative, or not a multiple of the "
                            "element size); copy the array first (numpy.ascontiguousarray)");
    }
    strides.push_back(s / raw->itemsize);
  }
  size_t nbytes = 0;
  try {
    if (raw->strides == nullptr) strides = tessera::contiguous_strides(sizes);
    // Bytes from the first to one past the last element, overflow-checked.
    nbytes = tessera::checked_storage_bytes(sizes, strides, 0,
                                            static_cast<size_t>(raw->itemsize), "from_numpy");
  } catch (...) {
    release();
    throw;
  }
  const bool read_only = raw->readonly != 0;
  return shared_or_copied(
      borrow(tessera::host_device(), raw->buf, nbytes, *dtype, sizes, strides, release),
      read_only, policy, "from_numpy");
}

// -- DLPack.

dlpack::DataType dlpack_dtype_of(DType t) {
  const uint8_t bits = static_cast<uint8_t>(tessera::itemsize(t) * 8);
  switch (t) {
    case DType::kBool: return {dlpack::kBool, 8, 1};
    case DType::kU8: return {dlpack::kUInt, 8, 1};
    case DType::kF16:
    case DType::kF32:
    case DType::kF64: return {dlpack::kFloat, bits, 1};
    case DType::kBF16: return {dlpack::kBfloat, 16, 1};
    default: return {dlpack::kInt, bits, 1};
  }
}

// The DLPack device of a tessera device, or a TypeError for devices whose
// memory DLPack cannot describe to other libraries (Vulkan buffer device
// addresses, the template device's emulated memory).
// The CUDA ordinal of tessera's cuda:`index` (DLPack's device_id), which
// TESSERA_CUDA_DEVICES may make differ from the index.
int cuda_ordinal(tessera::DeviceInterface& cuda, int index) {
  const int ordinal = cuda.properties(index).native_index;
  return ordinal >= 0 ? ordinal : index;
}

dlpack::Device dlpack_device_of(const Device& d) {
  const std::string_view type = d.type.name();
  if (type == "cpu") return {dlpack::kCPU, 0};
  if (type == "cuda") return {dlpack::kCUDA, cuda_ordinal(tessera::device_interface(d), d.index)};
  throw py::type_error("DLPack: tensors on " + d.to_string() +
                       " cannot be exported (no DLPack device type describes this device's "
                       "memory); copy to the host first with .cpu()");
}

Device tessera_device_of(const dlpack::Device& d) {
  switch (d.device_type) {
    case dlpack::kCPU:
    case dlpack::kCUDAHost: return tessera::host_device();
    case dlpack::kCUDA:
      if (tessera::DeviceInterface* cuda = tessera::DeviceRegistry::instance().find("cuda")) {
        // The tessera device whose CUDA ordinal the array names.
        const int count = cuda->device_count();
        for (int i = 0; i < count; ++i) {
          if (cuda_ordinal(*cuda, i) == d.device_id) {
            return Device::parse("cuda:" + std::to_string(i));
          }
        }
        throw py::buffer_error("from_dlpack: the array is on CUDA device " +
                               std::to_string(d.device_id) + ", which is not among tessera's " +
                               std::to_string(count) + " CUDA devices (TESSERA_CUDA_DEVICES)");
      }
      throw py::type_error("from_dlpack: the array is on CUDA device " +
                           std::to_string(d.device_id) + ", and this process has no tessera "
                           "CUDA device");
  }
  throw py::type_error("from_dlpack: DLPack device type " + std::to_string(d.device_type) +
                       " is not supported (supported: CPU, CUDA, CUDA host memory)");
}

// What an exported capsule owns: the tensor (so its memory stays) and the
// shape and stride arrays that the DLTensor points into.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

// device: dlpack_device_of(t.device()), found by the caller before
// anything is allocated (it throws for devices DLPack cannot describe, and
// a context made before that would keep the tensor alive for good).
template <typename Managed>
void fill_export(Managed* managed, const Tensor& t, const dlpack::Device& device) {
  auto* ctx = new ExportContext{t, {t.sizes().begin(), t.sizes().end()},
                                {t.strides().begin(), t.strides().end()}};
  managed->manager_ctx = ctx;
  managed->deleter = [](Managed* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
  dlpack::Tensor& dl = managed->dl_tensor;
  // The view's first element, with byte_offset 0, as PyTorch and CuPy
  // export: PyTorch's from_dlpack (2.11 and older) reads `data` and
  // ignores byte_offset, so a storage start plus an offset would hand it
  // the wrong elements.
  dl.data = t.data_ptr();
  dl.device = device;
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dlpack_dtype_of(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
}

// copied: t is a copy made for this export (__dlpack__(copy=True)), which
// the consumer then owns; a 1.0 capsule says so.
py::capsule export_dlpack(const Tensor& t, bool versioned, bool copied) {
  const dlpack::Device device = dlpack_device_of(t.device());
  if (versioned) {
    auto* managed = new dlpack::ManagedTensorVersioned{};
    managed->version = {1, 0};
    managed->flags = copied ? dlpack::kFlagIsCopied : 0;
    fill_export(managed, t, device);
    return py::capsule(managed, "dltensor_versioned", [](PyObject* capsule) {
      // Never consumed (a consumer renames it to used_dltensor_versioned).
      if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        auto* m = static_cast<dlpack::ManagedTensorVersioned*>(
            PyCapsule_GetPointer(capsule, "dltensor_versioned"));
        if (m != nullptr && m->deleter != nullptr) m->deleter(m);
      }
    });
  }
  auto* managed = new dlpack::ManagedTensor{};
  fill_export(managed, t, device);
  return py::capsule(managed, "dltensor", [](PyObject* capsule) {
    if (PyCapsule_IsValid(capsule, "dltensor")) {
      auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
      if (m != nullptr && m->deleter != nullptr) m->deleter(m);
    }
  });
}

// DLPack 1.0 capsules say when the producer's memory is read-only.
uint64_t flags_of(const dlpack::ManagedTensorVersioned* m) { return m->flags; }
uint64_t flags_of(const dlpack::ManagedTensor*) { return 0; }

template <typename Managed>
Tensor import_managed(Managed* managed, const char* used_name, PyObject* capsule,
                      ReadOnly policy) {
  const dlpack::Tensor& dl = managed->dl_tensor;
  const DLPackLayout layout = checked_dlpack_layout(dl, "from_dlpack");
  const Device device = tessera_device_of(dl.device);
  // Consumed: the capsule no longer owns the tensor; the Storage does.
  const bool read_only = (flags_of(managed) & dlpack::kFlagReadOnly) != 0;
  if (read_only && policy == ReadOnly::kRefuse) {
    shared_or_copied(Tensor(), true, policy, "from_dlpack");  // throws, capsule unconsumed
  }
  PyCapsule_SetName(capsule, used_name);
  return shared_or_copied(borrow(device, layout.data, layout.nbytes, layout.dtype, layout.sizes,
                                 layout.strides, [managed, device] {
    if (managed->deleter == nullptr) return;
    // Work queued on tessera's streams may still read or write the memory:
    // the producer (PyTorch's caching allocator, CuPy's pool) would hand it
    // to a new array the moment its deleter runs.
    try {
      tessera::synchronize(device);
    } catch (const std::exception&) {
      // A failed device has nothing left to run; the memory can go back.
    }
    with_gil_if_alive([managed] { managed->deleter(managed); });
  }), read_only, policy, "from_dlpack");
}

// The DLPack stream argument for a producer whose data the current stream
// of `device` will read: None on the host; on CUDA the raw handle of the
// current stream (1, the legacy default stream, for the default stream).
py::object consumer_stream(const Device& device) {
  if (device.type.name() != "cuda") return py::none();
  void* native = tessera::current_stream(device).native();
  return native == nullptr ? py::int_(1) : py::int_(reinterpret_cast<uintptr_t>(native));
}

Tensor from_dlpack(py::handle obj, ReadOnly policy) {
  if (PyCapsule_CheckExact(obj.ptr())) {
    PyObject* c = obj.ptr();
    if (PyCapsule_IsValid(c, "dltensor_versioned")) {
      auto* m = static_cast<dlpack::ManagedTensorVersioned*>(
          PyCapsule_GetPointer(c, "dltensor_versioned"));
      // A newer major version may lay the struct out differently: read
      // nothing past the version (the capsule stays unconsumed).
      if (m->version.major > 1) {
        throw py::buffer_error("from_dlpack: the capsule is DLPack " +
                               std::to_string(m->version.major) + "." +
                               std::to_string(m->version.minor) +
                               ", and this module reads DLPack 1.x");
      }
      return import_managed(m, "used_dltensor_versioned", c, policy);
    }
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      return import_managed(m, "used_dltensor", c, policy);
    }
    throw py::value_error("from_dlpack: the capsule is not an unconsumed DLPack tensor");
  }
  if (!py::hasattr(obj, "__dlpack__")) {
    throw py::type_error("from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                         "got " + py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
  }
  py::object stream = py::none();
  if (py::hasattr(obj, "__dlpack_device__")) {
    py::tuple dev = obj.attr("__dlpack_device__")();
    dlpack::Device d{dev[0].cast<int32_t>(), dev[1].cast<int32_t>()};
    if (d.device_type == dlpack::kCUDA) stream = consumer_stream(tessera_device_of(d));
  }
  py::object capsule;
  try {
    capsule = obj.attr("__dlpack__")("stream"_a = stream, "max_version"_a = py::make_tuple(1, 0));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = obj.attr("__dlpack__")("stream"_a = stream);  // a producer before DLPack 1.0
  }
  return from_dlpack(capsule, policy);
}

// What a buffer view of a tensor owns: the shape and byte strides it points
// into. The exporting Python object (view->obj) keeps the memory alive.
struct BufferLayout {
  std::vector<Py_ssize_t> shape, strides;
};

// Whether t's elements lie densely in row-major (C) or column-major
// (Fortran) order; size-1 dims may have any stride.
bool dense_in_order(const Tensor& t, bool column_major) {
  if (t.numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t i = 0; i < t.dim(); ++i) {
    const int64_t d = column_major ? i : t.dim() - 1 - i;
    if (t.size(d) != 1 && t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

// A consumer that asks for a contiguous layout (PyBUF_C/F/ANY_CONTIGUOUS)
// relies on it and reads the strides as such, so the request must fail
// when the tensor is laid out otherwise (PEP 3118).
bool meets_contiguity_request(const Tensor& t, int flags) {
  const bool c = dense_in_order(t, false), f = dense_in_order(t, true);
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) return false;
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f) return false;
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) return false;
  return true;
}

int get_tensor_buffer(PyObject* self, Py_buffer* view, int flags) {
  try {
    const Tensor& t = py::cast<const Tensor&>(py::handle(self));
    const char* format = format_of(t.dtype());
    if (format == nullptr) {
      throw py::type_error("buffer protocol: " + tessera::describe(t) +
                           " has no buffer format (bfloat16); convert it with .float() first");
    }
    if (!host_accessible(t.device())) {
      throw py::type_error("buffer protocol: " + tessera::describe(t) + " is not in host-"
                           "addressable memory; copy it to the host with .cpu() first");
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t.is_contiguous()) {
      throw py::buffer_error("buffer protocol: " + tessera::describe(t) +
                             " is not contiguous and the consumer did not ask for strides");
    }
    if (!meets_contiguity_request(t, flags)) {
      throw py::buffer_error("buffer protocol: " + tessera::describe(t) +
                             " is not laid out in the contiguous order the consumer asked "
                             "for; call .contiguous() first");
    }
    {
      // Work queued on the device's stream must be done before the host reads.
      py::gil_scoped_release release;
      tessera::current_stream(t.device()).synchronize();
    }
    auto* layout = new BufferLayout;
    for (int64_t d = 0; d < t.dim(); ++d) {
      layout->shape.push_back(t.size(d));
      layout->strides.push_back(t.stride(d) * static_cast<Py_ssize_t>(t.itemsize()));
    }
    view->buf = t.data_ptr();
    view->obj = py::handle(self).inc_ref().ptr();
    view->len = static_cast<Py_ssize_t>(t.nbytes());
    view->itemsize = static_cast<Py_ssize_t>(t.itemsize());
    view->readonly = 0;
    view->ndim = static_cast<int>(t.dim());
    view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
    view->shape = (flags & PyBUF_ND) ? layout->shape.data() : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? layout->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = layout;
    return 0;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_BufferError, e.what());
  }
  view->obj = nullptr;
  return -1;
}

void release_tensor_buffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferLayout*>(view->internal);
  view->internal = nullptr;
}

}  // namespace

std::optional<Tensor> tensor_from_array_object(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::hasattr(obj, "__dlpack__")) return from_dlpack(obj, ReadOnly::kCopy);
  if (PyObject_CheckBuffer(obj.ptr())) return tensor_from_buffer(obj, ReadOnly::kCopy);
  return std::nullopt;
}

void register_interop(py::module_& m) {
  TensorClass cls = tensor_class(m);
  // The buffer protocol is installed by hand rather than with def_buffer:
  // pybind11 2.10 cannot report an error from a def_buffer callback (an
  // exception there ends the process), and a device tensor must raise.
  auto* heap_type = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
  heap_type->as_buffer.bf_getbuffer = &get_tensor_buffer;
  heap_type->as_buffer.bf_releasebuffer = &release_tensor_buffer;
  // Returned as py::object: pybind11 2.10 names py::capsule "capsule" in
  // signatures, a type no stub can import (bindings/generate_stubs.py).
  cls.def("__dlpack__", [](const Tensor& t, py::object stream, std::optional<py::tuple> max_version,
                           py::object dl_device, std::optional<bool> copy) -> py::object {
    if (!dl_device.is_none()) {
      py::tuple want = dl_device;
      dlpack::Device have = dlpack_device_of(t.device());
      if (want[0].cast<int32_t>() != have.device_type || want[1].cast<int32_t>() != have.device_id) {
        throw py::buffer_error("__dlpack__: exporting to another device is not supported; "
                               "move the tensor with .to() first");
      }
    }
    // The DLPack stream argument: None or an int. On CUDA, -1 asks for no
    // synchronization (the consumer takes care of it), and 0 is refused,
    // being ambiguous (the legacy default stream, the per-thread one, or
    // none). Any other value names the consumer's stream.
    if (!stream.is_none() && !py::isinstance<py::int_>(stream)) {
      throw py::type_error("__dlpack__: stream must be an int or None, got " +
                           py::str(py::type::of(stream).attr("__name__")).cast<std::string>());
    }
    const bool cuda = t.device().type.name() == "cuda";
    const int64_t stream_value = stream.is_none() ? 1 : stream.cast<int64_t>();
    if (cuda && !stream.is_none() && stream_value == 0) {
      throw py::value_error("__dlpack__: stream 0 is ambiguous for CUDA (DLPack disallows it): "
                            "pass 1 for the legacy default stream, 2 for the per-thread one, "
                            "or the stream's handle");
    }
    const bool want_copy = copy.value_or(false);
    Tensor exported;
    {
      // The consumer's stream reads the data: the producer's work must be
      // done first. Waiting for the tensor's stream is always correct.
      py::gil_scoped_release release;
      exported = want_copy ? t.clone() : t;
      if (!(cuda && stream_value == -1)) tessera::current_stream(t.device()).synchronize();
    }
    const bool versioned = max_version && max_version->size() >= 1 &&
                           (*max_version)[0].cast<int>() >= 1;
    return export_dlpack(exported, versioned, want_copy);
  }, py::kw_only(), "stream"_a = py::none(), "max_version"_a = py::none(),
     "dl_device"_a = py::none(), "copy"_a = py::none(),
     "Exports the tensor as a DLPack capsule sharing its memory (cpu and cuda devices).");
  cls.def("__dlpack_device__", [](const Tensor& t) {
    dlpack::Device d = dlpack_device_of(t.device());
    return py::make_tuple(d.device_type, d.device_id);
  });
  m.def("from_dlpack", [](py::handle obj) { return from_dlpack(obj, ReadOnly::kRefuse); },
        "ext_tensor"_a,
        "A tensor sharing the memory of an object that exports DLPack (NumPy, PyTorch, CuPy, "
        "JAX...) or of a DLPack capsule.");
  m.def("from_numpy", [](py::handle array) {
    if (!PyObject_CheckBuffer(array.ptr())) {
      throw py::type_error("from_numpy: expected a NumPy array (or a buffer exporter), got " +
                           py::str(py::type::of(array).attr("__name__")).cast<std::string>());
    }
    return tensor_from_buffer(array, ReadOnly::kRefuse);
  }, "ndarray"_a, "A host tensor sharing the array's memory: writes through either are seen "
                  "by the other; the array stays alive while the tensor does.");
}

}  // namespace tessera_py
