// Settings read from environment variables (TESSERA_NUM_THREADS,
// TESSERA_VULKAN_SHADER_COPIES, ...), parsed one way everywhere. A bad
// value is reported on stderr and ignored, never thrown: most settings are
// read while devices register, in static initializers or inside
// device_count(), which must not fail.
#pragma once

#include <optional>

namespace tessera {

// The integer in environment variable `name`, or `fallback` when it is
// unset or empty; a value that is not an integer in [lo, hi] is reported
// on stderr and gives `fallback` too.
long env_integer(const char* name, long fallback, long lo, long hi);

// An on/off switch: nullopt when `name` is unset or empty, false for "0",
// "false" or "off", true for any other value ("1", "true", "on", ...).
std::optional<bool> env_switch(const char* name);

}  // namespace tessera
