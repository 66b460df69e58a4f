#include "bridge/csrc/host_copy_backend.h"

#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include <functional>
#include <utility>

#include "bridge/csrc/host_copy_work.h"

namespace torch_tessera {
namespace {

// The tensors of one collective, named for error messages ("input",
// "output[1][0]"), which must all live on one tessera device.
class CollectiveTensors {
 public:
  explicit CollectiveTensors(const char* op) : op_(op) {}

  CollectiveTensors& add(const char* role, const at::Tensor& t) {
    entries_.push_back({role, t});
    return *this;
  }
  CollectiveTensors& add(const char* role, const std::vector<at::Tensor>& ts) {
    for (size_t i = 0; i < ts.size(); ++i) entries_.push_back({c10::str(role, "[", i, "]"), ts[i]});
    return *this;
  }
  // The outer list has one entry per input tensor, and torch passes one:
  // the inner index is the one users know (all_gather's output list).
  CollectiveTensors& add(const char* role, const std::vector<std::vector<at::Tensor>>& ts) {
    if (ts.size() == 1) return add(role, ts[0]);
    for (size_t i = 0; i < ts.size(); ++i) {
      for (size_t j = 0; j < ts[i].size(); ++j) {
        entries_.push_back({c10::str(role, "[", i, "][", j, "]"), ts[i][j]});
      }
    }
    return *this;
  }

  // torch sends a collective here when its tensors include a tessera
  // tensor; the others must be on that same device, not the CPU (which
  // would be a mix gloo itself rejects) nor another tessera device.
  void check_one_device() const {
    const Entry* tessera = nullptr;
    for (const Entry& e : entries_) {
      if (e.tensor.device().is_privateuseone()) {
        tessera = &e;
        break;
      }
    }
    TORCH_CHECK(tessera != nullptr, "tessera ", op_, ": none of its tensors is a tessera tensor");
    for (const Entry& e : entries_) {
      TORCH_CHECK(e.tensor.device() == tessera->tensor.device(), "tessera ", op_,
                  ": the tensors of one collective must all be on one tessera device (it runs on "
                  "host copies of them), got ",
                  describe(*tessera), " and ", describe(e));
    }
  }

 private:
  struct Entry {
    std::string name;
    at::Tensor tensor;
  };

  static std::string describe(const Entry& e) {
    return c10::str(e.name, " on ", e.tensor.device(), " (", e.tensor.scalar_type(), " ",
                    e.tensor.sizes(), ")");
  }

  const char* op_;
  std::vector<Entry> entries_;
};

// Host copies of one collective's tensors, and which of them go back.
// Copies run below autograd: the host backend reads and writes memory, it
// does not record ops or bump version counters.
class HostStaging {
 public:
  // A tensor the collective only reads: copied to the host now.
  at::Tensor read(const at::Tensor& t) { return to_host(t); }
  // A tensor it only writes: a host buffer, copied back on completion.
  at::Tensor write(const at::Tensor& t) {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
    copy_backs_.push_back({t, host});
    return host;
  }
  // A tensor it reads and overwrites (all_reduce, broadcast).
  at::Tensor read_write(const at::Tensor& t) {
    at::Tensor host = to_host(t);
    copy_backs_.push_back({t, host});
    return host;
  }

  template <typename F>
  std::vector<at::Tensor> each(const std::vector<at::Tensor>& ts, F stage) {
    std::vector<at::Tensor> out;
    out.reserve(ts.size());
    for (const at::Tensor& t : ts) out.push_back((this->*stage)(t));
    return out;
  }
  template <typename F>
  std::vector<std::vector<at::Tensor>> each(const std::vector<std::vector<at::Tensor>>& ts, F stage) {
    std::vector<std::vector<at::Tensor>> out;
    out.reserve(ts.size());
    for (const std::vector<at::Tensor>& inner : ts) out.push_back(each(inner, stage));
    return out;
  }

  std::vector<CopyBack> take_copy_backs() { return std::move(copy_backs_); }

 private:
  static at::Tensor to_host(const at::Tensor& t) {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::Tensor host = at::empty(t.sizes(), t.options().device(at::kCPU));
    host.copy_(t);
    return host;
  }

  std::vector<CopyBack> copy_backs_;
};

std::vector<at::Tensor> flatten(const std::vector<std::vector<at::Tensor>>& ts) {
  std::vector<at::Tensor> out;
  for (const std::vector<at::Tensor>& inner : ts) out.insert(out.end(), inner.begin(), inner.end());
  return out;
}

// The OpType that reduce_scatter_tensor_coalesced's work reports: torch
// 2.11 has no REDUCE_SCATTER_TENSOR_COALESCED, only the generic COALESCED.
template <typename OpType = c10d::OpType>
constexpr OpType reduce_scatter_coalesced_op_type() {
  if constexpr (requires { OpType::REDUCE_SCATTER_TENSOR_COALESCED; }) {
    return OpType::REDUCE_SCATTER_TENSOR_COALESCED;
  } else {
    return OpType::COALESCED;
  }
}

// Starts a collective on the host backend, with the host tensors.
using HostStart = std::function<c10::intrusive_ptr<c10d::Work>(c10d::Backend& host)>;

// Starts the host collective and wraps its work. Errors the host backend
// raises as it starts (sizes that do not fit) keep their type and message,
// with a line saying that tessera ran it on host copies; those it finds as
// it runs (a ReduceOp gloo lacks) come from wait() as gloo raised them.
c10::intrusive_ptr<c10d::Work> run_on_host(const c10::intrusive_ptr<c10d::Backend>& host, const char* op,
                                           c10d::OpType op_type, HostStaging& staging,
                                           std::vector<at::Tensor> results, const HostStart& start) {
  c10::intrusive_ptr<c10d::Work> host_work;
  try {
    host_work = start(*host);
  } catch (c10::Error& e) {
    e.add_context(c10::str("tessera ", op, " runs this ", host->getBackendName(),
                           " collective on host copies of tessera tensors"));
    throw;
  }
  return c10::make_intrusive<HostCopyWork>(std::move(host_work), staging.take_copy_backs(),
                                           std::move(results), host->getRank(), op_type);
}

}  // namespace

HostCopyBackend::HostCopyBackend(c10::intrusive_ptr<c10d::Backend> host)
    : c10d::Backend(host->getRank(), host->getSize()), host_(std::move(host)) {}

c10::intrusive_ptr<c10d::Backend> HostCopyBackend::host() const {
  const std::lock_guard<std::mutex> lock(host_mutex_);
  return host_;
}

void HostCopyBackend::share_host(c10::intrusive_ptr<c10d::Backend> host) {
  TORCH_CHECK(host->getRank() == getRank() && host->getSize() == getSize(),
              "tessera backend: the shared host backend is rank ", host->getRank(), " of ", host->getSize(),
              ", this group's rank ", getRank(), " of ", getSize());
  const std::lock_guard<std::mutex> lock(host_mutex_);
  if (!replaced_host_) replaced_host_ = host_;
  host_ = std::move(host);
}

c10::intrusive_ptr<c10d::Backend::Options> HostCopyBackend::getBackendOptions() {
  return host()->getBackendOptions();
}

void HostCopyBackend::setTimeout(std::chrono::milliseconds timeout) {
  host()->setTimeout(timeout);
}

void HostCopyBackend::setGroupUid(const std::string& pg_uid) {
  c10d::Backend::setGroupUid(pg_uid);
  host()->setGroupUid(pg_uid);
}

void HostCopyBackend::setSequenceNumberForGroup() {
  host()->setSequenceNumberForGroup();
}

uint64_t HostCopyBackend::getSequenceNumberForGroup() {
  return host()->getSequenceNumberForGroup();
}

void HostCopyBackend::enableCollectivesTiming() {
  host()->enableCollectivesTiming();
}

c10d::ErrorType HostCopyBackend::getError() {
  return host()->getError();
}

void HostCopyBackend::abort() {
  host()->abort();
}

void HostCopyBackend::shutdown() {
  host()->shutdown();
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                          const c10d::BroadcastOptions& opts) {
  const char* op = "broadcast";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::read_write);
  return run_on_host(host(), op, c10d::OpType::BROADCAST, staging, tensors,
                     [&](c10d::Backend& host) { return host.broadcast(staged, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::AllreduceOptions& opts) {
  const char* op = "all_reduce";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::read_write);
  return run_on_host(host(), op, c10d::OpType::ALLREDUCE, staging, tensors,
                     [&](c10d::Backend& host) { return host.allreduce(staged, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  const char* op = "all_reduce_coalesced";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::read_write);
  return run_on_host(host(), op, c10d::OpType::ALLREDUCE_COALESCED, staging, tensors,
                     [&](c10d::Backend& host) { return host.allreduce_coalesced(staged, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::reduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::ReduceOptions& opts) {
  const char* op = "reduce";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::read_write);
  return run_on_host(host(), op, c10d::OpType::REDUCE, staging, tensors,
                     [&](c10d::Backend& host) { return host.reduce(staged, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllgatherOptions& opts) {
  const char* op = "all_gather";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<std::vector<at::Tensor>> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::ALLGATHER, staging, flatten(outputs),
                     [&](c10d::Backend& host) { return host.allgather(host_outputs, host_inputs, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                const c10d::AllgatherOptions& opts) {
  const char* op = "all_gather_into_tensor";
  CollectiveTensors(op).add("output", output).add("input", input).check_one_device();
  HostStaging staging;
  at::Tensor host_input = staging.read(input);
  at::Tensor host_output = staging.write(output);
  return run_on_host(host(), op, c10d::OpType::_ALLGATHER_BASE, staging, {output},
                     [&](c10d::Backend& host) {
                       return host._allgather_base(host_output, host_input, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  const char* op = "all_gather_coalesced";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<std::vector<at::Tensor>> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::ALLGATHER_COALESCED, staging, flatten(outputs),
                     [&](c10d::Backend& host) {
                       return host.allgather_coalesced(host_outputs, host_inputs, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  const char* op = "all_gather_into_tensor_coalesced";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<at::Tensor> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::COALESCED, staging, outputs,
                     [&](c10d::Backend& host) {
                       return host.allgather_into_tensor_coalesced(host_outputs, host_inputs, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                       std::vector<at::Tensor>& inputs,
                                                       const c10d::GatherOptions& opts) {
  const char* op = "gather";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<std::vector<at::Tensor>> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::GATHER, staging, flatten(outputs),
                     [&](c10d::Backend& host) { return host.gather(host_outputs, host_inputs, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::scatter(std::vector<at::Tensor>& outputs,
                                                        std::vector<std::vector<at::Tensor>>& inputs,
                                                        const c10d::ScatterOptions& opts) {
  const char* op = "scatter";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<std::vector<at::Tensor>> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<at::Tensor> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::SCATTER, staging, outputs,
                     [&](c10d::Backend& host) { return host.scatter(host_outputs, host_inputs, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                               std::vector<std::vector<at::Tensor>>& inputs,
                                                               const c10d::ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<std::vector<at::Tensor>> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<at::Tensor> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::REDUCE_SCATTER, staging, outputs,
                     [&](c10d::Backend& host) {
                       return host.reduce_scatter(host_outputs, host_inputs, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter_tensor";
  CollectiveTensors(op).add("output", output).add("input", input).check_one_device();
  HostStaging staging;
  at::Tensor host_input = staging.read(input);
  at::Tensor host_output = staging.write(output);
  return run_on_host(host(), op, c10d::OpType::_REDUCE_SCATTER_BASE, staging, {output},
                     [&](c10d::Backend& host) {
                       return host._reduce_scatter_base(host_output, host_input, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter_tensor_coalesced";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<at::Tensor> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, reduce_scatter_coalesced_op_type(), staging, outputs,
                     [&](c10d::Backend& host) {
                       return host.reduce_scatter_tensor_coalesced(host_outputs, host_inputs, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                              std::vector<int64_t>& output_split_sizes,
                                                              std::vector<int64_t>& input_split_sizes,
                                                              const c10d::AllToAllOptions& opts) {
  const char* op = "all_to_all_single";
  CollectiveTensors(op).add("output", output).add("input", input).check_one_device();
  HostStaging staging;
  at::Tensor host_input = staging.read(input);
  at::Tensor host_output = staging.write(output);
  return run_on_host(host(), op, c10d::OpType::ALLTOALL_BASE, staging, {output},
                     [&](c10d::Backend& host) {
                       return host.alltoall_base(host_output, host_input, output_split_sizes,
                                                 input_split_sizes, opts);
                     });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::AllToAllOptions& opts) {
  const char* op = "all_to_all";
  CollectiveTensors(op).add("output", outputs).add("input", inputs).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> host_inputs = staging.each(inputs, &HostStaging::read);
  std::vector<at::Tensor> host_outputs = staging.each(outputs, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::ALLTOALL, staging, outputs,
                     [&](c10d::Backend& host) { return host.alltoall(host_outputs, host_inputs, opts); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::send(std::vector<at::Tensor>& tensors, int dst_rank,
                                                     int tag) {
  const char* op = "send";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::read);
  return run_on_host(host(), op, c10d::OpType::SEND, staging, {},
                     [&](c10d::Backend& host) { return host.send(staged, dst_rank, tag); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::recv(std::vector<at::Tensor>& tensors, int src_rank,
                                                     int tag) {
  const char* op = "recv";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::RECV, staging, tensors,
                     [&](c10d::Backend& host) { return host.recv(staged, src_rank, tag); });
}

c10::intrusive_ptr<c10d::Work> HostCopyBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  const char* op = "recv";
  CollectiveTensors(op).add("tensor", tensors).check_one_device();
  HostStaging staging;
  std::vector<at::Tensor> staged = staging.each(tensors, &HostStaging::write);
  return run_on_host(host(), op, c10d::OpType::RECVANYSOURCE, staging, tensors,
                     [&](c10d::Backend& host) { return host.recvAnysource(staged, tag); });
}

// No tensors to move: the host's barrier is the group's.
c10::intrusive_ptr<c10d::Work> HostCopyBackend::barrier(const c10d::BarrierOptions& opts) {
  return host()->barrier(opts);
}

void HostCopyBackend::monitoredBarrier(const c10d::BarrierOptions& opts, bool wait_all_ranks) {
  host()->monitoredBarrier(opts, wait_all_ranks);
}

}  // namespace torch_tessera
