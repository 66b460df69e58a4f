// The connectionist temporal classification loss (nn.CTCLoss, F.ctc_loss):
// aten::_ctc_loss and aten::_ctc_loss_backward (and their .Tensor forms,
// whose lengths are tensors), composed of tessera ops so that they run on
// whichever device holds log_probs. The results are PyTorch's CPU
// kernel's (aten/src/ATen/native/LossCTC.cpp, after Graves et al. 2006).
//
// Each sample n aligns its target l (L_n labels) with its first T_n time
// steps through the extended target l' = (blank, l_1, blank, ..., l_L,
// blank) of 2 L_n + 1 states. The forward variables
//   alpha_t(s) = log sum over the prefixes of the alignments that are in
//                state s at time t,
// and the backward variables beta_t(s) (the suffixes, from t on) are
// computed for the whole batch and every state at once: one logsumexp of
// a state's predecessors (s, s - 1, and s - 2 where l'_s is a label other
// than l'_{s-2}) per time step, with the states padded to the longest
// target. A sample's lattice is t < T_n, s < 2 L_n + 1; outside it the
// variables are -inf.
//
// The host reads the targets once (to build l' and to check that they are
// classes) and the length tensors of the .Tensor forms.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The batch's shapes and lengths on the host, and on the device the
// tensors both recursions index (S = 2 * max(target_lengths) + 1 states).
struct Lattice {
  int64_t max_time = 0;  // T: log_probs.size(0)
  int64_t batch = 0;     // N
  int64_t classes = 0;   // C
  int64_t states = 0;    // S
  int64_t steps = 0;     // max(input_lengths): the recursions stop there
  std::vector<int64_t> input_lengths, target_lengths;

  at::Tensor labels;           // [N, S] int64: l', blank past 2 L_n
  at::Tensor state_log_probs;  // [T, N, S]: log_probs[t, n, l'_s]
  at::Tensor skip_into;        // [N, S]: 0 where state s may be entered from s - 2, -inf elsewhere
  at::Tensor skip_from;        // [N, S]: 0 where state s + 2 may be entered from s, -inf elsewhere
  at::Tensor first_states;     // [N, S]: 0 at the states an alignment starts in (0, and 1 if L_n > 0)
  at::Tensor last_states;      // [N, S]: 0 at those it ends in (2 L_n, and 2 L_n - 1 if L_n > 0)
  at::Tensor last_time;        // [N] int64: max(T_n - 1, 0)
  at::Tensor input_lengths_device;  // [N] int64
  at::Tensor inside;           // [T, N, S] bool: t < T_n and s < 2 L_n + 1
};

std::vector<int64_t> host_lengths(const char* op, const char* name, const at::Tensor& lengths) {
  TORCH_CHECK(at::isIntegralType(lengths.scalar_type(), /*includeBool=*/false), op, ": ", name,
              " must be integral, got ", lengths.scalar_type(), " ", lengths.sizes());
  const at::Tensor host = lengths.to(at::kCPU, at::kLong).contiguous();
  const int64_t* data = host.const_data_ptr<int64_t>();
  return std::vector<int64_t>(data, data + host.numel());
}

// A host vector as a device tensor of `shape` with `options`.
template <typename T>
at::Tensor upload(const std::vector<T>& values, at::IntArrayRef shape,
                  const at::TensorOptions& options) {
  return at::tensor(at::ArrayRef<T>(values)).view(shape).to(options);
}

// The targets as a [N, max L_n] host table of classes (padded with blank),
// checked to be classes of log_probs.
std::vector<int64_t> target_table(const char* op, const at::Tensor& log_probs,
                                  const at::Tensor& targets, const Lattice& lat, int64_t blank,
                                  int64_t max_target) {
  const int64_t n_batch = lat.batch;
  // Where each sample's labels begin in the contiguous host copy.
  std::vector<int64_t> offsets(static_cast<size_t>(n_batch));
  if (targets.dim() == 1) {  // concatenated
    int64_t total = 0;
    for (int64_t n = 0; n < n_batch; ++n) {
      offsets[n] = total;
      total += lat.target_lengths[n];
    }
    TORCH_CHECK(targets.size(0) == total, op, ": concatenated targets ", targets.sizes(),
                " must hold sum(target_lengths) = ", total, " labels");
  } else {  // [N, at least max L_n], padded
    TORCH_CHECK(targets.size(0) == n_batch && targets.size(1) >= max_target, op,
                ": padded targets must be [batch_size ", n_batch,
                ", at least max(target_lengths) ", max_target, "], got ", targets.sizes());
    for (int64_t n = 0; n < n_batch; ++n) offsets[n] = n * targets.size(1);
  }
  const at::Tensor host = targets.to(at::kCPU, at::kLong).contiguous();
  const int64_t* data = host.const_data_ptr<int64_t>();
  std::vector<int64_t> table(static_cast<size_t>(n_batch * max_target), blank);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t k = 0; k < lat.target_lengths[n]; ++k) {
      const int64_t label = data[offsets[n] + k];
      TORCH_CHECK(label >= 0 && label < lat.classes, op, ": target ", k, " of sample ", n, " is ",
                  label, ", not a class of log_probs ", log_probs.sizes(), " (expected [0, ",
                  lat.classes, "))");
      table[n * max_target + k] = label;
    }
  }
  return table;
}

// Checks the arguments as PyTorch's CPU kernel does (and the target
// classes, which it does not) and builds the lattice.
Lattice make_lattice(const char* op, const at::Tensor& log_probs, const at::Tensor& targets,
                     at::IntArrayRef input_lengths, at::IntArrayRef target_lengths,
                     int64_t blank) {
  TORCH_CHECK(log_probs.scalar_type() == at::kFloat || log_probs.scalar_type() == at::kDouble, op,
              ": log_probs must be float32 or float64 (as on the CPU), got ",
              log_probs.scalar_type());
  TORCH_CHECK(log_probs.dim() == 3, op, ": log_probs must be [time, batch, classes], got ",
              log_probs.sizes());
  TORCH_CHECK(log_probs.numel() > 0, op, ": log_probs tensor must not be empty, got ",
              log_probs.sizes());
  TORCH_CHECK(targets.scalar_type() == at::kLong || targets.scalar_type() == at::kInt, op,
              ": targets must be int64 or int32, got ", targets.scalar_type());
  TORCH_CHECK(targets.dim() == 1 || targets.dim() == 2, op,
              ": targets must be 1-D (concatenated) or [batch, max target length] (padded), got ",
              targets.sizes());
  TORCH_CHECK(targets.device() == log_probs.device() || targets.device().is_cpu(), op,
              ": targets on ", targets.device(), " and log_probs on ", log_probs.device());
  Lattice lat;
  lat.max_time = log_probs.size(0);
  lat.batch = log_probs.size(1);
  lat.classes = log_probs.size(2);
  TORCH_CHECK(blank >= 0 && blank < lat.classes, op, ": blank must be in label range [0, ",
              lat.classes, ") of log_probs ", log_probs.sizes(), ", got ", blank);
  TORCH_CHECK(static_cast<int64_t>(input_lengths.size()) == lat.batch, op,
              ": input_lengths must be of size batch_size ", lat.batch, " (log_probs ",
              log_probs.sizes(), "), got ", input_lengths.size(), " lengths");
  TORCH_CHECK(static_cast<int64_t>(target_lengths.size()) == lat.batch, op,
              ": target_lengths must be of size batch_size ", lat.batch, " (log_probs ",
              log_probs.sizes(), "), got ", target_lengths.size(), " lengths");
  lat.input_lengths = input_lengths.vec();
  lat.target_lengths = target_lengths.vec();
  int64_t max_target = 0;
  for (int64_t n = 0; n < lat.batch; ++n) {
    TORCH_CHECK(input_lengths[n] >= 0 && input_lengths[n] <= lat.max_time, op,
                ": input_lengths[", n, "] = ", input_lengths[n], " must be in [0, ",
                lat.max_time, "] for log_probs ", log_probs.sizes());
    TORCH_CHECK(target_lengths[n] >= 0, op, ": target_lengths[", n, "] = ", target_lengths[n],
                " must be at least 0");
    max_target = std::max(max_target, target_lengths[n]);
    lat.steps = std::max(lat.steps, input_lengths[n]);
  }
  lat.states = 2 * max_target + 1;
  const std::vector<int64_t> table =
      target_table(op, log_probs, targets, lat, blank, max_target);

  // l' and the masks of the allowed starts, ends and skips, on the host.
  const int64_t n_batch = lat.batch, states = lat.states;
  const size_t size = static_cast<size_t>(n_batch * states);
  std::vector<int64_t> labels(size, blank);
  std::vector<double> skip_into(size, kNegInf), skip_from(size, kNegInf);
  std::vector<double> first(size, kNegInf), last(size, kNegInf);
  std::vector<int64_t> last_time(static_cast<size_t>(n_batch));
  for (int64_t n = 0; n < n_batch; ++n) {
    const int64_t length = lat.target_lengths[n], row = n * states;
    for (int64_t k = 0; k < length; ++k) labels[row + 2 * k + 1] = table[n * max_target + k];
    // Skipping the blank between two labels is allowed when they differ.
    for (int64_t s = 3; s < 2 * length + 1; s += 2) {
      if (labels[row + s] != labels[row + s - 2]) skip_into[row + s] = skip_from[row + s - 2] = 0;
    }
    first[row] = last[row + 2 * length] = 0;
    if (length > 0) first[row + 1] = last[row + 2 * length - 1] = 0;
    last_time[n] = std::max<int64_t>(lat.input_lengths[n] - 1, 0);
  }

  const at::TensorOptions values = log_probs.options();
  const at::TensorOptions indices = values.dtype(at::kLong);
  lat.labels = upload(labels, {n_batch, states}, indices);
  lat.state_log_probs =
      log_probs.gather(2, lat.labels.unsqueeze(0).expand({lat.max_time, n_batch, states}));
  lat.skip_into = upload(skip_into, {n_batch, states}, values);
  lat.skip_from = upload(skip_from, {n_batch, states}, values);
  lat.first_states = upload(first, {n_batch, states}, values);
  lat.last_states = upload(last, {n_batch, states}, values);
  lat.last_time = upload(last_time, {n_batch}, indices);
  lat.input_lengths_device = upload(lat.input_lengths, {n_batch}, indices);
  const at::Tensor state_ends = upload(lat.target_lengths, {n_batch}, indices) * 2 + 1;
  lat.inside = (at::arange(lat.max_time, indices).view({-1, 1, 1}) <
                lat.input_lengths_device.view({1, -1, 1})) &
               (at::arange(states, indices).view({1, 1, -1}) < state_ends.view({1, -1, 1}));
  return lat;
}

// The rows of the first `lat.steps` time steps as [T, N, S], -inf past them.
at::Tensor stack_time(const std::vector<at::Tensor>& rows, const Lattice& lat,
                      const at::TensorOptions& options) {
  const int64_t rest = lat.max_time - static_cast<int64_t>(rows.size());
  const at::Tensor unreached = at::full({rest, lat.batch, lat.states}, kNegInf, options);
  if (rows.empty()) return unreached;
  const at::Tensor reached = at::stack(rows, 0);
  return rest == 0 ? reached : at::cat({reached, unreached}, 0);
}

// log alpha as [T, N, S]: alpha_0 = the start states; then each state sums
// the alignments that stay in it, come from s - 1, or skip from s - 2.
at::Tensor forward_variables(const Lattice& lat, const at::TensorOptions& options) {
  // Two -inf states before state 0, so that s - 1 and s - 2 are views.
  const at::Tensor before = at::full({lat.batch, 2}, kNegInf, options);
  std::vector<at::Tensor> rows;
  rows.reserve(static_cast<size_t>(lat.steps));
  if (lat.steps > 0) rows.push_back(lat.first_states + lat.state_log_probs[0]);
  for (int64_t t = 1; t < lat.steps; ++t) {
    const at::Tensor previous = at::cat({before, rows.back()}, 1);
    const at::Tensor stay = previous.narrow(1, 2, lat.states);
    const at::Tensor advance = previous.narrow(1, 1, lat.states);
    const at::Tensor skip = previous.narrow(1, 0, lat.states) + lat.skip_into;
    rows.push_back(at::stack({stay, advance, skip}, 2).logsumexp(2) + lat.state_log_probs[t]);
  }
  return at::where(lat.inside, stack_time(rows, lat, options), kNegInf);
}

// log beta as [T, N, S], computed backwards: each sample's beta begins at
// its last step T_n - 1 in the end states; before that each state sums the
// alignments that stay in it, go on to s + 1, or skip to s + 2.
at::Tensor backward_variables(const Lattice& lat, const at::TensorOptions& options) {
  const at::Tensor begins = at::arange(lat.max_time, options.dtype(at::kLong)).view({-1, 1, 1}) ==
                            lat.last_time.view({1, -1, 1});
  const at::Tensor start = at::where(begins & (lat.input_lengths_device.view({1, -1, 1}) > 0),
                                     lat.last_states.unsqueeze(0), kNegInf);  // [T, N, S]
  // Two -inf states after the last, so that s + 1 and s + 2 are views.
  const at::Tensor after = at::full({lat.batch, 2}, kNegInf, options);
  std::vector<at::Tensor> rows(static_cast<size_t>(lat.steps));
  at::Tensor next = at::full({lat.batch, lat.states + 2}, kNegInf, options);
  for (int64_t t = lat.steps - 1; t >= 0; --t) {
    const at::Tensor stay = next.narrow(1, 0, lat.states);
    const at::Tensor advance = next.narrow(1, 1, lat.states);
    const at::Tensor skip = next.narrow(1, 2, lat.states) + lat.skip_from;
    rows[t] = at::stack({stay, advance, skip, start[t]}, 2).logsumexp(2) + lat.state_log_probs[t];
    next = at::cat({rows[t], after}, 1);
  }
  return at::where(lat.inside, stack_time(rows, lat, options), kNegInf);
}

// -- _ctc_loss: (the negative log likelihood [N], log alpha [N, T, S]).

std::tuple<at::Tensor, at::Tensor> ctc_loss(const at::Tensor& log_probs, const at::Tensor& targets,
                                            at::IntArrayRef input_lengths,
                                            at::IntArrayRef target_lengths, int64_t blank,
                                            bool /*zero_infinity: the backward's*/) {
  OpScope scope(log_probs);
  const Lattice lat =
      make_lattice("_ctc_loss", log_probs, targets, input_lengths, target_lengths, blank);
  const at::TensorOptions options = log_probs.options();
  const at::Tensor log_alpha = forward_variables(lat, options);  // [T, N, S]
  // The likelihood sums the alignments in an end state at T_n - 1; a
  // sample without input steps has likelihood 1 for an empty target, else 0.
  const at::Tensor at_end = log_alpha.gather(
      0, lat.last_time.view({1, -1, 1}).expand({1, lat.batch, lat.states}));
  at::Tensor neg_log_likelihood = -(at_end.squeeze(0) + lat.last_states).logsumexp(1);
  const bool any_empty = std::any_of(lat.input_lengths.begin(), lat.input_lengths.end(),
                                     [](int64_t length) { return length == 0; });
  if (any_empty) {
    std::vector<double> empty(static_cast<size_t>(lat.batch), 0.0);
    std::vector<uint8_t> no_steps(static_cast<size_t>(lat.batch), 0);
    for (int64_t n = 0; n < lat.batch; ++n) {
      no_steps[n] = lat.input_lengths[n] == 0;
      empty[n] = -(lat.target_lengths[n] == 0 ? 0.0 : kNegInf);  // -log of likelihood 1 or 0
    }
    neg_log_likelihood = at::where(upload(no_steps, {lat.batch}, options.dtype(at::kBool)),
                                   upload(empty, {lat.batch}, options), neg_log_likelihood);
  }
  return {std::move(neg_log_likelihood), log_alpha.permute({1, 0, 2}).contiguous()};
}

std::tuple<at::Tensor, at::Tensor> ctc_loss_tensor(const at::Tensor& log_probs,
                                                   const at::Tensor& targets,
                                                   const at::Tensor& input_lengths,
                                                   const at::Tensor& target_lengths, int64_t blank,
                                                   bool zero_infinity) {
  return ctc_loss(log_probs, targets, host_lengths("_ctc_loss", "input_lengths", input_lengths),
                  host_lengths("_ctc_loss", "target_lengths", target_lengths), blank,
                  zero_infinity);
}

// -- _ctc_loss_backward: the gradient with respect to log_probs [T, N, C],
//   (exp(log_probs) - sum over the states s with l'_s = c of
//    exp(alpha_t(s) + beta_t(s) + nll - log_probs[t, n, c])) * grad[n]
// for t < T_n, 0 after; with zero_infinity, 0 for samples of infinite loss.

void check_saved(const char* op, const at::Tensor& grad, const at::Tensor& log_probs,
                 const at::Tensor& neg_log_likelihood, const at::Tensor& log_alpha,
                 const Lattice& lat) {
  const auto same = [&](const at::Tensor& t) {
    return t.scalar_type() == log_probs.scalar_type() && t.device() == log_probs.device();
  };
  TORCH_CHECK(grad.dim() == 1 && grad.size(0) == lat.batch && same(grad), op,
              ": grad must be [batch_size ", lat.batch, "] of log_probs' dtype and device, got ",
              grad.sizes(), " ", grad.scalar_type(), " on ", grad.device());
  TORCH_CHECK(neg_log_likelihood.dim() == 1 && neg_log_likelihood.size(0) == lat.batch &&
                  same(neg_log_likelihood),
              op, ": neg_log_likelihood must be [batch_size ", lat.batch,
              "] of log_probs' dtype and device, got ", neg_log_likelihood.sizes(), " ",
              neg_log_likelihood.scalar_type(), " on ", neg_log_likelihood.device());
  TORCH_CHECK(log_alpha.sizes() == at::IntArrayRef({lat.batch, lat.max_time, lat.states}) &&
                  same(log_alpha),
              op, ": log_alpha must be [batch, time, 2 * max(target_lengths) + 1] = [", lat.batch,
              ", ", lat.max_time, ", ", lat.states,
              "] of log_probs' dtype and device (as _ctc_loss returns it), got ",
              log_alpha.sizes(), " ", log_alpha.scalar_type(), " on ", log_alpha.device());
}

at::Tensor ctc_loss_backward(const at::Tensor& grad, const at::Tensor& log_probs,
                             const at::Tensor& targets, at::IntArrayRef input_lengths,
                             at::IntArrayRef target_lengths, const at::Tensor& neg_log_likelihood,
                             const at::Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  constexpr const char* op = "_ctc_loss_backward";
  OpScope scope(log_probs);
  const Lattice lat = make_lattice(op, log_probs, targets, input_lengths, target_lengths, blank);
  check_saved(op, grad, log_probs, neg_log_likelihood, log_alpha, lat);
  const at::TensorOptions options = log_probs.options();
  const at::Tensor log_beta = backward_variables(lat, options);  // [T, N, S]
  const at::Tensor nll = neg_log_likelihood.view({1, -1, 1});
  // Each state's share of the alignments through it, over its label's
  // probability; outside the lattice (where a log_alpha from elsewhere
  // may hold anything) nothing.
  const at::Tensor share = at::where(
      lat.inside, (log_alpha.permute({1, 0, 2}) + log_beta + nll - lat.state_log_probs).exp(), 0);
  const at::Tensor per_class = at::zeros(log_probs.sizes(), options)
                                   .scatter_add_(2, lat.labels.unsqueeze(0).expand_as(share), share);
  // A sample without any alignment (nll = inf) has no gradient: NaN for
  // every class at t < T_n, as the CPU's -inf (the log of its empty sum)
  // + inf gives; 0 here for the others.
  const at::Tensor undefined = (nll + kNegInf).exp();
  at::Tensor keep = at::arange(lat.max_time, options.dtype(at::kLong)).view({-1, 1, 1}) <
                    lat.input_lengths_device.view({1, -1, 1});
  if (zero_infinity) keep = keep & (nll != kInf);
  return at::where(keep, (log_probs.exp() - per_class - undefined) * grad.view({1, -1, 1}), 0).contiguous();
}

at::Tensor ctc_loss_backward_tensor(const at::Tensor& grad, const at::Tensor& log_probs,
                                    const at::Tensor& targets, const at::Tensor& input_lengths,
                                    const at::Tensor& target_lengths,
                                    const at::Tensor& neg_log_likelihood,
                                    const at::Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  constexpr const char* op = "_ctc_loss_backward";
  return ctc_loss_backward(grad, log_probs, targets,
                           host_lengths(op, "input_lengths", input_lengths),
                           host_lengths(op, "target_lengths", target_lengths), neg_log_likelihood,
                           log_alpha, blank, zero_infinity);
}

}  // namespace

TESSERA_ATEN_KERNELS(m) {
  m.impl("_ctc_loss", TORCH_FN(ctc_loss));
  m.impl("_ctc_loss.Tensor", TORCH_FN(ctc_loss_tensor));
  m.impl("_ctc_loss_backward", TORCH_FN(ctc_loss_backward));
  m.impl("_ctc_loss_backward.Tensor", TORCH_FN(ctc_loss_backward_tensor));
}

}  // namespace torch_tessera
