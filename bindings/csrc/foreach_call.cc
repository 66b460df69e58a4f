#include "bindings/csrc/foreach_call.h"

#include "runtime/core/error.h"
#include "runtime/core/half.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::DType;
using tessera::PointwiseEntry;
using tessera::PointwiseOpCode;
using tessera::Scalar;
using tessera::Tensor;
using tessera::TensorOptions;

// Whether the 0-d tensor of value in a list of dtype t holds value as the
// single-tensor ops use it (their compute type is float for 16-bit dtypes).
bool exact_in(DType t, Scalar value) {
  const float f = static_cast<float>(value.to<double>());
  if (t == DType::kF16) return static_cast<float>(tessera::Half(f)) == f;
  if (t == DType::kBF16) return static_cast<float>(tessera::BFloat16(f)) == f;
  return true;
}

}  // namespace

ForeachCall::ForeachCall(const char* op, const TensorList& self) : op_(op), self_(self) {
  TESSERA_CHECK(!self.empty(), ValueError, op, ": expected a non-empty list of tensors");
  for (size_t i = 0; i < self.size(); ++i) {
    TESSERA_CHECK(self[i].defined(), ValueError, op, ": tensor ", i, " is undefined");
  }
}

ForeachCall& ForeachCall::list(const TensorList& tensors, const char* what) {
  TESSERA_CHECK(tensors.size() == size(), ValueError, op_, ": expected ", size(), " tensors in ",
                what, " (one per entry of self), got ", tensors.size());
  Operand o{Operand::kList};
  o.list = &tensors;
  operands_.push_back(std::move(o));
  return *this;
}

ForeachCall& ForeachCall::number(Scalar value) {
  Operand o{Operand::kNumber};
  o.number = value;
  operands_.push_back(std::move(o));
  return *this;
}

ForeachCall& ForeachCall::numbers(const ScalarList& values, const char* what) {
  TESSERA_CHECK(values.size() == size(), ValueError, op_, ": expected ", size(), " numbers in ",
                what, " (one per entry of self), got ", values.size());
  Operand o{Operand::kNumbers};
  o.numbers = values;
  operands_.push_back(std::move(o));
  return *this;
}

ForeachCall& ForeachCall::tensor(const Tensor& t) {
  TESSERA_CHECK(t.dim() == 0, ValueError, op_, ": expected a 0-d tensor operand, got ",
                tessera::describe(t));
  if (t.device() != self_[0].device()) return number(t.item());
  Operand o{Operand::kTensor};
  o.tensor = t;
  operands_.push_back(std::move(o));
  return *this;
}

ForeachCall& ForeachCall::arg(Scalar value) {
  args_.assign(size(), value);
  return *this;
}

ForeachCall& ForeachCall::args(const ScalarList& values, const char* what) {
  TESSERA_CHECK(values.size() == size(), ValueError, op_, ": expected ", size(), " numbers in ",
                what, " (one per entry of self), got ", values.size());
  args_ = values;
  return *this;
}

bool ForeachCall::is_number(size_t k) const {
  return operands_[k].kind == Operand::kNumber || operands_[k].kind == Operand::kNumbers;
}

EntryValue ForeachCall::value(size_t k, size_t i) const {
  const Operand& o = operands_[k];
  switch (o.kind) {
    case Operand::kList: return (*o.list)[i];
    case Operand::kNumber: return o.number;
    case Operand::kNumbers: return o.numbers[i];
    case Operand::kTensor: return o.tensor;
  }
  return o.number;
}

Tensor ForeachCall::tensor_value(size_t k, size_t i) const {
  return std::get<Tensor>(value(k, i));
}

Scalar ForeachCall::number_value(size_t k, size_t i) const {
  return std::get<Scalar>(value(k, i));
}

Scalar ForeachCall::arg_of(size_t i) const { return args_.empty() ? Scalar(1) : args_[i]; }

TensorList ForeachCall::tensors(size_t k) const {
  const Operand& o = operands_[k];
  switch (o.kind) {
    case Operand::kList: return *o.list;
    case Operand::kTensor: return TensorList(size(), o.tensor);
    case Operand::kNumber: return filled(o.number);
    case Operand::kNumbers: break;
  }
  Tensor host = tessera::empty({static_cast<int64_t>(size())},
                               TensorOptions(DType::kF64, tessera::host_device()));
  for (size_t i = 0; i < size(); ++i) host.data<double>()[i] = o.numbers[i].to<double>();
  const Tensor all = host.to(self_[0].device(), self_[0].dtype());
  TensorList out;
  for (size_t i = 0; i < size(); ++i) out.push_back(all.select(0, static_cast<int64_t>(i)));
  return out;
}

TensorList ForeachCall::filled(Scalar value) const {
  const TensorOptions options(self_[0].dtype(), self_[0].device());
  return TensorList(size(), tessera::full({}, value, options));
}

TensorList ForeachCall::run(const Encode& encode, const PerEntry& per_entry) const {
  TensorList out;
  if (!plain()) {
    for (size_t i = 0; i < size(); ++i) out.push_back(per_entry(*this, i));
    return out;
  }
  std::vector<PointwiseEntry> entries(size());
  for (size_t i = 0; i < size(); ++i) {
    entries[i].out = tessera::empty(self_[i].sizes(),
                                    TensorOptions(self_[i].dtype(), self_[i].device()));
    entries[i].a = self_[i];
  }
  const PointwiseOpCode code = encode(*this, entries);
  tessera::foreach_pointwise(op_, code, entries);
  for (const PointwiseEntry& e : entries) out.push_back(e.out);
  return out;
}

void ForeachCall::run_(const Encode& encode, const PerEntryInPlace& per_entry) const {
  if (plain()) {
    std::vector<PointwiseEntry> entries(size());
    for (size_t i = 0; i < size(); ++i) entries[i].out = entries[i].a = self_[i];
    const PointwiseOpCode code = encode(*this, entries);
    if (tessera::foreach_entries_independent(entries)) {
      tessera::foreach_pointwise(op_, code, entries);
      return;
    }
  }
  for (size_t i = 0; i < size(); ++i) per_entry(*this, i);
}

bool ForeachCall::plain() const {
  const Tensor& first = self_[0];
  if (!tessera::is_floating(first.dtype())) return false;
  auto same = [&](const Tensor& t) {
    return t.defined() && t.device() == first.device() && t.dtype() == first.dtype();
  };
  for (const Tensor& t : self_) {
    if (!same(t)) return false;
  }
  for (const Operand& o : operands_) {
    switch (o.kind) {
      case Operand::kList:
        for (size_t i = 0; i < size(); ++i) {
          if (!same((*o.list)[i]) || (*o.list)[i].sizes() != self_[i].sizes()) return false;
        }
        break;
      case Operand::kTensor:
        if (!same(o.tensor)) return false;
        break;
      case Operand::kNumber:
        if (!exact_in(first.dtype(), o.number)) return false;
        break;
      case Operand::kNumbers:
        for (const Scalar& s : o.numbers) {
          if (!exact_in(first.dtype(), s)) return false;
        }
        break;
    }
  }
  return true;
}

}  // namespace tessera_py
