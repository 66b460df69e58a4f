#include "devices/template/template_stream.h"

#include <exception>
#include <utility>

#include "runtime/core/error.h"

namespace tessera::template_device {

TemplateStream::TemplateStream(std::string name)
    : name_(std::move(name)), worker_([this] { run_worker(); }) {}

TemplateStream::~TemplateStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  worker_.join();  // the worker empties the queue before it returns
}

void TemplateStream::enqueue(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  work_ready_.notify_one();
}

bool TemplateStream::query() {
  std::lock_guard<std::mutex> lock(mutex_);
  raise_failure_locked("query_stream");
  return queue_.empty() && !running_task_;
}

void TemplateStream::synchronize(const char* op) {
  // From the worker, the wait below would wait for the task doing it.
  TESSERA_CHECK(!on_worker_thread(), DeviceError, "template ", op, ": ", name_,
                " was asked to wait for itself by one of its own tasks (a deadlock)");
  std::unique_lock<std::mutex> lock(mutex_);
  const bool drained =
      drained_.wait_for(lock, kWaitLimit, [this] { return queue_.empty() && !running_task_; });
  TESSERA_CHECK(drained, DeviceError, "template ", op, ": ", name_, " did not finish its ",
                queue_.size() + (running_task_ ? 1 : 0), " queued tasks within ",
                kWaitLimit.count(), " s (a task is hung)");
  raise_failure_locked(op);
}

bool TemplateStream::wait_idle(std::chrono::milliseconds limit) {
  if (on_worker_thread()) return false;
  std::unique_lock<std::mutex> lock(mutex_);
  return drained_.wait_for(lock, limit, [this] { return queue_.empty() && !running_task_; });
}

void TemplateStream::raise_failure_locked(const char* op) {
  if (failure_.empty()) return;
  std::string failure = std::move(failure_);
  failure_.clear();
  throw DeviceError("template " + std::string(op) + ": a task on " + name_ + " failed: " + failure);
}

void TemplateStream::run_worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    running_task_ = true;
    lock.unlock();
    std::string failure;
    try {
      task();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "a non-standard exception";
    }
    task = nullptr;  // what the task captured is released outside the lock
    lock.lock();
    running_task_ = false;
    if (!failure.empty() && failure_.empty()) failure_ = std::move(failure);
    if (queue_.empty()) drained_.notify_all();
  }
}

}  // namespace tessera::template_device
