// The SPIR-V of the device's compute shaders (devices/vulkan/shaders/*.comp),
// compiled by glslc at build time and embedded in the library by the
// genrule in shaders.bzl, so the device needs no files at run time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace tessera::vulkan {

// The words of the shader compiled from shaders/<name>.comp, or an empty
// span if there is none by that name.
std::span<const uint32_t> find_spirv(std::string_view name);

}  // namespace tessera::vulkan
