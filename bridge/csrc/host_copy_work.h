// The Work of a collective that HostCopyBackend ran on host copies of
// tessera tensors: it completes only once the host backend's work has
// finished and its results have been copied back into the tessera tensors.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <mutex>
#include <vector>

namespace torch_tessera {

// A host tensor whose contents go back into a tessera tensor once the
// host backend has written it.
struct CopyBack {
  at::Tensor tessera;
  at::Tensor host;
};

class HostCopyWork final : public c10d::Work {
 public:
  // `results` (tessera tensors) are the value of getFuture().
  HostCopyWork(c10::intrusive_ptr<c10d::Work> host_work, std::vector<CopyBack> copy_backs,
               std::vector<at::Tensor> results, int rank, c10d::OpType op_type);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  int sourceRank() const override;
  std::vector<at::Tensor> result() override;
  bool wait(std::chrono::milliseconds timeout) override;
  void abort() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  uint64_t getSequencenumber() const override;

 private:
  // Copies the results back and completes future_, at most once; for host
  // works without a future (gloo's send and recv), on the thread that
  // waits or polls.
  void finish_once();

  const c10::intrusive_ptr<c10d::Work> host_work_;
  const std::vector<CopyBack> copy_backs_;
  const std::vector<at::Tensor> results_;
  // Completed after the copy back: by a callback on the host work's future
  // where it has one (DDP's reducer waits on this future, never on wait()),
  // else by finish_once. It has no devices, so completing it records no
  // tessera events and waiting on it blocks no stream: none is needed, the
  // runtime's copies between host and device have finished on the device
  // when they return (copy_sync), so the results are there for every
  // stream. (Tessera events recorded and destroyed on gloo's thread while
  // another thread synchronized the same Vulkan stream crashed lavapipe.)
  const c10::intrusive_ptr<c10::ivalue::Future> future_;
  bool host_has_future_ = false;
  std::mutex finish_mutex_;
};

}  // namespace torch_tessera
