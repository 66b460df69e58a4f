// Device libraries loaded at run time.
//
// A program that links its devices (the C++ tests, the demo) needs none of
// this: a linked libtessera_<device>.so registers its device when the
// program starts. Python packages (the PyTorch bridge, the tessera module)
// instead ship the device libraries beside their extension and load
// whichever are there. So a package built without some device (a CPU-only
// machine's quick first build skips CUDA) still works, and a vendor's
// libtessera_<name>.so dropped into that folder becomes a device without
// rebuilding anything.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct DeviceLibraryLoad {
  std::string path;
  bool loaded = false;      // loaded now, or already in the process
  std::string error;        // why not, when loaded is false
};

// Loads every libtessera_<name>.so in `dir` (not libtessera.so, the
// runtime) that the process has not loaded yet, in name order; each
// registers its device as it loads. A library that fails to load is
// reported on stderr and in the result, and the others still load.
std::vector<DeviceLibraryLoad> load_device_libraries(const std::string& dir);

// Every load attempted so far in this process.
std::vector<DeviceLibraryLoad> device_library_loads();

}  // namespace tessera
