// Op throughput on one Tessera device (the CPU device by default, or
// `--device vulkan:0`, `--device cuda:0`), for comparison with PyTorch in
// the same run.
//
// Two suites of shapes: "cpu" (16M-element elementwise ops, 4096x4096 rows,
// GEMMs up to 2048), the default for the CPU and Vulkan devices; and "gpu"
// (the CUDA issue's shapes: 16M and 256M elements, [8192, 8192] and
// [32768, 1024] rows, 4096 GEMMs in f32, TF32, f16 and bf16, a ResNet
// convolution at batch 32, and the latency of a 1-element add), the
// default for the CUDA device. `--suite` picks one explicitly; `--only
// TEXT` runs the benchmarks whose names contain TEXT.
// bench/compare_torch.py times the cpu suite against torch on the CPU,
// bench/compare_torch_gpu.py the gpu suite against torch.cuda.
//
// bench/compare_torch.py runs this binary and the same benchmarks in torch
// in one run, at the same thread count, and prints the ratios; see
// bench/README.md. Alone, it prints its own table and, with
// TESSERA_BENCH_JSON set, appends one JSON object (one line) to that file;
// otherwise the JSON goes to stdout after the table.
//
// Timing (the same in compare_torch.py, so that the two sides match): a few
// warm-up calls (the first call of an op allocates its output's segment and
// pages in code), then one timed call decides how many calls make one
// repeat of about kTargetRepeatSeconds; the figure is the median over the
// repeats of the seconds per call. Ops run out-of-place, so each call
// allocates its output, served by the caching allocator in steady state, as
// user code calling torch.add does.
//
// Devices other than the host run asynchronously: each repeat ends with a
// synchronize of the device, so a figure covers the work, not its enqueue
// (as torch.cuda benchmarks synchronize). Their inputs are made on the host
// and copied over; their "memcpy" row is a device-to-device copy_, the
// roofline of their elementwise ops. A device that is absent writes a JSON
// result with "status": "absent" and exits 0.
//
// Threads: the CPU device's kernels run on oneTBB, capped by
// TESSERA_NUM_THREADS (see devices/cpu/cpu_device.cc); the count in effect is
// printed and written to the JSON.
//
// softmax, layer_norm, conv2d, add_out and mul_out are detected at compile
// time (a concept over an argument-dependent call), so this file compiles
// whether or not their front ends exist yet; an absent op is reported "not
// available".
#include <algorithm>
#include <chrono>
#include <concepts>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "runtime/tessera.h"

namespace tessera {
namespace {

constexpr double kTargetRepeatSeconds = 0.1;
constexpr int kWarmupCalls = 2;

// -- Op detection. The call is unqualified and its argument's type is a
// template parameter, so name lookup waits for instantiation and finds
// tessera::softmax by argument-dependent lookup if ops.h declares it.

template <typename T>
concept HasSoftmax = requires(const T& x) {
  { softmax(x, int64_t{1}) } -> std::same_as<T>;
};
template <typename T>
concept HasLayerNorm = requires(const T& x) {
  { layer_norm(x, Shape{4096}, x, x, 1e-5) } -> std::same_as<T>;
};
template <typename T>
concept HasConv2d = requires(const T& x) {
  { conv2d(x, x, x, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, int64_t{1}) } -> std::same_as<T>;
};

template <typename T>
concept HasAddOut = requires(T& out, const T& x) { add_out(out, x, x); };
template <typename T>
concept HasMulOut = requires(T& out, const T& x) { mul_out(out, x, x); };

using OpCall = std::function<Tensor()>;

// add/mul into a preallocated output: the kernel alone, without the
// allocation of the result (torch's add(a, b, out=c)).
template <typename T>
std::optional<OpCall> add_out_call(T& out, const T& a, const T& b) {
  if constexpr (HasAddOut<T>) {
    return OpCall([&out, &a, &b] { return add_out(out, a, b); });
  } else {
    return std::nullopt;
  }
}

template <typename T>
std::optional<OpCall> mul_out_call(T& out, const T& a, const T& b) {
  if constexpr (HasMulOut<T>) {
    return OpCall([&out, &a, &b] { return mul_out(out, a, b); });
  } else {
    return std::nullopt;
  }
}

template <typename T>
std::optional<OpCall> softmax_call(const T& x) {
  if constexpr (HasSoftmax<T>) {
    return OpCall([x] { return softmax(x, int64_t{1}); });
  } else {
    return std::nullopt;
  }
}

template <typename T>
std::optional<OpCall> layer_norm_call(const T& x, const T& weight, const T& bias) {
  if constexpr (HasLayerNorm<T>) {
    return OpCall([=] { return layer_norm(x, Shape{x.size(-1)}, weight, bias, 1e-5); });
  } else {
    return std::nullopt;
  }
}

template <typename T>
std::optional<OpCall> conv2d_call(const T& input, const T& weight, const T& bias) {
  if constexpr (HasConv2d<T>) {
    return OpCall([=] {
      return conv2d(input, weight, bias, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}, int64_t{1});
    });
  } else {
    return std::nullopt;
  }
}

// -- Timing.

struct Timing {
  double median_s = 0;
  double min_s = 0;
  int calls_per_repeat = 0;
  int repeats = 0;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The device the op benchmarks run on; its work is synchronized at the end
// of each timed span.
// (A function-local static: devices register during static
// initialization, after a global here would have been made.)
Device& bench_device() {
  static Device device = host_device();
  return device;
}

void wait_for_device() {
  if (bench_device() != host_device()) synchronize(bench_device());
}

// Times f (which returns whatever; the result is dropped at once, as an
// unused out-of-place result would be).
template <typename F>
Timing time_calls(const F& f) {
  for (int i = 0; i < kWarmupCalls; ++i) f();
  wait_for_device();
  auto t0 = std::chrono::steady_clock::now();
  f();
  wait_for_device();
  const double one = std::max(seconds_since(t0), 1e-9);
  Timing t;
  t.calls_per_repeat = std::clamp(static_cast<int>(std::lround(kTargetRepeatSeconds / one)), 1,
                                  10000);
  // Slow ops (a second a call) get fewer repeats to bound the run time.
  t.repeats = one > 0.5 ? 3 : 7;
  std::vector<double> per_call;
  for (int r = 0; r < t.repeats; ++r) {
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < t.calls_per_repeat; ++i) f();
    wait_for_device();
    per_call.push_back(seconds_since(t0) / t.calls_per_repeat);
  }
  std::sort(per_call.begin(), per_call.end());
  t.median_s = per_call[per_call.size() / 2];
  t.min_s = per_call.front();
  return t;
}

// -- Results.

struct Result {
  std::string name;    // "add_f32_16M"
  std::string op;      // what is called, for the table
  std::string shape;   // "[16777216]"
  std::string unit;    // "GB/s" or "GFLOP/s"
  double work = 0;     // bytes moved or flops per call
  std::string status;  // "ok", "not available", "error"
  std::string error;
  Timing timing;
  double throughput() const { return timing.median_s > 0 ? work / timing.median_s / 1e9 : 0; }
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// `--only TEXT`: the benchmarks whose names contain TEXT, alone (a kernel
// author's loop); empty runs them all.
std::string& only_filter() {
  static std::string filter;
  return filter;
}

bool selected(std::string_view name) {
  return only_filter().empty() || name.find(only_filter()) != std::string_view::npos;
}

// Whether a block of benchmarks (these names) has one to run: its inputs
// are made only then.
bool any_selected(std::initializer_list<std::string_view> names) {
  return std::any_of(names.begin(), names.end(), selected);
}

// Runs one benchmark; an exception from the op becomes an "error" result so
// that the others still run (the caller's exit status reports it). One that
// --only leaves out is "skipped", and not reported.
Result run_bench(std::string name, std::string op, std::string shape, std::string unit,
                 double work, const std::optional<OpCall>& call) {
  Result r{std::move(name), std::move(op), std::move(shape), std::move(unit), work, "", "", {}};
  if (!selected(r.name)) {
    r.status = "skipped";
    return r;
  }
  if (!call) {
    r.status = "not available";
    r.error = "tessera::" + r.op.substr(0, r.op.find('(')) + " is not declared in ops.h";
  } else {
    try {
      r.timing = time_calls(*call);
      r.status = "ok";
    } catch (const std::exception& e) {
      r.status = "error";
      r.error = e.what();
    }
  }
  if (r.status == "ok") {
    // Microseconds for the short ops (launch latency), milliseconds otherwise.
    const bool short_op = r.timing.median_s < 1e-4;
    std::printf("  %-26s %-32s %10.3f %s %9.2f %s  (%d x %d calls)\n", r.name.c_str(),
                r.op.c_str(), r.timing.median_s * (short_op ? 1e6 : 1e3), short_op ? "us" : "ms",
                r.throughput(), r.unit.c_str(), r.timing.repeats, r.timing.calls_per_repeat);
  } else {
    std::printf("  %-26s %-32s %s: %s\n", r.name.c_str(), r.op.c_str(), r.status.c_str(),
                r.error.c_str());
  }
  std::fflush(stdout);
  return r;
}

// -- memcpy bandwidth: the roofline for the elementwise ops.

// std::memcpy of n floats on this thread, and split into `tasks` contiguous
// chunks run as oneTBB tasks. Bytes moved count the read and the write.
std::vector<Result> memcpy_benches(int64_t n, int tasks) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  std::vector<float> src(static_cast<size_t>(n), 1.0f), dst(static_cast<size_t>(n), 0.0f);
  const std::string shape = "[" + std::to_string(n) + "]";
  std::vector<Result> out;
  out.push_back(run_bench("memcpy_1thread", "std::memcpy", shape, "GB/s", 2.0 * bytes,
                          OpCall([&] {
                            std::memcpy(dst.data(), src.data(), bytes);
                            asm volatile("" : : "r"(dst.data()) : "memory");
                            return Tensor();
                          })));
  if (tasks > 1) {
    const size_t chunk = (bytes + tasks - 1) / tasks;
    char* d = reinterpret_cast<char*>(dst.data());
    const char* s = reinterpret_cast<const char*>(src.data());
    out.push_back(run_bench(
        "memcpy_" + std::to_string(tasks) + "tasks",
        "std::memcpy in " + std::to_string(tasks) + " oneTBB tasks", shape, "GB/s", 2.0 * bytes,
        OpCall([&] {
          oneapi::tbb::parallel_for(0, tasks, [&](int i) {
            const size_t b = std::min(bytes, i * chunk), e = std::min(bytes, b + chunk);
            std::memcpy(d + b, s + b, e - b);
          });
          asm volatile("" : : "r"(d) : "memory");
          return Tensor();
        })));
  }
  return out;
}

// -- The op benchmarks (shapes from the performance section).

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Random f32 inputs on the benchmarked device (made on the host: input
// creation is not what is measured).
Tensor input(const Shape& sizes) {
  Tensor t = randn(sizes, TensorOptions(DType::kF32));
  return bench_device() == host_device() ? t : t.to(bench_device());
}

// A device's memcpy: one device-to-device copy_ of n floats.
Result device_copy_bench(int64_t n) {
  if (!selected("memcpy_device")) return run_bench("memcpy_device", "", "", "", 0, std::nullopt);
  const Tensor src = input({n});
  Tensor dst = empty({n}, TensorOptions(DType::kF32, bench_device()));
  return run_bench("memcpy_device", "dst.copy_(src)", shape_str({n}), "GB/s", 2.0 * 4.0 * n,
                   OpCall([&] {
                     dst.copy_(src);
                     return Tensor();
                   }));
}

std::vector<Result> op_benches() {
  std::vector<Result> out;
  const TensorOptions f32(DType::kF32, bench_device());
  auto randn = [](const Shape& sizes, const TensorOptions&) { return input(sizes); };

  {  // Elementwise, 16M elements: bytes = two reads and one write.
    const int64_t n = int64_t{1} << 24;
    const Tensor a = randn({n}, f32), b = randn({n}, f32);
    const double bytes = 3.0 * 4.0 * static_cast<double>(n);
    out.push_back(run_bench("add_f32_16M", "add(a, b)", shape_str({n}), "GB/s", bytes,
                            OpCall([&] { return add(a, b); })));
    out.push_back(run_bench("mul_f32_16M", "mul(a, b)", shape_str({n}), "GB/s", bytes,
                            OpCall([&] { return mul(a, b); })));
    Tensor c = empty({n}, f32);
    out.push_back(run_bench("add_out_f32_16M", "add_out(c, a, b)", shape_str({n}), "GB/s",
                            bytes, add_out_call(c, a, b)));
    out.push_back(run_bench("mul_out_f32_16M", "mul_out(c, a, b)", shape_str({n}), "GB/s",
                            bytes, mul_out_call(c, a, b)));
  }
  {  // Transcendental elementwise ops, 4M elements (in cache on most
     // machines, so the math is timed, not DRAM): bytes = read + write.
    const int64_t n = int64_t{1} << 22;
    const Tensor x = randn({n}, f32);
    const Tensor positive = add(abs(x), 0.1);
    const double bytes = 2.0 * 4.0 * static_cast<double>(n);
    const std::string shape = shape_str({n});
    out.push_back(run_bench("exp_f32_4M", "exp(x)", shape, "GB/s", bytes,
                            OpCall([&] { return exp(x); })));
    out.push_back(run_bench("log_f32_4M", "log(|x| + 0.1)", shape, "GB/s", bytes,
                            OpCall([&] { return log(positive); })));
    out.push_back(run_bench("gelu_f32_4M", "gelu(x)", shape, "GB/s", bytes,
                            OpCall([&] { return gelu(x); })));
    out.push_back(run_bench("gelu_tanh_f32_4M", "gelu(x, tanh)", shape, "GB/s", bytes,
                            OpCall([&] { return gelu(x, "tanh"); })));
    out.push_back(run_bench("silu_f32_4M", "silu(x)", shape, "GB/s", bytes,
                            OpCall([&] { return silu(x); })));
  }
  for (int64_t n : {512, 1024, 2048}) {  // Square GEMM: 2 n^3 flops.
    const Tensor a = randn({n, n}, f32), b = randn({n, n}, f32);
    const double flops = 2.0 * static_cast<double>(n) * n * n;
    out.push_back(run_bench("matmul_f32_" + std::to_string(n), "matmul(a, b)",
                            shape_str({n, n}) + " @ " + shape_str({n, n}), "GFLOP/s", flops,
                            OpCall([&] { return matmul(a, b); })));
  }
  {  // Row-wise ops on [4096, 4096]: bytes = what must be read and written.
    const int64_t rows = 4096, cols = 4096;
    const double elems = static_cast<double>(rows) * cols;
    const Tensor x = randn({rows, cols}, f32);
    const Tensor weight = randn({cols}, f32), bias = randn({cols}, f32);
    const std::string shape = shape_str({rows, cols});
    out.push_back(run_bench("sum_f32_4096x4096", "sum(x)", shape, "GB/s", 4.0 * elems,
                            OpCall([&] { return sum(x); })));
    out.push_back(run_bench("sum_dim1_f32_4096x4096", "sum(x, {1})", shape, "GB/s",
                            4.0 * (elems + rows), OpCall([&] { return sum(x, Shape{1}); })));
    out.push_back(run_bench("softmax_f32_4096x4096", "softmax(x, 1)", shape, "GB/s",
                            8.0 * elems, softmax_call(x)));
    out.push_back(run_bench("layer_norm_f32_4096x4096", "layer_norm(x, {4096}, w, b)", shape,
                            "GB/s", 8.0 * elems + 8.0 * cols, layer_norm_call(x, weight, bias)));
  }
  {  // ResNet-style 3x3 convolution: 2 N K C R S P Q flops.
    const int64_t N = 8, C = 64, K = 64, H = 56, W = 56, R = 3, S = 3;
    const Tensor input = randn({N, C, H, W}, f32);
    const Tensor weight = randn({K, C, R, S}, f32), bias = randn({K}, f32);
    const double flops = 2.0 * N * K * C * R * S * H * W;  // P = H, Q = W at padding 1
    out.push_back(run_bench("conv2d_f32_resnet", "conv2d(x, w, b, pad 1)",
                            shape_str({N, C, H, W}) + " * " + shape_str({K, C, R, S}), "GFLOP/s",
                            flops, conv2d_call(input, weight, bias)));
  }
  return out;
}

// The gpu suite (see the top of the file). Inputs are made on the host and
// copied over; f16/bf16 GEMM inputs are converted on the device.
std::vector<Result> gpu_op_benches() {
  std::vector<Result> out;
  for (int64_t n : {int64_t{1} << 24, int64_t{1} << 28}) {
    const std::string tag = n == (int64_t{1} << 24) ? "16M" : "256M";
    if (!any_selected({"memcpy_device_" + tag, "add_f32_" + tag, "mul_f32_" + tag})) continue;
    const Tensor a = input({n}), b = input({n});
    const double bytes = 3.0 * 4.0 * static_cast<double>(n);
    if (n == (int64_t{1} << 28)) {  // the roofline at the larger size
      Tensor dst = empty({n}, TensorOptions(DType::kF32, bench_device()));
      out.push_back(run_bench("memcpy_device_256M", "dst.copy_(src)", shape_str({n}), "GB/s",
                              2.0 * 4.0 * n, OpCall([&] {
                                dst.copy_(a);
                                return Tensor();
                              })));
    }
    out.push_back(run_bench("add_f32_" + tag, "add(a, b)", shape_str({n}), "GB/s", bytes,
                            OpCall([&] { return add(a, b); })));
    out.push_back(run_bench("mul_f32_" + tag, "mul(a, b)", shape_str({n}), "GB/s", bytes,
                            OpCall([&] { return mul(a, b); })));
  }
  for (const Shape& shape : {Shape{8192, 8192}, Shape{32768, 1024}}) {
    const int64_t rows = shape[0], cols = shape[1];
    const double elems = static_cast<double>(rows) * cols;
    const std::string tag = std::to_string(rows) + "x" + std::to_string(cols);
    if (!any_selected({"sum_f32_" + tag, "sum_dim1_f32_" + tag, "softmax_f32_" + tag,
                       "layer_norm_f32_" + tag})) {
      continue;
    }
    const Tensor x = input(shape), weight = input({cols}), bias = input({cols});
    if (rows == 8192) {
      out.push_back(run_bench("sum_f32_" + tag, "sum(x)", shape_str(shape), "GB/s",
                              4.0 * elems, OpCall([&] { return sum(x); })));
      out.push_back(run_bench("sum_dim1_f32_" + tag, "sum(x, {1})", shape_str(shape), "GB/s",
                              4.0 * (elems + rows), OpCall([&] { return sum(x, Shape{1}); })));
    }
    out.push_back(run_bench("softmax_f32_" + tag, "softmax(x, 1)", shape_str(shape), "GB/s",
                            8.0 * elems, softmax_call(x)));
    out.push_back(run_bench("layer_norm_f32_" + tag, "layer_norm(x, {cols}, w, b)",
                            shape_str(shape), "GB/s", 8.0 * elems + 8.0 * cols,
                            layer_norm_call(x, weight, bias)));
  }
  if (any_selected({"matmul_f32_4096", "matmul_tf32_4096", "matmul_f16_4096",
                    "matmul_bf16_4096"})) {  // Square GEMMs at 4096: f32 (TF32 off, then on), f16, bf16.
    const int64_t n = 4096;
    const double flops = 2.0 * static_cast<double>(n) * n * n;
    const std::string shape = shape_str({n, n}) + " @ " + shape_str({n, n});
    const Tensor a = input({n, n}), b = input({n, n});
    const MatmulPrecision before = float32_matmul_precision();
    set_float32_matmul_precision(MatmulPrecision::kHighest);
    out.push_back(run_bench("matmul_f32_4096", "matmul(a, b)", shape, "GFLOP/s", flops,
                            OpCall([&] { return matmul(a, b); })));
    set_float32_matmul_precision(MatmulPrecision::kHigh);
    out.push_back(run_bench("matmul_tf32_4096", "matmul(a, b), precision high", shape,
                            "GFLOP/s", flops, OpCall([&] { return matmul(a, b); })));
    set_float32_matmul_precision(before);
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      const Tensor ah = a.to(dtype), bh = b.to(dtype);
      const std::string tag = dtype == DType::kF16 ? "f16" : "bf16";
      out.push_back(run_bench("matmul_" + tag + "_4096", "matmul(a, b)", shape, "GFLOP/s",
                              flops, OpCall([&] { return matmul(ah, bh); })));
    }
  }
  if (selected("conv2d_f32_resnet_b32")) {  // ResNet-50's 3x3 layer of stage 1 at batch 32.
    const int64_t N = 32, C = 64, K = 64, H = 56, W = 56, R = 3, S = 3;
    const Tensor x = input({N, C, H, W}), weight = input({K, C, R, S}), bias = input({K});
    const double flops = 2.0 * N * K * C * R * S * H * W;
    out.push_back(run_bench("conv2d_f32_resnet_b32", "conv2d(x, w, b, pad 1)",
                            shape_str({N, C, H, W}) + " * " + shape_str({K, C, R, S}), "GFLOP/s",
                            flops, conv2d_call(x, weight, bias)));
  }
  if (any_selected({"copy_h2d_pinned_64M", "copy_d2h_pinned_64M"})) {
    // Host<->device over pinned memory with non_blocking: the bus's bandwidth.
    const int64_t n = int64_t{1} << 24;  // 64 MiB
    Tensor pinned = empty_pinned({n}, DType::kF32);
    pinned.copy_(input({n}));
    Tensor on_device = empty({n}, TensorOptions(DType::kF32, bench_device()));
    out.push_back(run_bench("copy_h2d_pinned_64M", "dst.copy_(pinned, non_blocking)",
                            shape_str({n}), "GB/s", 4.0 * n, OpCall([&] {
                              on_device.copy_(pinned, /*non_blocking=*/true);
                              return Tensor();
                            })));
    out.push_back(run_bench("copy_d2h_pinned_64M", "pinned.copy_(src, non_blocking)",
                            shape_str({n}), "GB/s", 4.0 * n, OpCall([&] {
                              pinned.copy_(on_device, /*non_blocking=*/true);
                              return Tensor();
                            })));
  }
  {  // Launch overhead: a 1-element add, enqueued asynchronously; the figure
     // is calls per second (work 1e9 per call over seconds over 1e9).
    const Tensor a = input({1}), b = input({1});
    out.push_back(run_bench("add_latency_1", "add(a, b), 1 element", shape_str({1}),
                            "Gcall/s", 1.0, OpCall([&] { return add(a, b); })));
  }
  return out;
}

// -- Output.

int thread_count() {
  const size_t limit = oneapi::tbb::global_control::active_value(
      oneapi::tbb::global_control::max_allowed_parallelism);
  const int arena = oneapi::tbb::this_task_arena::max_concurrency();
  return static_cast<int>(std::min<size_t>(static_cast<size_t>(arena), limit));
}

std::string to_json(const std::string& device_name, int threads,
                    const std::vector<Result>& results) {
  std::string j = "{\"bench\": \"ops\", \"device\": \"" + json_escape(device_name) +
                  "\", \"threads\": " + std::to_string(threads) + ", \"results\": [";
  char buf[512];
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    std::snprintf(buf, sizeof buf,
                  "%s{\"name\": \"%s\", \"op\": \"%s\", \"shape\": \"%s\", \"unit\": \"%s\", "
                  "\"work\": %.6g, \"status\": \"%s\"",
                  i ? ", " : "", json_escape(r.name).c_str(), json_escape(r.op).c_str(),
                  json_escape(r.shape).c_str(), r.unit.c_str(), r.work, r.status.c_str());
    j += buf;
    if (r.status == "ok") {
      std::snprintf(buf, sizeof buf,
                    ", \"seconds\": %.9g, \"min_seconds\": %.9g, \"throughput\": %.6g, "
                    "\"repeats\": %d, \"calls_per_repeat\": %d}",
                    r.timing.median_s, r.timing.min_s, r.throughput(), r.timing.repeats,
                    r.timing.calls_per_repeat);
      j += buf;
    } else {
      j += ", \"error\": \"" + json_escape(r.error) + "\"}";
    }
  }
  return j + "]}";
}

// The JSON for a device that this machine does not have.
std::string absent_json(const std::string& device) {
  return "{\"bench\": \"ops\", \"device\": \"" + json_escape(device) +
         "\", \"device_id\": \"" + json_escape(device) +
         "\", \"status\": \"absent\", \"threads\": 0, \"results\": []}";
}

int write_json(const std::string& json) {
  if (const char* path = std::getenv("TESSERA_BENCH_JSON"); path != nullptr && *path) {
    std::FILE* f = std::fopen(path, "a");
    if (f == nullptr) {
      std::fprintf(stderr, "ops_bench: cannot open %s for appending\n", path);
      return 1;
    }
    std::fprintf(f, "%s\n", json.c_str());
    std::fclose(f);
  } else {
    std::printf("%s\n", json.c_str());
  }
  return 0;
}

int run(const std::string& device_text, std::string suite) {
  bench_device() = Device::parse(device_text);
  if (suite.empty()) suite = bench_device().type.name() == "cuda" ? "gpu" : "cpu";
  DeviceInterface* iface = DeviceRegistry::instance().find(bench_device().type.name());
  if (iface == nullptr || bench_device().index >= iface->device_count()) {
    std::printf("ops_bench: no device %s on this machine; nothing to time\n",
                device_text.c_str());
    return write_json(absent_json(device_text));
  }
  const DeviceProperties props = iface->properties(bench_device().index);
  const int threads = thread_count();
  std::printf("tessera ops on %s: %s, %d host thread%s (TESSERA_NUM_THREADS caps it)\n",
              bench_device().to_string().c_str(), props.name.c_str(), threads,
              threads == 1 ? "" : "s");
  std::printf("  %-26s %-32s %13s %s\n", "benchmark", "call", "median", "throughput");

  std::vector<Result> results;
  if (suite == "gpu") {
    results.push_back(device_copy_bench(int64_t{1} << 24));
    for (Result& r : gpu_op_benches()) results.push_back(std::move(r));
  } else if (bench_device() == host_device()) {
    results = memcpy_benches(int64_t{1} << 24, threads);
  } else {
    results.push_back(device_copy_bench(int64_t{1} << 24));
  }
  if (suite == "cpu") {
    for (Result& r : op_benches()) results.push_back(std::move(r));
  }

  std::erase_if(results, [](const Result& r) { return r.status == "skipped"; });
  std::string json = to_json(props.name, threads, results);
  json.insert(1, "\"device_id\": \"" + json_escape(bench_device().to_string()) +
                     "\", \"suite\": \"" + suite + "\", \"status\": \"ok\", ");
  if (int rc = write_json(json); rc != 0) return rc;
  // Errors (an op that threw) fail the run; absent ops do not.
  const bool any_error = std::any_of(results.begin(), results.end(),
                                     [](const Result& r) { return r.status == "error"; });
  return any_error ? 1 : 0;
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  std::string device = "cpu";
  std::string suite;  // by the device: gpu for cuda, cpu otherwise
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--device" && i + 1 < argc) {
      device = argv[++i];
    } else if (arg.rfind("--device=", 0) == 0) {
      device = arg.substr(9);
    } else if ((arg == "--suite" && i + 1 < argc) || arg.rfind("--suite=", 0) == 0) {
      suite = arg == "--suite" ? argv[++i] : arg.substr(8);
      if (suite != "cpu" && suite != "gpu") {
        std::fprintf(stderr, "ops_bench: --suite is cpu or gpu, not '%s'\n", suite.c_str());
        return 2;
      }
    } else if (arg == "--only" && i + 1 < argc) {
      tessera::only_filter() = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: ops_bench [--device cpu|vulkan:0|cuda:0|...] [--suite cpu|gpu] "
                   "[--only TEXT]\n");
      return 2;
    }
  }
  try {
    return tessera::run(device, suite);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ops_bench: %s\n", e.what());
    return 1;
  }
}
