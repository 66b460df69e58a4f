#include "bridge/csrc/host_copy_work.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/util/Exception.h>

#include <utility>

namespace torch_tessera {
namespace {

// Writes the host results into their tessera tensors the way the host
// backend writes host memory: below autograd, so no version counter moves
// and no grad mode of the (gloo worker) thread matters.
void copy_back(const std::vector<CopyBack>& copy_backs) {
  const at::AutoDispatchBelowADInplaceOrView below_autograd;
  for (const CopyBack& c : copy_backs) {
    at::Tensor tessera = c.tessera;
    tessera.copy_(c.host);
  }
}

}  // namespace

HostCopyWork::HostCopyWork(c10::intrusive_ptr<c10d::Work> host_work, std::vector<CopyBack> copy_backs,
                           std::vector<at::Tensor> results, int rank, c10d::OpType op_type)
    : c10d::Work(rank, op_type),
      host_work_(std::move(host_work)),
      copy_backs_(std::move(copy_backs)),
      results_(std::move(results)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors())) {
  c10::intrusive_ptr<c10::ivalue::Future> host_future;
  try {
    host_future = host_work_->getFuture();
  } catch (const c10::Error&) {
    // gloo's send and recv works have no future; finish_once does the copy.
  }
  if (!host_future) return;
  host_has_future_ = true;
  // Runs on the host backend's worker thread when its work completes (or
  // here, if it already has).
  host_future->addCallback(
      [future = future_, copy_backs = copy_backs_, results = results_](c10::ivalue::Future& host) {
        if (host.hasError()) {
          future->setError(host.exception_ptr());
          return;
        }
        try {
          copy_back(copy_backs);
        } catch (...) {
          future->setError(std::current_exception());
          return;
        }
        future->markCompleted(c10::IValue(results));
      });
}

void HostCopyWork::finish_once() {
  const std::lock_guard<std::mutex> lock(finish_mutex_);
  if (future_->completed()) return;
  if (!host_work_->isSuccess()) {
    future_->setError(host_work_->exception());
    return;
  }
  try {
    copy_back(copy_backs_);
  } catch (...) {
    future_->setError(std::current_exception());
    return;
  }
  future_->markCompleted(c10::IValue(results_));
}

bool HostCopyWork::isCompleted() {
  if (!host_has_future_ && host_work_->isCompleted()) finish_once();
  return future_->completed();
}

bool HostCopyWork::isSuccess() const {
  return future_->completed() && !future_->hasError();
}

std::exception_ptr HostCopyWork::exception() const {
  return future_->completed() ? future_->exception_ptr() : nullptr;
}

int HostCopyWork::sourceRank() const {
  return host_work_->sourceRank();
}

std::vector<at::Tensor> HostCopyWork::result() {
  return results_;
}

bool HostCopyWork::wait(std::chrono::milliseconds timeout) {
  // The host work's wait raises its errors and honours the timeout; the
  // copy back that follows it takes no communication.
  if (!host_work_->wait(timeout)) return false;
  if (!host_has_future_) finish_once();
  future_->wait();
  if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
  return true;
}

void HostCopyWork::abort() {
  host_work_->abort();
}

c10::intrusive_ptr<c10::ivalue::Future> HostCopyWork::getFuture() {
  TORCH_CHECK(host_has_future_, "tessera ", c10d::opTypeToString(retrieveOpType()),
              ": this work has no future because its host (gloo) work has none "
              "(point-to-point ops); call wait() instead");
  return future_;
}

uint64_t HostCopyWork::getSequencenumber() const {
  return host_work_->getSequencenumber();
}

}  // namespace torch_tessera
