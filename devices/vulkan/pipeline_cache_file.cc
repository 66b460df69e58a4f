#include "devices/vulkan/pipeline_cache_file.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include "runtime/core/little_endian.h"

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

constexpr char kMagic[8] = {'T', 'S', 'V', 'K', 'P', 'C', '0', '1'};
constexpr size_t kEnvelopeBytes = sizeof(kMagic) + 2 * sizeof(uint64_t);

uint64_t fnv1a(const char* bytes, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::vector<char> PipelineCacheFile::seal(const std::vector<char>& payload) {
  std::vector<char> file(kEnvelopeBytes + payload.size());
  std::memcpy(file.data(), kMagic, sizeof(kMagic));
  store_le64(file.data() + sizeof(kMagic), payload.size());
  store_le64(file.data() + sizeof(kMagic) + 8, fnv1a(payload.data(), payload.size()));
  if (!payload.empty()) std::memcpy(file.data() + kEnvelopeBytes, payload.data(), payload.size());
  return file;
}

std::vector<char> PipelineCacheFile::unseal(const std::vector<char>& file) {
  if (file.size() < kEnvelopeBytes) return {};
  if (std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) return {};
  const uint64_t length = load_le64(file.data() + sizeof(kMagic));
  if (length != file.size() - kEnvelopeBytes) return {};  // cut off, or extended
  const char* payload = file.data() + kEnvelopeBytes;
  if (load_le64(file.data() + sizeof(kMagic) + 8) != fnv1a(payload, length)) return {};
  return std::vector<char>(payload, payload + length);
}

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
bool PipelineCacheFile::header_matches(const std::vector<char>& payload) const {
  // Read field by field: the header's version is an enum in Vulkan's
  // struct, and a file may hold any value there (loading one that is not
  // an enumerator into the struct is undefined behavior).
  constexpr size_t kHeaderBytes = sizeof(VkPipelineCacheHeaderVersionOne);
  if (payload.size() < kHeaderBytes) return false;
  auto u32_at = [&](size_t offset) {
    uint32_t v;
    std::memcpy(&v, payload.data() + offset, sizeof(v));
    return v;
  };
  const uint32_t header_size = u32_at(0), header_version = u32_at(4);
  const uint32_t vendor = u32_at(8), device = u32_at(12);
  return header_size >= kHeaderBytes && header_size <= payload.size() &&
         header_version == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         vendor == properties_.vendorID && device == properties_.deviceID &&
         std::memcmp(payload.data() + 16, properties_.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

std::vector<char> PipelineCacheFile::load() {
  if (path_.empty()) return {};
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  std::vector<char> payload = unseal(std::vector<char>((std::istreambuf_iterator<char>(in)),
                                                      std::istreambuf_iterator<char>()));
  if (!header_matches(payload)) return {};
  loaded_bytes_ = payload.size();
  return payload;
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
    const std::vector<char> file = seal(data);
    out.write(file.data(), static_cast<std::streamsize>(file.size()));
    out.close();  // a full disk may only show when the last bytes are flushed
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
