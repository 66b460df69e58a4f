// tessera's Kineto plugin: an activity profiler registered with torch's
// PrivateUse1ProfilerRegistry. Registering it makes
// ProfilerActivity.PrivateUse1 a supported activity, and
// torch.profiler.profile(activities=[CPU, PrivateUse1]) (profiler state
// KINETO_PRIVATEUSE1 in torch 2.13) then reports each op's device time.
//
// How ops are timed: as each op starts and ends, torch hands Kineto the
// op's correlation id (pushCorrelationId / popCorrelationId, on the thread
// running the op). At each of those boundaries the session records a
// runtime event on the current tessera device's current stream. The device
// time between two consecutive boundaries of a thread belongs to the op on
// top of that thread's stack: the op's own work, not its children's, so
// nested ops (aten::matmul -> aten::mm) are not counted twice. Each such
// span with device time becomes one device activity linked to its op,
// which torch's tables list as the op's device time.
//
// Events go to the *current* tessera device, as with torch's PrivateUse1
// profiler stubs: profile ops of tessera:N with tessera:N current
// (torch.tessera.set_device(N) or `with torch.tessera.device(N)`). The
// runtime CPU device runs ops synchronously on the host, so its device
// time is host time.
//
// torch 2.11 has no registry for PrivateUse1 activity profilers: built
// against it, the plugin compiles to nothing (torch.profiler then lists
// tessera ops with host time only; the legacy profiler's stubs still time
// the device).
#include "bridge/csrc/profiler/kineto_plugin.h"

#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#define TESSERA_KINETO_PLUGIN 1
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

// After the registry header, which includes Kineto's with USE_KINETO set.
#include <libkineto.h>
#include <output_base.h>
#include <time_since_epoch.h>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bridge/csrc/device_list.h"
#include "runtime/core/error.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"

namespace torch_tessera {
namespace {

int64_t host_now_ns() { return libkineto::timeSinceEpoch(std::chrono::system_clock::now()); }

// A point in one thread's op sequence: an event on a tessera stream, and
// the host time when it was recorded (where the trace places the span).
struct Boundary {
  tessera::Event event;
  c10::DeviceIndex index;
  uint32_t stream_id;
  int64_t host_ns;
};

// The time between two boundaries, owned by the op with this correlation id.
struct Span {
  uint64_t correlation_id;
  std::shared_ptr<Boundary> begin;
  std::shared_ptr<Boundary> end;
};

// The ops a thread has started and not finished, and its last boundary.
struct ThreadOps {
  std::vector<uint64_t> open;
  std::shared_ptr<Boundary> last;
};

class TesseraSession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    std::lock_guard<std::mutex> lock(mutex_);
    recording_ = true;
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    std::lock_guard<std::mutex> lock(mutex_);
    recording_ = false;
    threads_.clear();  // ops still open at the end have no closing boundary
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  void pushCorrelationId(uint64_t id) override {
    std::shared_ptr<Boundary> b = record_boundary();
    if (b == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!recording_) return;
    ThreadOps& ops = threads_[std::this_thread::get_id()];
    close_span(ops, b);
    ops.open.push_back(id);
    ops.last = std::move(b);
  }

  void popCorrelationId() override {
    std::shared_ptr<Boundary> b = record_boundary();
    std::lock_guard<std::mutex> lock(mutex_);
    if (!recording_) return;
    ThreadOps& ops = threads_[std::this_thread::get_id()];
    if (b != nullptr) close_span(ops, b);
    if (!ops.open.empty()) ops.open.pop_back();
    ops.last = ops.open.empty() ? nullptr : std::move(b);
  }

  std::vector<std::string> errors() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return errors_;
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) { return nullptr; }, 0, 0);
  }

  // Waits for the events (on devices that run asynchronously) and logs
  // one activity per span with device time.
  void processTrace(libkineto::ActivityLogger& logger,
                    libkineto::getLinkedActivityCallback linked_activity, int64_t start_ns,
                    int64_t end_ns) override {
    std::lock_guard<std::mutex> lock(mutex_);
    trace_span_ = std::make_unique<libkineto::TraceSpan>(start_ns, end_ns, "tessera");
    for (const Span& s : spans_) {
      if (s.begin->index != s.end->index) continue;  // the op changed the current device
      double ms = 0;
      try {
        ms = s.begin->event.elapsed_time(s.end->event);
      } catch (const tessera::Error& e) {
        // A device that cannot time its work (a Vulkan queue without
        // timestamps): its ops get no device time.
        if (errors_.empty()) errors_.push_back(std::string("tessera: ") + e.what());
        continue;
      }
      const auto duration_ns = static_cast<int64_t>(ms * 1e6);
      if (duration_ns <= 0) continue;
      const libkineto::ITraceActivity* op =
          linked_activity(static_cast<int32_t>(s.correlation_id));
      libkineto::GenericTraceActivity& a = activities_.emplace_back(
          *trace_span_, libkineto::ActivityType::CONCURRENT_KERNEL,
          (op != nullptr ? op->name() : std::string("op")) + " on tessera:" +
              std::to_string(s.begin->index));
      a.startTime = s.begin->host_ns;
      a.endTime = s.begin->host_ns + duration_ns;
      a.id = static_cast<int32_t>(s.correlation_id);
      a.device = s.begin->index;
      a.resource = static_cast<int32_t>(s.begin->stream_id);
      a.linked = op;
    }
    spans_.clear();  // releases the events
    for (const libkineto::GenericTraceActivity& a : activities_) {
      logger.handleGenericActivity(a);
    }
    status_ = errors_.empty() ? libkineto::TraceStatus::READY : libkineto::TraceStatus::WARNING;
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override { return nullptr; }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override { return {}; }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return nullptr; }

 private:
  // An event on the current tessera device's current stream, or nullptr
  // when the session is not recording or the device refuses events.
  std::shared_ptr<Boundary> record_boundary() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!recording_) return nullptr;
    }
    try {
      const c10::DeviceIndex index = current_device();
      const tessera::Device device = runtime_device(index);
      const tessera::Stream stream = tessera::current_stream(device);
      auto b = std::make_shared<Boundary>(
          Boundary{tessera::Event(device), index, stream.id(), host_now_ns()});
      b->event.record(stream);
      return b;
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (errors_.empty()) errors_.push_back(std::string("tessera: ") + e.what());
      return nullptr;
    }
  }

  // The span from the thread's last boundary to `b` belongs to the op on
  // top of its stack. Caller holds mutex_.
  void close_span(const ThreadOps& ops, const std::shared_ptr<Boundary>& b) {
    if (ops.open.empty() || ops.last == nullptr) return;
    spans_.push_back(Span{ops.open.back(), ops.last, b});
  }

  std::mutex mutex_;
  bool recording_ = false;
  std::unordered_map<std::thread::id, ThreadOps> threads_;
  std::vector<Span> spans_;
  std::vector<std::string> errors_;
  // What the logger is given stays here for the session's life: Kineto
  // keeps pointers to the activities and their trace span.
  std::unique_ptr<libkineto::TraceSpan> trace_span_;
  std::deque<libkineto::GenericTraceActivity> activities_;
};

class TesseraActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }

  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return activities_;
  }

  // A session only for profiles that ask for device activity (Kineto asks
  // every registered profiler, CPU-only profiles included).
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& /*config*/) override {
    if (activity_types.count(libkineto::ActivityType::CONCURRENT_KERNEL) == 0) return nullptr;
    return std::make_unique<TesseraSession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/, int64_t /*duration_ms*/,
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  const std::string name_ = "tessera";
  const std::set<libkineto::ActivityType> activities_{libkineto::ActivityType::CONCURRENT_KERNEL};
};

REGISTER_PRIVATEUSE1_PROFILER(TesseraActivityProfiler);

}  // namespace
}  // namespace torch_tessera

#endif  // __has_include(privateuse1_profiler.h)

namespace torch_tessera {

bool kineto_plugin_built() {
#ifdef TESSERA_KINETO_PLUGIN
  return true;
#else
  return false;
#endif
}

}  // namespace torch_tessera
