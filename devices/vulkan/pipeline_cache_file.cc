#include "devices/vulkan/pipeline_cache_file.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace tessera::vulkan {
namespace {

std::string cache_directory() {
  if (const char* dir = std::getenv("TESSERA_VULKAN_PIPELINE_CACHE")) {
    if (std::string_view(dir) == "off") return "";
    if (*dir != '\0') return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/tessera/vulkan";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/tessera/vulkan";
  }
  return "";
}

std::string hex(const uint8_t* bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

}  // namespace

PipelineCacheFile::PipelineCacheFile(const VkPhysicalDeviceProperties& properties)
    : properties_(properties) {
  const std::string dir = cache_directory();
  if (dir.empty()) return;
  char name[64];
  std::snprintf(name, sizeof(name), "%04x-%04x-%08x-", properties.vendorID, properties.deviceID,
                properties.driverVersion);
  path_ = dir + "/" + name + hex(properties.pipelineCacheUUID, VK_UUID_SIZE) + ".bin";
}

// The header Vulkan defines for every pipeline cache
// (VkPipelineCacheHeaderVersionOne): length, version, vendor, device, UUID.
bool PipelineCacheFile::header_matches(const std::vector<char>& data) const {
  VkPipelineCacheHeaderVersionOne header;
  if (data.size() < sizeof(header)) return false;
  std::memcpy(&header, data.data(), sizeof(header));
  return header.headerSize >= sizeof(header) && header.headerSize <= data.size() &&
         header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         header.vendorID == properties_.vendorID && header.deviceID == properties_.deviceID &&
         std::memcmp(header.pipelineCacheUUID, properties_.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

std::vector<char> PipelineCacheFile::load() {
  if (path_.empty()) return {};
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!header_matches(data)) return {};
  loaded_bytes_ = data.size();
  return data;
}

bool PipelineCacheFile::save(const std::vector<char>& data) {
  if (path_.empty() || data.empty()) return false;
  std::error_code error;
  const std::filesystem::path target(path_);
  std::filesystem::create_directories(target.parent_path(), error);
  if (error) return false;
  // A name per process, so concurrent savers never share a temporary.
  const std::string temporary = path_ + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) {
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, target, error);
  if (!error) return true;
  std::filesystem::remove(temporary, error);
  return false;
}

}  // namespace tessera::vulkan
