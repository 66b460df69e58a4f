#include "runtime/device/device_listing.h"

#include <mutex>
#include <set>
#include <string>

namespace tessera {
namespace {

struct Unlisted {
  std::mutex mutex;
  std::set<std::string, std::less<>> types;
};

Unlisted& unlisted() {
  // Never destroyed: device libraries register from static initializers,
  // which may run before or after this file's, in any library.
  static auto* u = new Unlisted();
  return *u;
}

}  // namespace

void set_listed_by_default(std::string_view type_name, bool listed) {
  Unlisted& u = unlisted();
  std::lock_guard<std::mutex> lock(u.mutex);
  if (listed) {
    const auto it = u.types.find(type_name);
    if (it != u.types.end()) u.types.erase(it);
  } else {
    u.types.emplace(type_name);
  }
}

bool listed_by_default(std::string_view type_name) {
  Unlisted& u = unlisted();
  std::lock_guard<std::mutex> lock(u.mutex);
  return u.types.find(type_name) == u.types.end();
}

}  // namespace tessera
