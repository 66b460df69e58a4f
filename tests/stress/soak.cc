// ./dev soak MINUTES: the stress (stress.h) for MINUTES on every device,
// printing reserved memory per device as it goes, then a verdict: the
// results agreed with the host throughout, and each device's reserved
// memory after the warm-up (the first quarter) stayed within two large
// segments of its warm-up peak (flat: the cache reuses, it does not grow).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/tessera.h"
#include "tests/stress/stress.h"

namespace {

constexpr int64_t kSlackBytes = int64_t{40} << 20;  // two 20 MiB segments

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  const double minutes = argc > 1 ? std::atof(argv[1]) : 1.0;
  if (!(minutes > 0)) {
    std::fprintf(stderr, "usage: soak MINUTES (a positive number)\n");
    return 2;
  }
  tessera::stress::Options o;
  o.duration = std::chrono::seconds(static_cast<int64_t>(minutes * 60));
  double last_print = -1e9;
  const auto r = tessera::stress::run(o, [&](const tessera::stress::RoundReport& rep) {
    if (rep.seconds - last_print < 10) return;
    last_print = rep.seconds;
    std::printf("soak: %6.0f s  round %5lld  %10lld ops  reserved", rep.seconds,
                static_cast<long long>(rep.round), static_cast<long long>(rep.ops));
    for (int64_t b : rep.reserved_bytes) std::printf(" %8.1f MiB", mib(b));
    std::printf("\n");
    std::fflush(stdout);
  });
  bool ok = r.failures.empty() && !r.rounds.empty();
  for (const std::string& f : r.failures) std::printf("soak: FAILED: %s\n", f.c_str());
  const double warmup_end = r.rounds.empty() ? 0 : r.rounds.back().seconds / 4;
  for (size_t d = 0; d < r.devices.size(); ++d) {
    int64_t warm_peak = 0, later_peak = 0, first = -1, last = 0;
    for (const auto& rep : r.rounds) {
      const int64_t b = rep.reserved_bytes[d];
      if (first < 0) first = b;
      last = b;
      (rep.seconds <= warmup_end ? warm_peak : later_peak) =
          std::max(rep.seconds <= warmup_end ? warm_peak : later_peak, b);
    }
    const bool flat = later_peak <= warm_peak + kSlackBytes;
    ok = ok && flat;
    std::printf("soak: %s reserved %.1f MiB after the first round, %.1f MiB warm-up peak, "
                "%.1f MiB peak after, %.1f MiB at the end: %s\n",
                r.devices[d].to_string().c_str(), mib(first), mib(warm_peak), mib(later_peak),
                mib(last), flat ? "flat" : "GROWING");
  }
  std::printf("soak: %.1f min, %zu rounds, %lld ops on %zu devices: %s\n",
              r.rounds.empty() ? 0.0 : r.rounds.back().seconds / 60, r.rounds.size(),
              r.rounds.empty() ? 0LL : static_cast<long long>(r.rounds.back().ops),
              r.devices.size(), ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
