// ForeachCall: one call of a tessera._foreach_* op, its lists and numbers
// checked as they are added, then run on one of two routes (see
// ops_foreach_optimizer.cc): the runtime's multi-tensor op when the lists
// are plain, else the single-tensor op per entry, in order.
#pragma once

#include <functional>
#include <variant>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/foreach_ops.h"

namespace tessera_py {

using TensorList = std::vector<tessera::Tensor>;
using ScalarList = std::vector<tessera::Scalar>;

// Entry i's value of an operand on the per-entry route.
using EntryValue = std::variant<tessera::Tensor, tessera::Scalar>;

class ForeachCall;
// Sets each entry's inputs beyond `a` and its scalars; returns the op.
using Encode = std::function<tessera::PointwiseOpCode(const ForeachCall&,
                                                      std::vector<tessera::PointwiseEntry>&)>;
// Entry i on the single-tensor op: its result, or written into self[i].
using PerEntry = std::function<tessera::Tensor(const ForeachCall&, size_t)>;
using PerEntryInPlace = std::function<void(const ForeachCall&, size_t)>;

class ForeachCall {
 public:
  // op names the call in errors (it must outlive the call); self must not
  // be empty.
  ForeachCall(const char* op, const TensorList& self);

  // The operands after self, in the op's order; `what` names the argument
  // in errors.
  ForeachCall& list(const TensorList& tensors, const char* what);  // one tensor per entry
  ForeachCall& number(tessera::Scalar value);                        // one for every entry
  ForeachCall& numbers(const ScalarList& values, const char* what);  // one per entry
  // A 0-d tensor for every entry; one on another device counts as its value.
  ForeachCall& tensor(const tessera::Tensor& t);
  // The op's own number (alpha, addcmul's value): one, or one per entry.
  ForeachCall& arg(tessera::Scalar value);
  ForeachCall& args(const ScalarList& values, const char* what);

  const TensorList& self() const { return self_; }
  size_t size() const { return self_.size(); }
  // Whether operand k is a number or numbers.
  bool is_number(size_t k) const;
  // Entry i's operand k.
  EntryValue value(size_t k, size_t i) const;
  tessera::Tensor tensor_value(size_t k, size_t i) const;
  tessera::Scalar number_value(size_t k, size_t i) const;
  // Entry i's own number (1 when the op has none).
  tessera::Scalar arg_of(size_t i) const;

  // Operand k of every entry as a tensor on the list's device, of its
  // dtype: numbers become 0-d tensors (a list of them in one copy).
  TensorList tensors(size_t k) const;
  // A 0-d tensor of value for every entry.
  TensorList filled(tessera::Scalar value) const;

  // New tensors: the multi-tensor route when the lists are plain, else
  // per_entry(i) for each entry.
  TensorList run(const Encode& encode, const PerEntry& per_entry) const;
  // In place: the multi-tensor route when the lists are plain and no
  // entry writes memory another reads, else per_entry(i) in order.
  void run_(const Encode& encode, const PerEntryInPlace& per_entry) const;

 private:
  struct Operand {
    enum Kind { kList, kNumber, kNumbers, kTensor } kind;
    const TensorList* list = nullptr;
    tessera::Scalar number;
    ScalarList numbers;
    tessera::Tensor tensor;
  };

  // Every tensor on self[0]'s device, of its floating dtype, each list
  // entry of its self's shape, every number exact in that dtype.
  bool plain() const;

  const char* op_;
  const TensorList& self_;
  std::vector<Operand> operands_;
  ScalarList args_;
};

}  // namespace tessera_py
