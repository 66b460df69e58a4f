#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "runtime/ops/ops.h"
#include "runtime/ops/kernel_registry.h"
#include "runtime/ops/kernel_signatures.h"

using namespace tessera;

double best_ms(const std::function<void()>& f, int reps = 10) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "";
  auto f32 = TensorOptions(DType::kF32);
  const int64_t n = 16 << 20;
  Tensor a = rand({n}, f32), b = rand({n}, f32);
  Tensor out = empty({n}, f32);
  auto bin = KernelRegistry::instance().lookup<kernels::Binary>(host_device().type);
  KernelContext ctx{host_device(), nullptr};
  auto gbs = [](double bytes, double ms) { return bytes / ms / 1e6; };
  if (only.empty() || only == "ew") {
    double ms = best_ms([&] { bin(ctx, kernels::BinaryOp::kAdd, out, a, b, 1); });
    std::printf("add f32 16M (kernel, prealloc): %.2f ms, %.1f GB/s\n", ms, gbs(12.0 * n, ms));
    ms = best_ms([&] { Tensor c = a + b; });
    std::printf("add f32 16M (front end): %.2f ms, %.1f GB/s\n", ms, gbs(12.0 * n, ms));
    ms = best_ms([&] { a.add_(b); });
    std::printf("add_ f32 16M inplace: %.2f ms, %.1f GB/s\n", ms, gbs(12.0 * n, ms));
    ms = best_ms([&] { Tensor c = a * 2.0; });
    std::printf("mul scalar f32 16M: %.2f ms, %.1f GB/s\n", ms, gbs(8.0 * n, ms));
    Tensor m = rand({4096, 4096}, f32), r = rand({4096}, f32);
    ms = best_ms([&] { Tensor c = m + r; });
    std::printf("add bcast row 4096^2: %.2f ms, %.1f GB/s\n", ms, gbs(12.0 * n, ms));
    ms = best_ms([&] { out.copy_(a); });
    std::printf("copy f32 16M: %.2f ms, %.1f GB/s\n", ms, gbs(8.0 * n, ms));
    ms = best_ms([&] { Tensor c = m.t().contiguous(); });
    std::printf("transpose copy 4096^2: %.2f ms, %.1f GB/s\n", ms, gbs(8.0 * n, ms));
    ms = best_ms([&] { Tensor c = a.to(DType::kF16); });
    std::printf("cast f32->f16 16M: %.2f ms, %.1f GB/s\n", ms, gbs(6.0 * n, ms));
    Tensor h = a.to(DType::kF16);
    ms = best_ms([&] { Tensor c = h.to(DType::kF32); });
    std::printf("cast f16->f32 16M: %.2f ms, %.1f GB/s\n", ms, gbs(6.0 * n, ms));
    ms = best_ms([&] { Tensor c = a.to(DType::kF64); });
    std::printf("cast f32->f64 16M: %.2f ms, %.1f GB/s\n", ms, gbs(12.0 * n, ms));
    ms = best_ms([&] { Tensor c = h + h; });
    std::printf("add f16 16M: %.2f ms, %.1f GB/s\n", ms, gbs(6.0 * n, ms));
    Tensor s1 = ones({1}, f32);
    ms = best_ms([&] { for (int i = 0; i < 1000; ++i) { Tensor c = s1 + s1; } }, 5);
    std::printf("add 1-elem: %.2f us/op\n", ms);
  }
  if (only.empty() || only == "red") {
    Tensor m = rand({4096, 4096}, f32);
    double ms = best_ms([&] { Tensor s = sum(a); });
    std::printf("sum f32 16M: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
    ms = best_ms([&] { Tensor s = sum(m, {0}); });
    std::printf("sum dim0 4096^2: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
    ms = best_ms([&] { Tensor s = sum(m, {1}); });
    std::printf("sum dim1 4096^2: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
    Tensor m2 = rand({1 << 22, 4}, f32);
    ms = best_ms([&] { Tensor s = sum(m2, {1}); });
    std::printf("sum dim1 [4M,4]: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
    ms = best_ms([&] { Tensor s = sum(m2, {0}); });
    std::printf("sum dim0 [4M,4]: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
    Tensor ai = a.to(DType::kI32);
    ms = best_ms([&] { Tensor s = sum(ai); });
    std::printf("sum i32 16M: %.2f ms, %.1f GB/s\n", ms, gbs(4.0 * n, ms));
  }
  if (only.empty() || only == "mm") {
    for (int64_t s : {128, 256, 512, 1024, 2048}) {
      Tensor x = rand({s, s}, f32), y = rand({s, s}, f32);
      double ms = best_ms([&] { Tensor z = mm(x, y); }, s >= 2048 ? 3 : 10);
      std::printf("mm f32 %ld: %.3f ms, %.1f GFLOP/s\n", s, ms, 2.0 * s * s * s / ms / 1e6);
    }
    Tensor x = rand({64, 128, 128}, f32), y = rand({64, 128, 128}, f32);
    double ms = best_ms([&] { Tensor z = bmm(x, y); });
    std::printf("bmm f32 64x128^3: %.3f ms, %.1f GFLOP/s\n", ms, 2.0 * 64 * 128 * 128 * 128 / ms / 1e6);
  }
  if (only.empty() || only == "rand") {
    double ms = best_ms([&] { Tensor r = rand({n}, f32); });
    std::printf("rand f32 16M: %.2f ms\n", ms);
    ms = best_ms([&] { Tensor r = randn({n}, f32); });
    std::printf("randn f32 16M: %.2f ms\n", ms);
  }
}
