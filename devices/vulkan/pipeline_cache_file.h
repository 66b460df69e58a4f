// Keeps a device's VkPipelineCache on disk between runs, so compiled
// shaders are not compiled again on the next start (pipeline creation is
// the slowest part of a first run, seconds on some drivers).
//
// One file per physical device and driver, named by vendor and device ID,
// driver version and pipelineCacheUUID, under TESSERA_VULKAN_PIPELINE_CACHE
// (default $XDG_CACHE_HOME/tessera/vulkan, else ~/.cache/tessera/vulkan;
// "off" disables it). A file whose header does not match this device is
// ignored, not passed to the driver (some drivers crash on foreign data).
// The driver's bytes are sealed in a small envelope (a magic, their length
// and a checksum), so a file cut off or damaged on disk is ignored too and
// rebuilt, never handed to the driver. Writes go to a temporary file
// renamed into place, so a reader never sees half a file; failing to write
// is silent, a cache is optional.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace tessera::vulkan {

class PipelineCacheFile {
 public:
  explicit PipelineCacheFile(const VkPhysicalDeviceProperties& properties);

  // The file's bytes if it exists and its header matches this device,
  // else empty.
  std::vector<char> load();
  // Replaces the file with `data`; false when it could not be written.
  bool save(const std::vector<char>& data);

  const std::string& path() const { return path_; }  // empty when disabled
  size_t loaded_bytes() const { return loaded_bytes_; }

  // The file's layout: "TSVKPC01", the payload's length and its FNV-1a
  // hash (64-bit little-endian each), then the payload (the driver's data).
  static std::vector<char> seal(const std::vector<char>& payload);
  // The payload of a sealed file, or empty for anything else: too short,
  // another magic, a length that disagrees with the file's, a hash that
  // does not match.
  static std::vector<char> unseal(const std::vector<char>& file);
  // Whether payload starts with a pipeline cache header (Vulkan's
  // VkPipelineCacheHeaderVersionOne) from this device.
  bool header_matches(const std::vector<char>& payload) const;

 private:
  VkPhysicalDeviceProperties properties_;
  std::string path_;
  size_t loaded_bytes_ = 0;
};

}  // namespace tessera::vulkan
