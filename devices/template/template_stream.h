// A stream of the template device: a FIFO of tasks (copies, kernels, event
// records and waits) run in order by the stream's own worker thread.
//
// This is what makes the device asynchronous like a GPU: enqueue returns at
// once, the caller goes on while the worker runs the task, and the runtime
// sees the work complete only through query, synchronize and events. A
// vendor's stream replaces the worker by the hardware queue (a command
// buffer, a CUDA stream) and keeps the same guarantees:
//  - tasks of one stream run one at a time, in enqueue order; tasks of
//    different streams run concurrently;
//  - a task must not throw: a kernel checks its arguments on the caller's
//    thread before it enqueues. One that throws anyway is reported once,
//    by the next query or synchronize of the stream (as a GPU reports a
//    faulted kernel at the next sync);
//  - every wait is bounded (kWaitLimit), and waiting for a stream from its
//    own worker is an error instead of a deadlock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::template_device {

// How long any wait for the device may take before it is reported as a
// hung device (a DeviceError). Work on this device is host code, so
// reaching it means a task deadlocked, not that it was merely slow.
inline constexpr std::chrono::seconds kWaitLimit{300};

class TemplateStream {
 public:
  using Task = std::function<void()>;

  // `name` identifies the stream in messages ("template:0 stream 2").
  explicit TemplateStream(std::string name);
  // Runs every task still queued, then stops and joins the worker. Owners
  // call wait_idle first (bounded) and leak a stream that does not get
  // there, rather than block here forever.
  ~TemplateStream();
  TemplateStream(const TemplateStream&) = delete;
  TemplateStream& operator=(const TemplateStream&) = delete;

  // Appends a task; it runs after every task enqueued before it.
  void enqueue(Task task);

  // True when every task enqueued so far has run. Raises the failure of a
  // task since the last query or synchronize, if any (DeviceError).
  bool query();
  // Waits until every task enqueued so far has run; then as query. `op`
  // names the caller in errors.
  void synchronize(const char* op);
  // Waits at most `limit` for the queue to drain, reporting nothing: for
  // raw_free and destruction, which must not throw. False on timeout.
  bool wait_idle(std::chrono::milliseconds limit);

  // True on this stream's worker thread (a task is asking).
  bool on_worker_thread() const { return std::this_thread::get_id() == worker_.get_id(); }
  const std::string& name() const { return name_; }

 private:
  void run_worker();
  // Throws the pending task failure, if any, and clears it. Under mutex_.
  void raise_failure_locked(const char* op);

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable work_ready_;  // worker: a task was queued, or stop
  std::condition_variable drained_;     // waiters: the queue ran empty
  std::deque<Task> queue_;
  bool running_task_ = false;
  bool stopping_ = false;
  std::string failure_;  // the first failed task's message since the last report
  std::thread worker_;   // last: starts after the members it uses exist
};

}  // namespace tessera::template_device
