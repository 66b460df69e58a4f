// Events of the template device. Recording an event enqueues a marker task
// on the stream; the event is complete when the stream's worker reaches
// the marker, that is when every task enqueued on the stream before the
// record has run. A stream that waits for an event enqueues a task that
// blocks its worker until the marker is reached, which orders the two
// streams without involving the host thread (cudaStreamWaitEvent).
//
// Each record makes a new marker and the event points to the latest one,
// so re-recording an event never changes what earlier waits wait for, and
// destroying an event whose marker is still queued is safe (the stream's
// task shares the marker).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace tessera::template_device {

class TemplateStream;

// One record of an event: reached (with the time) when its task runs.
class StreamMarker {
 public:
  void reach();
  bool reached();
  // Waits at most `limit`; false on timeout.
  bool wait(std::chrono::milliseconds limit);
  std::chrono::steady_clock::time_point reached_at();  // after wait()

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool reached_ = false;
  std::chrono::steady_clock::time_point at_;
};

class TemplateEvent {
 public:
  // Marks the current end of `stream`.
  void record(TemplateStream& stream);
  // Work enqueued on `stream` after this waits for the latest record (a
  // no-op for an event never recorded, as in CUDA).
  void block(TemplateStream& stream);
  // Complete when never recorded, else when the latest record is reached.
  bool query();
  // Waits (bounded) for the latest record; DeviceError on timeout.
  void synchronize(const char* op);
  // Milliseconds from this event's latest record to end's, waiting for
  // both; ValueError when either was never recorded.
  double elapsed_ms(TemplateEvent& end);

 private:
  std::shared_ptr<StreamMarker> latest();

  std::mutex mutex_;
  std::shared_ptr<StreamMarker> latest_;  // null until the first record
};

}  // namespace tessera::template_device
