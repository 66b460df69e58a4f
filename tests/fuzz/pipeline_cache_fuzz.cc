// Fuzz target: the Vulkan pipeline-cache file reader on hostile files. The
// loader decides which bytes reach the driver (and some drivers crash on
// foreign data), so whatever it returns must be the payload of an intact
// envelope whose Vulkan header names this device, and a file it saves
// must load back unchanged.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "devices/vulkan/pipeline_cache_file.h"

namespace {

using tessera::vulkan::PipelineCacheFile;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "pipeline_cache_fuzz: %s\n", what);
  std::abort();
}

// A device as the loader sees it: lavapipe's IDs and a fixed UUID, so seed
// files can carry a matching header.
VkPhysicalDeviceProperties device_properties() {
  VkPhysicalDeviceProperties p{};
  p.vendorID = 0x10005;
  p.deviceID = 0;
  p.driverVersion = 1;
  for (int i = 0; i < VK_UUID_SIZE; ++i) p.pipelineCacheUUID[i] = static_cast<uint8_t>(i * 17);
  return p;
}

PipelineCacheFile& cache_file() {
  static PipelineCacheFile* file = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "tessera-fuzz-cache-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp failed");
    setenv("TESSERA_VULKAN_PIPELINE_CACHE", tmpl.c_str(), 1);
    return new PipelineCacheFile(device_properties());
  }();
  return *file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  PipelineCacheFile& file = cache_file();
  const std::vector<char> bytes(reinterpret_cast<const char*>(data),
                                reinterpret_cast<const char*>(data) + size);
  {
    std::ofstream out(file.path(), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const std::vector<char> loaded = file.load();
  if (!loaded.empty()) {
    // Only an intact envelope with this device's header may pass.
    if (PipelineCacheFile::unseal(bytes) != loaded) fail("loaded bytes are not the payload");
    if (!file.header_matches(loaded)) fail("loaded a payload for another device");
    if (PipelineCacheFile::seal(loaded) != bytes) fail("a loaded file does not re-seal to itself");
  }
  // Any prefix of a sealed file (a write cut off) must be refused.
  const std::vector<char> sealed = PipelineCacheFile::seal(bytes);
  const size_t cut = size == 0 ? 0 : data[0] % sealed.size();
  if (!PipelineCacheFile::unseal(std::vector<char>(sealed.begin(), sealed.begin() + cut)).empty()) {
    fail("accepted a cut-off file");
  }
  // Saving the input as a payload loads it back when its header matches.
  if (!file.save(bytes) && !bytes.empty()) fail("could not save");
  const std::vector<char> again = file.load();
  if (again != (file.header_matches(bytes) ? bytes : std::vector<char>())) {
    fail("a saved cache did not load back");
  }
  return 0;
}
