#include "bridge/csrc/distributed_bindings.h"

#include <torch/csrc/utils/pybind.h>

#include "bridge/csrc/host_copy_backend.h"

namespace py = pybind11;

namespace torch_tessera {

namespace {

// A reference to a backend that Python holds, as a c10d owner.
c10::intrusive_ptr<c10d::Backend> own(c10d::Backend& backend) {
  return c10::intrusive_ptr<c10d::Backend>::reclaim_copy(&backend);
}

}  // namespace

// The backends cross into Python as torch's own c10d Backend type (its
// pybind registration, which the bridge shares): HostCopyBackend has no
// Python class of its own, it needs none.
void bind_distributed(py::module_& m) {
  m.def(
      "_host_copy_backend",
      [](c10d::Backend& host) -> c10::intrusive_ptr<c10d::Backend> {
        return c10::make_intrusive<HostCopyBackend>(own(host));
      },
      py::arg("host"), "A c10d Backend for tessera tensors that runs `host`'s collectives on host copies.");
  m.def(
      "_host_copy_backend_host",
      [](c10d::Backend& backend) -> std::optional<c10::intrusive_ptr<c10d::Backend>> {
        if (auto* host_copy = dynamic_cast<HostCopyBackend*>(&backend)) return host_copy->host();
        return std::nullopt;
      },
      py::arg("backend"), "The host backend of a backend _host_copy_backend made; None for any other.");
  m.def(
      "_host_copy_backend_share_host",
      [](c10d::Backend& backend, c10d::Backend& host) {
        auto* host_copy = dynamic_cast<HostCopyBackend*>(&backend);
        TORCH_CHECK(host_copy != nullptr, "_host_copy_backend_share_host: ", backend.getBackendName(),
                    " is not a tessera host-copy backend");
        host_copy->share_host(own(host));
      },
      py::arg("backend"), py::arg("host"), "HostCopyBackend::share_host.");
}

}  // namespace torch_tessera
