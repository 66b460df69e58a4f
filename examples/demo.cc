// A tour of the Tessera C++ API on the CPU device, which every machine has:
// devices, tensor creation, a few ops, views, and the caching allocator's
// statistics. Run it with `./dev demo`.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "runtime/tessera.h"

namespace {

using tessera::Tensor;

void section(const char* title) { std::printf("\n== %s\n", title); }

void show(const char* what, const Tensor& t) {
  std::printf("%s  # %s\n%s\n", what, tessera::describe(t).c_str(),
              t.to_string().c_str());
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void list_devices() {
  section("Devices");
  auto& registry = tessera::DeviceRegistry::instance();
  for (const tessera::Device& d : registry.all_devices()) {
    tessera::DeviceInterface& iface = registry.get(d.type);
    const tessera::DeviceProperties p = iface.properties(d.index);
    std::printf("  %-10s %s, %d compute units, %s of memory\n",
                d.to_string().c_str(), p.name.c_str(), p.compute_units,
                human_bytes(static_cast<int64_t>(p.total_memory)).c_str());
  }
}

void tensors_and_ops() {
  section("Creation (on the host device)");
  Tensor a = tessera::arange(6, tessera::DType::kF32).view({2, 3});
  show("a = arange(6).view(2, 3)", a);
  Tensor b = tessera::ones({3});
  show("b = ones(3)", b);
  tessera::manual_seed(0);
  show("rand(2, 3) with manual_seed(0)", tessera::rand({2, 3}));
  show("randn(2, 2)", tessera::randn({2, 2}));

  section("Elementwise ops (broadcasting, promotion)");
  show("a + b  (b broadcast over rows)", a + b);
  show("a * a", a * a);
  show("a / 2", a / 2);
  Tensor ints = tessera::arange(3);  // int64
  show("ints / 2  (true division of int64 gives float32)", ints / 2);

  section("Reductions");
  show("sum(a, dim=1)", tessera::sum(a, {1}));
  show("sum(a, dim=0, keepdim)", tessera::sum(a, {0}, /*keepdim=*/true));
  show("mean(a)", tessera::mean(a));

  section("Matrix multiply and views");
  Tensor m = tessera::arange(1, 7, 1, tessera::DType::kF32).view({3, 2});
  show("m = arange(1, 7).view(3, 2)", m);
  show("matmul(a, m)  [2x3] @ [3x2]", tessera::matmul(a, m));
  Tensor at = a.t();
  std::printf("a.t(): shares a's storage: %s, contiguous: %s\n",
              at.storage() == a.storage() ? "yes" : "no",
              at.is_contiguous() ? "yes" : "no");
  Tensor atc = at.contiguous();
  show("a.t().contiguous()", atc);
  std::printf("after contiguous(): contiguous: %s, strides [%lld, %lld]\n",
              atc.is_contiguous() ? "yes" : "no",
              static_cast<long long>(atc.stride(0)),
              static_cast<long long>(atc.stride(1)));
}

void print_stats_table(const tessera::AllocatorStats& s) {
  std::printf("  %-14s %12s %12s\n", "", "current", "peak");
  auto bytes_row = [](const char* name, const tessera::Stat& st) {
    std::printf("  %-14s %12s %12s\n", name, human_bytes(st.current).c_str(),
                human_bytes(st.peak).c_str());
  };
  auto count_row = [](const char* name, const tessera::Stat& st) {
    std::printf("  %-14s %12lld %12lld\n", name,
                static_cast<long long>(st.current),
                static_cast<long long>(st.peak));
  };
  bytes_row("allocated", s.allocated_bytes);
  bytes_row("reserved", s.reserved_bytes);
  bytes_row("active", s.active_bytes);
  bytes_row("requested", s.requested_bytes);
  count_row("allocations", s.allocation_count);
  count_row("segments", s.segment_count);
  std::printf("  %-14s %12lld\n", "alloc retries",
              static_cast<long long>(s.num_alloc_retries));
  std::printf("  %-14s %12lld\n", "OOMs", static_cast<long long>(s.num_ooms));
}

void allocator_stats() {
  section("Caching allocator statistics (host device)");
  tessera::CachingAllocator& alloc =
      tessera::CachingAllocator::get(tessera::host_device());
  {
    // A small tensor comes from a 2 MiB segment of the small pool, a large
    // one from a segment of the large pool.
    Tensor small = tessera::zeros({16, 16});
    Tensor large = tessera::zeros({1024, 1024});
    std::printf("while a 1 KiB and a 4 MiB tensor are alive:\n");
    print_stats_table(alloc.stats());
  }
  tessera::AllocatorStats s = alloc.stats();
  std::printf("after they are freed: allocated %s, reserved %s (kept for reuse)\n",
              human_bytes(s.allocated_bytes.current).c_str(),
              human_bytes(s.reserved_bytes.current).c_str());
  alloc.empty_cache();
  s = alloc.stats();
  std::printf("after empty_cache(): reserved %s, %lld segments\n",
              human_bytes(s.reserved_bytes.current).c_str(),
              static_cast<long long>(s.segment_count.current));
}

}  // namespace

int main() {
  try {
    std::printf("Tessera demo: a standalone C++20 tensor runtime\n");
    list_devices();
    tensors_and_ops();
    allocator_stats();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
