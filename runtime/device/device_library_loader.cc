#include "runtime/device/device_library_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>

namespace tessera {
namespace {

std::mutex& loads_mutex() {
  static std::mutex m;
  return m;
}

std::vector<DeviceLibraryLoad>& loads() {
  static std::vector<DeviceLibraryLoad> v;
  return v;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_device_library(const std::string& name) {
  constexpr std::string_view kPrefix = "libtessera_", kSuffix = ".so";
  return name.size() > kPrefix.size() + kSuffix.size() && name.starts_with(kPrefix) &&
         name.ends_with(kSuffix);
}

// File names of the shared objects already in the process: a device
// library linked into the program (found through another folder) must not
// load a second time, or its device would register twice.
std::set<std::string> loaded_names() {
  std::set<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::set<std::string>*>(out)->insert(basename_of(info->dlpi_name));
        }
        return 0;
      },
      &names);
  return names;
}

}  // namespace

std::vector<DeviceLibraryLoad> load_device_libraries(const std::string& dir) {
  std::vector<std::string> candidates;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      if (is_device_library(entry->d_name)) candidates.emplace_back(entry->d_name);
    }
    closedir(d);
  }
  std::sort(candidates.begin(), candidates.end());
  std::lock_guard<std::mutex> lock(loads_mutex());
  const std::set<std::string> present = loaded_names();
  std::vector<DeviceLibraryLoad> result;
  for (const std::string& name : candidates) {
    DeviceLibraryLoad load;
    load.path = dir + "/" + name;
    if (present.count(name) != 0) {
      load.loaded = true;
    } else if (dlopen(load.path.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) {
      load.loaded = true;  // kept loaded for the life of the process
    } else {
      const char* why = dlerror();
      load.error = why != nullptr ? why : "unknown error";
      std::fprintf(stderr, "tessera: cannot load device library %s: %s\n", load.path.c_str(),
                   load.error.c_str());
    }
    result.push_back(load);
    loads().push_back(load);
  }
  return result;
}

std::vector<DeviceLibraryLoad> device_library_loads() {
  std::lock_guard<std::mutex> lock(loads_mutex());
  return loads();
}

}  // namespace tessera
