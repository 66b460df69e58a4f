#include "runtime/device/device_selection.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera {

std::vector<int> selected_devices(const char* env_var, int available) {
  std::vector<int> order;
  const char* env = std::getenv(env_var);
  if (env == nullptr || *env == '\0') {
    for (int i = 0; i < available; ++i) order.push_back(i);
    return order;
  }
  const std::string s(env);
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    const std::string token = s.substr(start, comma - start);
    char* end = nullptr;
    const long v = std::strtol(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || v < 0) {
      std::fprintf(stderr, "tessera: ignoring '%s' in %s='%s' (expected device indices such as 0,1)\n",
                   token.c_str(), env_var, env);
    } else if (v < available && std::find(order.begin(), order.end(), v) == order.end()) {
      order.push_back(static_cast<int>(v));
    }
    start = comma + 1;
  }
  return order;
}

}  // namespace tessera
