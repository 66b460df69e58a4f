// Fuzz target: the op front ends on the CPU device, structured. The first
// byte picks one of two programs:
//
// - Conformance: one case of the conformance suite (op, dtype, sample),
//   with every input moved to a layout the fuzzer picks (permuted storage,
//   gaps between elements, a storage offset, odd strides on size-1 dims;
//   the values stay the same), run, and compared with the suite's naive
//   reference at the suite's tolerance.
// - Shapes: a random tensor (dtype, rank, sizes, layout) and an op called
//   with random dims, sizes, scalars and a second operand: the op must
//   either raise a tessera::Error or return a result equal to the same call
//   on contiguous copies of its inputs.
//
// Anything else (a crash, a sanitizer report, another exception, a
// mismatch) ends the run with the inputs described on stderr.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/conformance/conformance.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace tessera;
using tessera::fuzz::FuzzInput;
namespace conf = tessera::conformance;

// Bounds on what one run makes, so that an execution stays in
// milliseconds: inputs (before relayout) and anything materialized.
constexpr int64_t kMaxInputElements = 4096;
constexpr int64_t kMaxElements = int64_t{1} << 20;

std::string context;  // what the current run does, for the report

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "op_fuzz: %s\n  in: %s\n", what.c_str(), context.c_str());
  std::abort();
}

std::string layout_of(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + shape_to_string(t.sizes()) + " strides " +
         shape_to_string(t.strides()) + " offset " + std::to_string(t.storage_offset());
}

// -- Layouts. Each returns a tensor with t's sizes, dtype and values in
// storage laid out differently.

// Always a copy: in-place ops must not change the sample, whose inputs the
// reference reads afterwards.
Tensor relayout(FuzzInput& in, const Tensor& t) {
  const int64_t rank = t.dim();
  const uint8_t kind = in.byte() % 5;
  if (kind == 0 || t.numel() == 0) return conf::copy_like(t, t.device());
  Shape storage_sizes = t.sizes();
  Shape steps(rank, 1);
  int64_t offset = 0;
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  if (kind == 1 || kind == 4) {  // permuted storage: dims stored in another order
    for (int64_t i = rank - 1; i > 0; --i) std::swap(order[i], order[in.in_range(0, i)]);
  }
  if (kind == 2 || kind == 4) {  // gaps: every dim strided by 1 to 3
    for (auto& s : steps) s = in.in_range(1, 3);
    offset = in.in_range(0, 5);
  }
  // Storage dims in `order`, each `step` times its size.
  Shape stored(rank);
  for (int64_t i = 0; i < rank; ++i) stored[i] = storage_sizes[order[i]] * steps[order[i]];
  int64_t span = 1;
  for (int64_t s : stored) span *= s;
  Tensor storage = empty({span + offset}, TensorOptions(t.dtype(), t.device()));
  Shape dense_strides = contiguous_strides(stored);
  Shape strides(rank);
  for (int64_t i = 0; i < rank; ++i) strides[order[i]] = dense_strides[i] * steps[order[i]];
  if (kind == 3) {  // size-1 dims take any stride
    for (int64_t d = 0; d < rank; ++d) {
      if (t.sizes()[d] == 1) strides[d] = in.in_range(0, 7);
    }
  }
  Tensor out = storage.as_strided(t.sizes(), strides, offset);
  out.copy_(t);
  return out;
}

// Whether materializing `factor` elements per element of sizes stays in
// the budget, or is refused anyway (a negative or overflowing size).
bool within_budget(const Shape& sizes, int64_t factor = 1) {
  __int128 n = std::max<int64_t>(factor, 1);
  for (int64_t s : sizes) {
    if (s <= 0) return true;  // empty or refused: no memory either way
    n *= s;
    if (n > std::numeric_limits<int64_t>::max()) return true;  // must be refused
  }
  return n <= kMaxElements;
}

// -- The conformance program.

const std::vector<conf::RegisteredOpCase>& cases_by_name() {
  static const std::vector<conf::RegisteredOpCase> cases = [] {
    std::vector<conf::RegisteredOpCase> c = conf::registered_op_cases();
    std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
    return c;
  }();
  return cases;
}

// A case and its small samples per dtype, made once: making samples
// (some larger than the L2 cache) costs far more than running one.
struct CachedCase {
  conf::OpCase c;
  std::map<DType, std::vector<conf::Sample>> samples;
};

const std::vector<conf::Sample>& small_samples(CachedCase& cached, DType dtype) {
  auto it = cached.samples.find(dtype);
  if (it != cached.samples.end()) return it->second;
  std::vector<conf::Sample> samples = cached.c.samples(dtype);
  std::erase_if(samples, [](const conf::Sample& s) {
    return std::any_of(s.inputs.begin(), s.inputs.end(),
                       [](const Tensor& t) { return t.defined() && t.numel() > kMaxInputElements; });
  });
  return cached.samples.emplace(dtype, std::move(samples)).first->second;
}

void run_conformance_case(FuzzInput& in) {
  static std::vector<std::optional<CachedCase>> cache(cases_by_name().size());
  const size_t index = static_cast<size_t>(in.in_range(0, static_cast<int64_t>(cache.size()) - 1));
  const conf::RegisteredOpCase& entry = cases_by_name()[index];
  if (!cache[index]) cache[index].emplace(CachedCase{entry.make(), {}});
  CachedCase& cached = *cache[index];
  const conf::OpCase& c = cached.c;
  if (c.dtypes.empty()) return;
  const DType dtype = in.pick(c.dtypes);
  const std::vector<conf::Sample>& samples = small_samples(cached, dtype);
  if (samples.empty()) return;
  const conf::Sample& sample = in.pick(samples);
  context = "conformance case " + entry.op + " " + std::string(dtype_name(dtype)) + " " +
            sample.description;
  std::vector<Tensor> inputs;
  for (const Tensor& t : sample.inputs) {
    inputs.push_back(t.defined() ? relayout(in, t) : t);
    if (t.defined()) context += "\n    input " + layout_of(inputs.back());
  }
  std::vector<Tensor> outs;
  try {
    outs = c.run(inputs, sample);
  } catch (const Error& e) {
    // A layout may be refused (view() of non-viewable strides): that is a
    // clean error. The cases are valid in the suite's own layouts.
    return;
  }
  const std::vector<conf::Expected> expected = c.reference(sample);
  if (outs.size() != expected.size()) fail("wrong number of outputs");
  for (size_t k = 0; k < outs.size(); ++k) {
    const conf::Tolerance tol =
        c.tolerance ? c.tolerance(dtype, sample) : conf::default_tolerance(expected[k].dtype);
    if (auto why = conf::mismatch(outs[k], expected[k], tol)) {
      fail("output " + std::to_string(k) + ": " + *why);
    }
  }
}

// -- The shapes program.

const std::vector<DType> kDTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                    DType::kI64, DType::kI32, DType::kI16, DType::kI8,
                                    DType::kU8,  DType::kBool};

// Mostly small, sometimes negative, sometimes huge: dims, sizes, counts.
int64_t small_int(FuzzInput& in) {
  const uint8_t kind = in.byte();
  if (kind < 200) return kind % 6;
  if (kind < 230) return in.in_range(-6, 6);
  if (kind < 250) return in.in_range(-100, 100);
  return in.raw<int64_t>();
}

Shape small_shape(FuzzInput& in, int64_t max_rank = 4) {
  Shape s(in.in_range(0, max_rank));
  for (auto& v : s) v = small_int(in);
  return s;
}

Tensor random_tensor(FuzzInput& in, DType dtype, Shape sizes) {
  for (auto& s : sizes) s = std::clamp<int64_t>(s, 0, 8);
  while (conf::numel_of(sizes) > kMaxInputElements) sizes.back() = sizes.back() / 2;
  const Tensor t = conf::make_input(sizes, dtype, in.raw<uint16_t>());
  return relayout(in, t);
}

// A second operand that broadcasts with t (or, now and then, does not).
Tensor partner(FuzzInput& in, const Tensor& t, DType dtype) {
  Shape s = t.sizes();
  if (!s.empty()) s.erase(s.begin(), s.begin() + in.in_range(0, static_cast<int64_t>(s.size())));
  for (auto& v : s) {
    const uint8_t k = in.byte() % 8;
    if (k == 0) v = 1;
    if (k == 1) v = in.in_range(0, 4);  // likely incompatible
  }
  return random_tensor(in, dtype, s);
}

struct Call {
  std::vector<Tensor> inputs;            // relaid-out inputs
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> run;
  bool values_only = false;  // compare outputs' values, not indices (ties)
};

Tensor first(const std::pair<Tensor, Tensor>& p) { return p.first; }

// The op table: each entry reads its arguments from `in` and returns the
// call to make, on x and (where it takes one) a second operand.
Call make_call(FuzzInput& in, const Tensor& x) {
  const DType dtype = x.dtype();
  const int64_t d = small_int(in), d2 = small_int(in);
  const bool keep = in.boolean();
  const Shape dims = small_shape(in, 3), sizes = small_shape(in, 5);
  const int64_t k = small_int(in);
  const uint8_t op = in.byte() % 40;
  context += " op " + std::to_string(op) + " d=" + std::to_string(d) + " d2=" +
             std::to_string(d2) + " k=" + std::to_string(k) + " dims=" + shape_to_string(dims) +
             " sizes=" + shape_to_string(sizes) + (keep ? " keepdim" : "");
  using V = std::vector<Tensor>;
  auto unary = [&](std::function<Tensor(const Tensor&)> f) {
    return Call{{x}, [f](const V& v) { return V{f(v[0])}; }};
  };
  auto binary = [&](const Tensor& y, std::function<Tensor(const Tensor&, const Tensor&)> f) {
    context += "\n    other " + layout_of(y);
    return Call{{x, y}, [f](const V& v) { return V{f(v[0], v[1])}; }};
  };
  auto indices = [&](Shape s, int64_t hi) {
    for (auto& v : s) v = std::clamp<int64_t>(v, 0, 8);
    Tensor idx = conf::make_input(s, DType::kI64, in.raw<uint16_t>(), -1, static_cast<double>(hi));
    return relayout(in, idx);
  };
  switch (op) {
    case 0: return unary([=](const Tensor& a) { return a.reshape(sizes); });
    case 1: return unary([=](const Tensor& a) { return a.view(sizes); });
    case 2: return unary([=](const Tensor& a) { return a.permute(dims); });
    case 3: return unary([=](const Tensor& a) { return a.transpose(d, d2); });
    case 4:
      if (!within_budget(sizes)) return {};
      return unary([=](const Tensor& a) { return a.expand(sizes).contiguous(); });
    case 5: return unary([=](const Tensor& a) { return a.narrow(d, d2, k); });
    case 6: return unary([=](const Tensor& a) { return a.slice(d, d2, k, std::max<int64_t>(1, keep ? 2 : 1)); });
    case 7: return unary([=](const Tensor& a) { return a.select(d, d2); });
    case 8: return unary([=](const Tensor& a) { return keep ? a.squeeze(d) : a.unsqueeze(d); });
    case 9: return unary([=](const Tensor& a) { return sum(a, dims, keep); });
    case 10: return unary([=](const Tensor& a) { return mean(a, dims, keep); });
    case 11: return unary([=](const Tensor& a) { return amax(a, dims, keep); });
    case 12: return unary([=](const Tensor& a) { return prod(a, d, keep); });
    case 13: return unary([=](const Tensor& a) { return var(a, dims, 1.0, keep); });
    case 14: return unary([=](const Tensor& a) { return norm(a, 2.0, dims, keep); });
    case 15: return unary([=](const Tensor& a) { return argmax(a, d, keep); });
    case 16: return unary([=](const Tensor& a) { return softmax(a, d); });
    case 17: return unary([=](const Tensor& a) { return log_softmax(a, d); });
    case 18: return unary([=](const Tensor& a) { return cumsum(a, d); });
    case 19: return binary(partner(in, x, dtype), [](const Tensor& a, const Tensor& b) { return add(a, b, 2); });
    case 20: return binary(partner(in, x, in.pick(kDTypes)), [](const Tensor& a, const Tensor& b) { return mul(a, b); });
    case 21: return binary(partner(in, x, in.pick(kDTypes)), [](const Tensor& a, const Tensor& b) { return div(a, b); });
    case 22: return binary(random_tensor(in, dtype, small_shape(in)), [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
    case 23: return binary(random_tensor(in, dtype, x.sizes()), [=](const Tensor& a, const Tensor& b) { return cat({a, b}, d); });
    case 24: return binary(random_tensor(in, dtype, x.sizes()), [=](const Tensor& a, const Tensor& b) { return stack({a, b}, d); });
    case 25: return binary(indices(small_shape(in, 1), x.dim() > 0 ? x.size(0) + 1 : 2), [=](const Tensor& a, const Tensor& i) { return index_select(a, d, i); });
    case 26: return binary(indices(x.sizes(), 4), [=](const Tensor& a, const Tensor& i) { return gather(a, d, i); });
    case 27: {
      Call c = unary([=](const Tensor& a) { return first(topk(a, k, d, keep)); });
      c.values_only = true;
      return c;
    }
    case 28: {
      Call c = unary([=](const Tensor& a) { return first(sort(a, d, keep)); });
      c.values_only = true;
      return c;
    }
    case 29: return unary([=](const Tensor& a) { return keep ? tril(a, d) : triu(a, d); });
    case 30: return unary([=](const Tensor& a) { return flip(a, dims); });
    case 31: return unary([=](const Tensor& a) { return roll(a, sizes, dims); });
    case 32:
      if (!within_budget(sizes, x.numel())) return {};
      return unary([=](const Tensor& a) { return repeat(a, sizes); });
    case 33: return unary([=](const Tensor& a) { return constant_pad(a, dims, 1.5); });
    case 34: {
      // Weight [out, in/groups, kh, kw] from the fuzzer, input from x.
      Tensor w = random_tensor(in, dtype, small_shape(in, 4));
      const Shape stride = small_shape(in, 2), pad = small_shape(in, 2), dil = small_shape(in, 2);
      context += " stride=" + shape_to_string(stride) + " pad=" + shape_to_string(pad) +
                 " dil=" + shape_to_string(dil);
      return binary(w, [=](const Tensor& a, const Tensor& b) {
        return conv2d(a, b, {}, stride, pad, dil, std::max<int64_t>(k, 1));
      });
    }
    case 35: return unary([=](const Tensor& a) { return max_pool2d(a, dims, sizes, {k}); });
    case 36: return unary([=](const Tensor& a) { return avg_pool2d(a, dims, sizes, {k}, keep); });
    case 37: return unary([=](const Tensor& a) { return one_hot(a, d); });
    case 38: {
      const DType to = kDTypes[static_cast<size_t>(k & 0xffff) % kDTypes.size()];
      return unary([=](const Tensor& a) { return a.to(to); });
    }
    case 39: {
      // Creation from fuzzed sizes and ranges (no input read).
      if (!within_budget(sizes)) return {};
      const double start = d, end = d2, step = k;
      const double count = step == 0 ? 0 : std::ceil((end - start) / step);
      if (std::isfinite(count) && count > kMaxElements) return {};
      return unary([=](const Tensor&) {
        return keep ? full(sizes, 2.5, TensorOptions(dtype)) : arange(start, end, step, TensorOptions(dtype));
      });
    }
  }
  return {};
}

bool same_values(const Tensor& a, const Tensor& b, bool floating) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  if (a.numel() > kMaxElements) return true;  // a view too big to read: shapes agree
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  const double tol = a.dtype() == DType::kF16 || a.dtype() == DType::kBF16 ? 2e-2 : 1e-3;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) && std::isnan(y[i])) continue;
    if (x[i] == y[i]) continue;
    if (floating && std::abs(x[i] - y[i]) <= tol * (1 + std::abs(y[i]))) continue;
    return false;
  }
  return true;
}

void run_shapes_case(FuzzInput& in) {
  const DType dtype = in.pick(kDTypes);
  const Tensor x = random_tensor(in, dtype, small_shape(in));
  context = "shapes: x " + layout_of(x);
  const Call call = make_call(in, x);
  if (!call.run) return;
  std::vector<Tensor> got;
  try {
    got = call.run(call.inputs);
  } catch (const Error&) {
    return;  // refused cleanly
  }
  // The same call on contiguous copies must give the same result.
  std::vector<Tensor> dense;
  for (const Tensor& t : call.inputs) dense.push_back(t.contiguous().clone());
  std::vector<Tensor> want;
  try {
    want = call.run(dense);
  } catch (const Error& e) {
    fail(std::string("contiguous inputs refused what strided ones ran: ") + e.what());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same_values(got[i], want[i], is_floating(got[i].dtype()))) {
      fail("output " + std::to_string(i) + " depends on the inputs' layout: " + layout_of(got[i]));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  try {
    if (in.byte() % 2 == 0) {
      run_conformance_case(in);
    } else {
      run_shapes_case(in);
    }
  } catch (const Error& e) {
    // Errors the programs do not catch come from their own setup, which
    // must not fail: report them.
    fail(std::string("uncaught tessera error: ") + e.what());
  } catch (const std::exception& e) {
    fail(std::string("an exception that is not a tessera::Error: ") + e.what());
  }
  return 0;
}
