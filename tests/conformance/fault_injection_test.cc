// Every op of the conformance suite under injected faults
// (runtime/device/fault_injection.h), on the device type named by
// TESSERA_FAULT_DEVICE: its first small sample runs with
//  - an allocation refused (the first, the middle and the last one the op
//    makes): the op must throw OutOfMemoryError;
//  - a kernel launch or copy failing (the first and the last): DeviceError;
//  - the device lost halfway through: DeviceError, while another device
//    runs the same case;
// and after each, the device's allocator must hold exactly the bytes it
// held before the call (nothing leaked on the error path), its statistics
// consistent, and the same call must work again and give the same values.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/device/device_registry.h"
#include "runtime/device/fault_injection.h"
#include "runtime/tessera.h"
#include "tests/conformance/conformance.h"
#include "tests/support/skip.h"

namespace tessera::conformance {
namespace {

using fault_injection::Fault;

constexpr int64_t kMaxInputElements = 4096;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 2;

std::string device_type_under_test() {
  const char* type = std::getenv("TESSERA_FAULT_DEVICE");
  return type != nullptr ? type : "cpu";
}

// A case and its first sample whose inputs are small.
struct Prepared {
  OpCase c;
  Sample sample;
};

std::vector<Prepared> prepare_cases() {
  std::vector<Prepared> out;
  std::set<std::string> seen;
  for (const RegisteredOpCase& entry : registered_op_cases()) {
    if (!seen.insert(entry.op).second) continue;
    OpCase c = entry.make();
    if (c.dtypes.empty()) continue;
    for (const Sample& s : c.samples(c.dtypes.front())) {
      const bool small = std::all_of(s.inputs.begin(), s.inputs.end(), [](const Tensor& t) {
        return !t.defined() || t.numel() <= kMaxInputElements;
      });
      if (!small || s.inputs.empty()) continue;
      out.push_back(Prepared{c, s});
      break;
    }
  }
  return out;
}

// The case's inputs on device, copied in their layouts: every run gets its
// own (in-place ops must not change the sample), made before the run so
// that the allocator balance around the run leaves them out.
std::vector<Tensor> copies_of(const Prepared& p, Device device) {
  std::vector<Tensor> copies;
  for (const Tensor& t : p.sample.inputs) copies.push_back(t.defined() ? copy_like(t, device) : t);
  return copies;
}

std::vector<Tensor> run_case(const Prepared& p, const std::vector<Tensor>& copies) {
  return p.c.run(copies, p.sample);
}

int64_t allocated_bytes(Device device) {
  return CachingAllocator::get(device).stats().allocated_bytes.current;
}

void check_allocator_consistent(Device device) {
  const AllocatorStats s = CachingAllocator::get(device).stats();
  CHECK(s.allocated_bytes.current <= s.active_bytes.current);
  CHECK(s.active_bytes.current <= s.reserved_bytes.current);
  CHECK(s.allocated_bytes.current >= 0);
  CHECK(s.allocation_count.current >= 0);
}

// The device-independent part of a check: run under the injection, expect
// `kind` when the fault fired, then no leak.
void expect_fault(const Prepared& p, Device device, const std::vector<Tensor>& copies,
                  Fault fault, int64_t after, int64_t count, ErrorKind kind) {
  const int64_t before = allocated_bytes(device);
  fault_injection::inject(device, fault, after, count);
  bool threw = false;
  try {
    std::vector<Tensor> outs = run_case(p, copies);
  } catch (const Error& e) {
    threw = true;
    INFO("message: " << e.what());
    CHECK(std::string(error_kind_name(e.kind())) == error_kind_name(kind));
  }
  const int64_t fired = fault_injection::fired();
  fault_injection::clear();
  // A fault that fired must reach the caller; one that did not must not
  // change the result (checked by the caller's rerun).
  if (fired > 0) CHECK(threw);
  if (!threw) CHECK(fired == 0);
  device_interface(device).synchronize_device(device.index);
  CHECK(allocated_bytes(device) == before);
  check_allocator_consistent(device);
}

// What a case does on the device, counted with an injection that never fires.
std::pair<int64_t, int64_t> count_events(const Prepared& p, Device device,
                                         const std::vector<Tensor>& copies) {
  fault_injection::inject(device, Fault::kAllocation, kNever, 1);
  std::vector<Tensor> outs = run_case(p, copies);
  const std::pair<int64_t, int64_t> n{fault_injection::allocations(device),
                                      fault_injection::operations(device)};
  fault_injection::clear();
  return n;
}

void run_fault_cases(Fault fault) {
  const std::string type = device_type_under_test();
  DeviceInterface* iface = DeviceRegistry::instance().find(type);
  if (iface == nullptr || iface->device_count() == 0) {
    TESSERA_SKIP("no " + type + " device on this machine");
  }
  const Device device{DeviceType::from_name(type), 0};
  // The host must keep working while another device is lost. (A lost host
  // is no test: every device stages through host memory.)
  const Device other = host_device();
  fault_injection::clear();
  int64_t cases = 0, faults = 0;
  for (const Prepared& p : prepare_cases()) {
    INFO(p.sample.description << " (" << dtype_name(p.c.dtypes.front()) << ") on "
                               << device.to_string());
    std::vector<Tensor> copies = copies_of(p, device);
    size_t outputs = 0;
    try {
      outputs = run_case(p, copies).size();
    } catch (const Error& e) {
      FAIL_CHECK("the case fails without a fault: " << e.what());
      continue;
    }
    copies = copies_of(p, device);
    const auto [allocations, operations] = count_events(p, device, copies);
    std::set<int64_t> points;
    const int64_t n = fault == Fault::kAllocation ? allocations : operations;
    if (n == 0) continue;
    if (fault == Fault::kDeviceLost) {
      points = {n / 2};
    } else {
      points = {0, n / 2, n - 1};
    }
    for (int64_t after : points) {
      copies = copies_of(p, device);
      INFO("fault after " << after << " of " << n);
      const ErrorKind kind =
          fault == Fault::kAllocation ? ErrorKind::kOutOfMemory : ErrorKind::kDevice;
      expect_fault(p, device, copies, fault, after, fault == Fault::kAllocation ? -1 : 1, kind);
      ++faults;
    }
    if (fault == Fault::kDeviceLost && other != device) {
      // While lost, another device runs the case.
      fault_injection::inject(device, Fault::kDeviceLost, 0, -1);
      CHECK_THROWS_AS(run_case(p, copies_of(p, device)), DeviceError);
      CHECK(run_case(p, copies_of(p, other)).size() == outputs);
      fault_injection::clear();
    }
    // And afterwards the device works again: the suite's own check.
    const std::vector<Tensor> outs = run_case(p, copies_of(p, device));
    const std::vector<Expected> expected = p.c.reference(p.sample);
    REQUIRE(outs.size() == expected.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      const DType dtype = p.c.dtypes.front();
      const Tolerance tol = p.c.tolerance ? p.c.tolerance(dtype, p.sample)
                                          : default_tolerance(expected[k].dtype);
      const std::optional<std::string> why = mismatch(outs[k], expected[k], tol);
      INFO("after the faults, output " << k << ": " << why.value_or(""));
      CHECK(!why.has_value());
    }
    ++cases;
  }
  std::printf("fault injection on %s: %lld cases, %lld faults injected\n",
              device.to_string().c_str(), static_cast<long long>(cases),
              static_cast<long long>(faults));
  CHECK(cases > 100);
}

TEST_CASE("every op under allocation failures", "[faults]") { run_fault_cases(Fault::kAllocation); }

TEST_CASE("every op under device errors", "[faults]") { run_fault_cases(Fault::kOperation); }

TEST_CASE("every op on a device lost halfway", "[faults]") { run_fault_cases(Fault::kDeviceLost); }

}  // namespace
}  // namespace tessera::conformance
