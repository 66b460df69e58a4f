#include "devices/cpu/cpu_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace tessera::cpu {
namespace {

// A byte count from a cgroup v2 file ("max" or a number); nullopt if the
// file is absent or says "max".
std::optional<size_t> read_cgroup_bytes(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return static_cast<size_t>(std::stoull(word));
  } catch (...) {
    return std::nullopt;
  }
}

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

// MemAvailable from /proc/meminfo in bytes, if the kernel reports it.
std::optional<size_t> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      unsigned long long kb = 0;
      if (fields >> kb) return static_cast<size_t>(kb) * 1024;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

size_t total_host_memory() {
  static const size_t total = [] {
    size_t phys = physical_memory();
    if (auto limit = read_cgroup_bytes("/sys/fs/cgroup/memory.max")) {
      phys = phys == 0 ? *limit : std::min(phys, *limit);
    }
    return phys;
  }();
  return total;
}

size_t available_host_memory() {
  size_t avail;
  if (auto a = meminfo_available()) {
    avail = *a;
  } else {
    long pages = sysconf(_SC_AVPHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    avail = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
  }
  if (auto limit = read_cgroup_bytes("/sys/fs/cgroup/memory.max")) {
    size_t used = read_cgroup_bytes("/sys/fs/cgroup/memory.current").value_or(0);
    avail = std::min(avail, *limit > used ? *limit - used : size_t{0});
  }
  return avail;
}

void* aligned_host_alloc(size_t nbytes) {
  // A request beyond all of the machine's memory cannot be met; refuse it
  // here rather than rely on the kernel's overcommit policy, so that the
  // caching allocator's out-of-memory path behaves the same everywhere.
  const size_t total = total_host_memory();
  if (total != 0 && nbytes > total) return nullptr;
  if (nbytes > SIZE_MAX - kCpuAlignment) return nullptr;
  // std::aligned_alloc needs a size that is a multiple of the alignment.
  size_t rounded = std::max(kCpuAlignment, (nbytes + kCpuAlignment - 1) & ~(kCpuAlignment - 1));
  return std::aligned_alloc(kCpuAlignment, rounded);
}

void aligned_host_free(void* ptr) { std::free(ptr); }

}  // namespace tessera::cpu
