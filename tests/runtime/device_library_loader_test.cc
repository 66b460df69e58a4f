// load_device_libraries: a folder of libtessera_<name>.so files becomes
// devices; a file that fails to load is reported and the others still load;
// a library already in the process is not loaded (nor registered) twice.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/device/device_library_loader.h"
#include "runtime/device/device_registry.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

// The probe library Bazel built (env LOADER_PROBE, relative to the
// runfiles directory the test runs in).
fs::path probe_library() {
  const char* path = std::getenv("LOADER_PROBE");
  REQUIRE(path != nullptr);
  return fs::absolute(path);
}

fs::path make_folder() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / "device_libraries";
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

const DeviceLibraryLoad* find(const std::vector<DeviceLibraryLoad>& loads,
                              const std::string& name) {
  for (const auto& l : loads) {
    if (fs::path(l.path).filename() == name) return &l;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("device library loader: loads a folder's device libraries", "[loader]") {
  const fs::path dir = make_folder();
  fs::copy_file(probe_library(), dir / "libtessera_loader_probe.so");
  std::ofstream(dir / "libtessera_broken.so") << "not an ELF file";
  std::ofstream(dir / "libtessera.so") << "the runtime: never loaded as a device";
  std::ofstream(dir / "notes.txt") << "ignored";

  REQUIRE(DeviceRegistry::instance().find("loader_probe") == nullptr);
  const auto loads = load_device_libraries(dir.string());
  CHECK(loads.size() == 2);  // broken, loader_probe: libtessera.so and notes.txt are not candidates

  const DeviceLibraryLoad* probe = find(loads, "libtessera_loader_probe.so");
  REQUIRE(probe != nullptr);
  CHECK(probe->loaded);
  CHECK(probe->error.empty());
  DeviceInterface* iface = DeviceRegistry::instance().find("loader_probe");
  REQUIRE(iface != nullptr);
  CHECK(iface->device_count() == 1);

  const DeviceLibraryLoad* broken = find(loads, "libtessera_broken.so");
  REQUIRE(broken != nullptr);
  CHECK_FALSE(broken->loaded);
  CHECK_FALSE(broken->error.empty());

  CHECK(device_library_loads().size() == 2);  // every attempt is remembered

  // Loading the folder again registers nothing twice.
  const size_t types = DeviceRegistry::instance().types().size();
  const auto again = load_device_libraries(dir.string());
  const DeviceLibraryLoad* probe_again = find(again, "libtessera_loader_probe.so");
  REQUIRE(probe_again != nullptr);
  CHECK(probe_again->loaded);
  CHECK(DeviceRegistry::instance().types().size() == types);
}

TEST_CASE("device library loader: a missing folder loads nothing", "[loader]") {
  CHECK(load_device_libraries("/nonexistent/tessera/libs").empty());
}
