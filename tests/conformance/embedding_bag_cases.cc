// embedding_bag (sum, mean, max; padding_idx, per_sample_weights,
// include_last_offset), its weight gradient and its per_sample_weights
// gradient: conformance cases against references that fold each bag in
// index order (float16/bfloat16 sums in float, rounded once; max taking a
// row only when greater, so ties keep the first), and their error cases.
#include <algorithm>
#include <string>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

// Sample: inputs weight [V, D], indices (int64), offsets (int64) and, for
// weighted sums, per_sample_weights; scalars[0] padding_idx (-1: none);
// flag include_last_offset.
struct Bags {
  std::vector<std::vector<int64_t>> positions;  // kept positions of each bag
  std::vector<int64_t> bag_of;                  // each index's bag
};

Bags bags_of(const Sample& s) {
  const std::vector<double> idx = values_of(s.inputs[1]);
  const std::vector<double> off = values_of(s.inputs[2]);
  const int64_t n = static_cast<int64_t>(idx.size());
  const int64_t num_bags = static_cast<int64_t>(off.size()) - (s.flag ? 1 : 0);
  const int64_t end = s.flag ? static_cast<int64_t>(off.back()) : n;
  const int64_t padding = s.scalars[0].to<int64_t>();
  Bags b;
  b.positions.resize(static_cast<size_t>(std::max<int64_t>(num_bags, 0)));
  b.bag_of.assign(static_cast<size_t>(n), -1);
  for (int64_t p = 0; p < n; ++p) {
    int64_t bag = -1;
    for (int64_t k = 0; k < num_bags; ++k) {
      if (off[static_cast<size_t>(k)] <= p) bag = k;
    }
    b.bag_of[static_cast<size_t>(p)] = bag;
    if (bag >= 0 && p < end && static_cast<int64_t>(idx[static_cast<size_t>(p)]) != padding) {
      b.positions[static_cast<size_t>(bag)].push_back(p);
    }
  }
  return b;
}

// {output, bag_size, max_indices} of mode.
std::vector<Expected> forward_reference(const Sample& s, EmbeddingBagMode mode) {
  const Nd weight(s.inputs[0]);
  const std::vector<double> idx = values_of(s.inputs[1]);
  const DType dtype = s.inputs[0].dtype();
  const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
  const DType acc = half ? DType::kF32 : dtype;
  const bool weighted = s.inputs.size() > 3;
  const std::vector<double> psw = weighted ? values_of(s.inputs[3]) : std::vector<double>{};
  const Bags b = bags_of(s);
  const int64_t num_bags = static_cast<int64_t>(b.positions.size());
  const int64_t d = weight.shape[1];
  std::vector<double> out(static_cast<size_t>(num_bags * d), 0.0);
  std::vector<double> sizes(static_cast<size_t>(num_bags), 0.0);
  std::vector<double> argmax(static_cast<size_t>(num_bags * d), 0.0);
  for (int64_t bag = 0; bag < num_bags; ++bag) {
    const std::vector<int64_t>& ps = b.positions[static_cast<size_t>(bag)];
    if (mode != EmbeddingBagMode::kSum) sizes[static_cast<size_t>(bag)] = static_cast<double>(ps.size());
    for (int64_t j = 0; j < d; ++j) {
      double v = 0.0;
      double arg = 0.0;
      for (size_t k = 0; k < ps.size(); ++k) {
        const auto row = static_cast<int64_t>(idx[static_cast<size_t>(ps[k])]);
        double x = weight.at({row, j});
        if (mode == EmbeddingBagMode::kMax) {
          if (k == 0 || x > v) {
            v = x;
            arg = static_cast<double>(row);
          }
        } else {
          if (weighted) x = round_to_dtype(x * psw[static_cast<size_t>(ps[k])], acc);
          v = round_to_dtype(v + x, acc);
        }
      }
      v = round_to_dtype(v, dtype);
      if (mode == EmbeddingBagMode::kMean) {
        v = round_to_dtype(v / std::max<double>(1.0, static_cast<double>(ps.size())), dtype);
      }
      out[static_cast<size_t>(bag * d + j)] = v;
      argmax[static_cast<size_t>(bag * d + j)] = arg;
    }
  }
  const Expected size_result{{num_bags}, DType::kI64, sizes};
  return {Expected{{num_bags, d}, dtype, out}, size_result,
          mode == EmbeddingBagMode::kMax ? Expected{{num_bags, d}, DType::kI64, argmax}
                                         : size_result};
}

std::optional<int64_t> padding_of(const Sample& s) {
  const int64_t padding = s.scalars[0].to<int64_t>();
  return padding < 0 ? std::nullopt : std::optional<int64_t>(padding);
}

Tensor idx(std::vector<int64_t> v) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(DType::kI64));
  for (size_t i = 0; i < v.size(); ++i) t.select(0, static_cast<int64_t>(i)).fill_(v[i]);
  return t;
}

std::vector<Sample> bag_samples(DType t, bool weighted) {
  std::vector<Sample> out;
  auto push = [&](std::string desc, Tensor weight, Tensor indices, Tensor offsets,
                  int64_t padding, bool include_last) {
    std::vector<Tensor> inputs{std::move(weight), indices, std::move(offsets)};
    if (weighted) inputs.push_back(make_input({indices.numel()}, t, 90, -1.0, 2.0));
    out.push_back(sample_of(std::move(desc), std::move(inputs), {}, {Scalar(padding)}, include_last));
  };
  const std::vector<int64_t> repeats{1, 2, 4, 5, 4, 3, 2, 9, 0, 0, 7, 4, 4};
  push("bags of 4, 0, 5, 1, 3 with repeats", make_input({10, 6}, t, 1), idx(repeats),
       idx({0, 4, 4, 9, 10}), -1, false);
  push("padding_idx 4", make_input({10, 6}, t, 2), idx(repeats), idx({0, 4, 4, 9, 10}), 4, false);
  push("include_last_offset, last bag ends early", make_input({10, 6}, t, 3), idx(repeats),
       idx({0, 3, 8, 11}), -1, true);
  push("empty, all-padding and trailing empty bags", make_input({6, 3}, t, 4), idx({3, 3, 5}),
       idx({0, 0, 2, 3, 3}), 3, false);
  push("no indices", make_input({4, 5}, t, 5), idx({}), idx({0, 0}), -1, false);
  push("transposed weight", make_input({7, 12}, t, 6).t(), idx({11, 0, 3, 3, 8, 1}),
       idx({0, 2}), -1, false);
  push("[1000, 64], 3000 indices in 100 bags", make_input({1000, 64}, t, 7),
       make_input({3000}, DType::kI64, 8, 0, 999), arange(0, 3000, 30, TensorOptions(DType::kI64)),
       -1, false);
  return out;
}

OpCase bag_case(EmbeddingBagMode mode, bool weighted) {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  c.samples = [weighted](DType t) { return bag_samples(t, weighted); };
  c.run = [mode](const std::vector<Tensor>& x, const Sample& s) {
    const EmbeddingBagResult r = embedding_bag(x[0], x[1], x[2], mode,
                                               x.size() > 3 ? x[3] : Tensor(), s.flag,
                                               padding_of(s));
    return std::vector<Tensor>{r.output, r.bag_size.to(DType::kI64), r.max_indices.to(DType::kI64)};
  };
  c.reference = [mode](const Sample& s) { return forward_reference(s, mode); };
  return c;
}

// The weight gradient: grad [bags, D] (inputs[3], or [4] after
// per_sample_weights) sent back through the forward's results.
Expected backward_reference(const Sample& s, EmbeddingBagMode mode, const Tensor& grad) {
  const Nd g(grad);
  const Nd weight(s.inputs[0]);
  const std::vector<double> idx = values_of(s.inputs[1]);
  const DType dtype = s.inputs[0].dtype();
  const Bags b = bags_of(s);
  const int64_t d = weight.shape[1];
  std::vector<double> gw(static_cast<size_t>(weight.shape[0] * d), 0.0);
  auto add = [&](int64_t row, int64_t j, double v) {
    double& dst = gw[static_cast<size_t>(row * d + j)];
    dst = round_to_dtype(dst + v, dtype);
  };
  if (mode == EmbeddingBagMode::kMax) {
    const Expected fwd = forward_reference(s, mode)[2];
    for (size_t bag = 0; bag < b.positions.size(); ++bag) {
      if (b.positions[bag].empty()) continue;
      for (int64_t j = 0; j < d; ++j) {
        add(static_cast<int64_t>(fwd.values[bag * static_cast<size_t>(d) + static_cast<size_t>(j)]),
            j, g.at({static_cast<int64_t>(bag), j}));
      }
    }
    return Expected{weight.shape, dtype, gw};
  }
  // The backward sees every index before offsets' end in its bag (as
  // offset2bag says), so include_last_offset's trailing indices count.
  const int64_t padding = s.scalars[0].to<int64_t>();
  for (size_t p = 0; p < idx.size(); ++p) {
    const int64_t bag = b.bag_of[p];
    const auto row = static_cast<int64_t>(idx[p]);
    if (bag < 0 || row == padding) continue;
    double scale = 1.0;
    if (mode == EmbeddingBagMode::kMean) {
      const double n = static_cast<double>(b.positions[static_cast<size_t>(bag)].size());
      scale = round_to_dtype(1.0 / (n == 0 ? 1.0 : n), dtype);
    }
    for (int64_t j = 0; j < d; ++j) add(row, j, round_to_dtype(g.at({bag, j}) * scale, dtype));
  }
  return Expected{weight.shape, dtype, gw};
}

OpCase backward_case(EmbeddingBagMode mode) {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64};
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : bag_samples(t, false)) {
      if (s.flag) continue;  // the backward's view of a trailing index differs from the forward's
      const int64_t bags = s.inputs[2].numel();
      s.inputs.push_back(make_input({bags, s.inputs[0].size(1)}, t, 91));
      out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [mode](const std::vector<Tensor>& x, const Sample& s) {
    const std::optional<int64_t> pad = padding_of(s);
    const EmbeddingBagResult r = embedding_bag(x[0], x[1], x[2], mode, Tensor(), false, pad);
    return std::vector<Tensor>{embedding_bag_dense_backward(
        x[3], x[1], r.offset2bag, r.bag_size, r.max_indices, x[0].size(0), false, mode, Tensor(),
        pad)};
  };
  c.reference = [mode](const Sample& s) {
    return std::vector<Expected>{backward_reference(s, mode, s.inputs[3])};
  };
  c.tolerance = [](DType t, const Sample&) {
    const Tolerance base = default_tolerance(t);
    return Tolerance{base.rtol * 4, base.atol * 4};  // 1/bag_size rounds before the product
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("embedding_bag sum") { return bag_case(EmbeddingBagMode::kSum, false); }
TESSERA_CONFORMANCE_OP("embedding_bag mean") { return bag_case(EmbeddingBagMode::kMean, false); }
TESSERA_CONFORMANCE_OP("embedding_bag max") { return bag_case(EmbeddingBagMode::kMax, false); }
TESSERA_CONFORMANCE_OP("embedding_bag per_sample_weights") {
  return bag_case(EmbeddingBagMode::kSum, true);
}
TESSERA_CONFORMANCE_OP("embedding_bag_dense_backward sum") {
  return backward_case(EmbeddingBagMode::kSum);
}
TESSERA_CONFORMANCE_OP("embedding_bag_dense_backward mean") {
  return backward_case(EmbeddingBagMode::kMean);
}
TESSERA_CONFORMANCE_OP("embedding_bag_dense_backward max") {
  return backward_case(EmbeddingBagMode::kMax);
}

TESSERA_CONFORMANCE_OP("embedding_bag_per_sample_weights_backward") {
  OpCase c;
  c.dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  c.samples = [](DType t) {
    std::vector<Sample> out;
    for (Sample& s : bag_samples(t, false)) {
      if (s.flag) continue;
      s.inputs.push_back(make_input({s.inputs[2].numel(), s.inputs[0].size(1)}, t, 92));
      out.push_back(std::move(s));
    }
    return out;
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    const std::optional<int64_t> pad = padding_of(s);
    const EmbeddingBagResult r =
        embedding_bag(x[0], x[1], x[2], EmbeddingBagMode::kSum, Tensor(), false, pad);
    return std::vector<Tensor>{embedding_bag_per_sample_weights_backward(
        x[3], x[0], x[1], r.offset2bag, EmbeddingBagMode::kSum, pad)};
  };
  c.reference = [](const Sample& s) {
    const Nd g(s.inputs[3]);
    const Nd weight(s.inputs[0]);
    const std::vector<double> idx = values_of(s.inputs[1]);
    const Bags b = bags_of(s);
    const int64_t padding = s.scalars[0].to<int64_t>();
    std::vector<double> dots(idx.size(), 0.0);
    for (size_t p = 0; p < idx.size(); ++p) {
      const auto row = static_cast<int64_t>(idx[p]);
      if (row == padding) continue;
      double dot = 0.0;
      for (int64_t j = 0; j < weight.shape[1]; ++j) dot += g.at({b.bag_of[p], j}) * weight.at({row, j});
      dots[p] = round_to_dtype(dot, s.inputs[0].dtype());
    }
    return std::vector<Expected>{
        Expected{{static_cast<int64_t>(idx.size())}, s.inputs[0].dtype(), dots}};
  };
  c.tolerance = [](DType t, const Sample&) {
    const Tolerance base = default_tolerance(t);
    return Tolerance{base.rtol * 8, base.atol * 8};  // dot products of 64 terms
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("embedding_bag") {
  auto i64 = [](Device d) { return TensorOptions(DType::kI64, d); };
  return std::vector<ErrorCase>{
      {"offsets not starting at 0",
       [i64](Device d) { embedding_bag(ones({4, 2}, d), zeros({3}, i64(d)), ones({2}, i64(d)), EmbeddingBagMode::kSum); },
       ErrorKind::kValue,
       {"embedding_bag", "offsets[0] has to be 0", "got 1"}},
      {"offsets past the indices",
       [i64](Device d) {
         embedding_bag(ones({4, 2}, d), zeros({3}, i64(d)), arange(0, 8, 4, i64(d)),
                       EmbeddingBagMode::kSum);
       },
       ErrorKind::kValue,
       {"embedding_bag", "offsets[-1] (4)", "number of indices (3)"}},
      {"index out of range",
       [i64](Device d) { embedding_bag(ones({4, 2}, d), full({3}, 4, i64(d)), zeros({1}, i64(d)), EmbeddingBagMode::kMax); },
       ErrorKind::kIndex,
       {"embedding_bag", "index 4", "size 4"}},
      {"integer weight",
       [i64](Device d) { embedding_bag(ones({4, 2}, i64(d)), zeros({3}, i64(d)), zeros({1}, i64(d)), EmbeddingBagMode::kSum); },
       ErrorKind::kType,
       {"embedding_bag", "weight", "int64"}},
      {"float indices",
       [i64](Device d) { embedding_bag(ones({4, 2}, d), zeros({3}, d), zeros({1}, i64(d)), EmbeddingBagMode::kSum); },
       ErrorKind::kType,
       {"embedding_bag", "indices", "float32"}},
      {"per_sample_weights with mean",
       [i64](Device d) {
         embedding_bag(ones({4, 2}, d), zeros({3}, i64(d)), zeros({1}, i64(d)),
                       EmbeddingBagMode::kMean, ones({3}, d));
       },
       ErrorKind::kValue,
       {"embedding_bag", "per_sample_weights", "mode='sum'"}},
      {"per_sample_weights of another length",
       [i64](Device d) {
         embedding_bag(ones({4, 2}, d), zeros({3}, i64(d)), zeros({1}, i64(d)),
                       EmbeddingBagMode::kSum, ones({2}, d));
       },
       ErrorKind::kValue,
       {"embedding_bag", "one weight per index (3)"}},
      {"padding_idx out of range",
       [i64](Device d) {
         embedding_bag(ones({4, 2}, d), zeros({3}, i64(d)), zeros({1}, i64(d)),
                       EmbeddingBagMode::kSum, Tensor(), false, 4);
       },
       ErrorKind::kValue,
       {"embedding_bag", "padding_idx", "-4 through 3", "got 4"}},
      {"2-D indices with offsets",
       [i64](Device d) { embedding_bag(ones({4, 2}, d), zeros({2, 3}, i64(d)), zeros({1}, i64(d)), EmbeddingBagMode::kSum); },
       ErrorKind::kValue,
       {"embedding_bag", "offsets must be None"}},
      {"backward of a max without bag sizes",
       [i64](Device d) {
         embedding_bag_dense_backward(ones({2, 3}, d), zeros({3}, i64(d)), zeros({3}, i64(d)),
                                      Tensor(), Tensor(), 4, false, EmbeddingBagMode::kMax);
       },
       ErrorKind::kValue,
       {"embedding_bag_backward", "max_indices [2, 3]"}},
  };
}

}  // namespace tessera::conformance
