#include "runtime/core/environment.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace tessera {

long env_integer(const char* name, long fallback, long lo, long hi) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < lo || value > hi) {
    std::fprintf(stderr,
                 "tessera: ignoring %s='%s' (expected an integer from %ld to %ld); using %ld\n",
                 name, text, lo, hi, fallback);
    return fallback;
  }
  return value;
}

std::optional<bool> env_switch(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string_view value(text);
  return !(value == "0" || value == "false" || value == "off");
}

}  // namespace tessera
