// eye, linspace, tril/triu, randint, bernoulli, dropout: conformance cases.
// The random references recompute Philox4x32-10 (runtime/random/philox.h,
// the generator's specification) from the seed of a fresh Generator, so a
// device passes only if it draws exactly the specified values.
#include <cmath>

#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

constexpr uint64_t kSeed = 20240611;

// A 0-d input that only tells run() the device (creation ops take none).
Tensor device_marker() { return zeros({}); }

Expected generate(const Shape& shape, DType dtype, const std::function<double(int64_t)>& f) {
  Expected e{shape, dtype, {}};
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t i = 0; i < n; ++i) e.values.push_back(round_to_dtype(f(i), dtype));
  return e;
}

}  // namespace

TESSERA_CONFORMANCE_OP("eye") {
  OpCase c;
  c.samples = [](DType) {
    return std::vector<Sample>{
        sample_of("0 x 0", {device_marker()}, {0, 0}), sample_of("3 x 3", {device_marker()}, {3, 3}),
        sample_of("2 x 5", {device_marker()}, {2, 5}), sample_of("5 x 2", {device_marker()}, {5, 2}),
        sample_of("0 x 3", {device_marker()}, {0, 3}),
        sample_of("larger than L2 1200 x 1100", {device_marker()}, {1200, 1100}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    // The op case's dtype is not passed to run: the marker's dtype is f32,
    // so each sample builds every dtype and returns them all.
    std::vector<Tensor> out;
    for (DType t : all_dtypes()) out.push_back(eye(s.dims[0], s.dims[1], TensorOptions(t, x[0].device())));
    return out;
  };
  c.reference = [](const Sample& s) {
    std::vector<Expected> out;
    const int64_t m = s.dims[1];
    for (DType t : all_dtypes()) {
      out.push_back(generate({s.dims[0], m}, t, [m](int64_t i) { return i / m == i % m ? 1.0 : 0.0; }));
    }
    return out;
  };
  c.dtypes = {DType::kF32};  // every dtype is covered inside each sample
  return c;
}

TESSERA_CONFORMANCE_OP("linspace") {
  OpCase c;
  c.dtypes = {DType::kF32};  // each sample covers every dtype, as for eye
  c.samples = [](DType) {
    return std::vector<Sample>{
        sample_of("0 steps", {device_marker()}, {0}, {0.0, 1.0}),
        sample_of("1 step", {device_marker()}, {1}, {2.0, 5.0}),
        sample_of("0 to 10 in 4", {device_marker()}, {4}, {0, 10}),
        sample_of("-3 to 7.5 in 11", {device_marker()}, {11}, {-3.0, 7.5}),
        sample_of("descending 5 to -5 in 6", {device_marker()}, {6}, {5, -5}),
        sample_of("larger than L2: 0 to 100 in 1000000", {device_marker()}, {1000000}, {0, 100}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    std::vector<Tensor> out;
    for (DType t : numeric_dtypes()) {
      out.push_back(linspace(s.scalars[0], s.scalars[1], s.dims[0], TensorOptions(t, x[0].device())));
    }
    return out;
  };
  c.reference = [](const Sample& s) {
    std::vector<Expected> out;
    const int64_t n = s.dims[0];
    for (DType t : numeric_dtypes()) {
      // Integer dtypes start from the ends truncated to integers.
      const double a = is_floating(t) ? s.scalars[0].to<double>() : std::trunc(s.scalars[0].to<double>());
      const double b = is_floating(t) ? s.scalars[1].to<double>() : std::trunc(s.scalars[1].to<double>());
      out.push_back(generate({n}, t, [&](int64_t i) {
        const double v = n == 1 ? a : a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1);
        return is_floating(t) ? v : std::trunc(v + (v >= 0 ? 1e-9 : -1e-9));
      }));
    }
    return out;
  };
  // Integer results truncate; a float step may land just below an integer.
  c.tolerance = [](DType, const Sample&) { return Tolerance{1.6e-2, 1e-5}; };
  return c;
}

namespace {
OpCase triangle_case(bool upper, int mode) {  // mode 0: op, 1: in place, 2: out=
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    auto x = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed); };
    return std::vector<Sample>{
        sample_of("[4, 5] diagonal 0", {x({4, 5}, 1)}, {0}),
        sample_of("[5, 3] diagonal -1", {x({5, 3}, 2)}, {-1}),
        sample_of("transposed [2, 4, 3] diagonal 1", {x({2, 3, 4}, 3).transpose(1, 2)}, {1}),
        sample_of("[3, 3] diagonal 7", {x({3, 3}, 4)}, {7}),
        sample_of("zero-size [0, 3]", {x({0, 3}, 5)}, {0}),
        sample_of("larger than L2 [1024, 700] diagonal 3", {x({1024, 700}, 6)}, {3}),
    };
  };
  c.run = [upper, mode](const std::vector<Tensor>& x, const Sample& s) {
    const int64_t d = s.dims[0];
    if (mode == 0) return std::vector<Tensor>{upper ? triu(x[0], d) : tril(x[0], d)};
    Tensor out = mode == 1 ? x[0].clone() : empty_like(x[0]);
    if (mode == 1) {
      upper ? triu_(out, d) : tril_(out, d);
    } else {
      upper ? triu_out(out, x[0], d) : tril_out(out, x[0], d);
    }
    return std::vector<Tensor>{out};
  };
  c.reference = [upper](const Sample& s) {
    const Tensor& t = s.inputs[0];
    std::vector<double> v = values_of(t);
    const int64_t rows = t.size(-2), cols = t.size(-1);
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t col = static_cast<int64_t>(i) % cols;
      const int64_t row = (static_cast<int64_t>(i) / cols) % rows;
      const bool keep = upper ? col - row >= s.dims[0] : col - row <= s.dims[0];
      if (!keep) v[i] = 0;
    }
    return std::vector<Expected>{Expected{t.sizes(), t.dtype(), v}};
  };
  return c;
}
}  // namespace

TESSERA_CONFORMANCE_OP("tril") { return triangle_case(false, 0); }
TESSERA_CONFORMANCE_OP("triu") { return triangle_case(true, 0); }
TESSERA_CONFORMANCE_OP("tril_") { return triangle_case(false, 1); }
TESSERA_CONFORMANCE_OP("triu_out") { return triangle_case(true, 2); }

TESSERA_CONFORMANCE_OP("randint") {
  OpCase c;
  c.dtypes = {DType::kF32};  // each sample covers every dtype
  c.samples = [](DType) {
    return std::vector<Sample>{
        sample_of("0-d in [0, 2)", {device_marker()}, {}, {0, 2}),
        sample_of("[3, 5] in [0, 2)", {device_marker()}, {3, 5}, {0, 2}),
        sample_of("zero-size", {device_marker()}, {0, 4}, {0, 2}),
        sample_of("[1000, 1100] in [0, 2)", {device_marker()}, {1000, 1100}, {0, 2}),
        sample_of("[7, 9] in [-1, 100) (no bool, no u8)", {device_marker()}, {7, 9}, {-1, 100}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    std::vector<Tensor> out;
    const int64_t lo = s.scalars[0].to<int64_t>(), hi = s.scalars[1].to<int64_t>();
    for (DType t : all_dtypes()) {
      if (lo < 0 && (t == DType::kBool || t == DType::kU8)) continue;
      Generator gen(kSeed);
      out.push_back(randint(lo, hi, s.dims, TensorOptions(t, x[0].device()), &gen));
    }
    return out;
  };
  c.reference = [](const Sample& s) {
    std::vector<Expected> out;
    const int64_t lo = s.scalars[0].to<int64_t>(), hi = s.scalars[1].to<int64_t>();
    const PhiloxState state{kSeed, 0};
    for (DType t : all_dtypes()) {
      if (lo < 0 && (t == DType::kBool || t == DType::kU8)) continue;
      out.push_back(generate(s.dims, t, [&](int64_t i) {
        const uint64_t u = static_cast<uint64_t>(i);
        const PhiloxBlock b = philox4x32_10(state.seed, state.offset + u / 2, 0);
        const uint64_t r = (static_cast<uint64_t>(b[(u % 2) * 2]) << 32) | b[(u % 2) * 2 + 1];
        return static_cast<double>(lo + static_cast<int64_t>(r % static_cast<uint64_t>(hi - lo)));
      }));
    }
    return out;
  };
  return c;
}

TESSERA_CONFORMANCE_OP("bernoulli") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    auto p = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed, 0, 1); };
    return std::vector<Sample>{
        sample_of("0-d", {p({}, 1)}), sample_of("[5, 7]", {p({5, 7}, 2)}),
        sample_of("transposed [7, 5]", {p({5, 7}, 3).t()}), sample_of("zero-size", {p({0, 3}, 4)}),
        sample_of("larger than L2 [1024, 600]", {p({1024, 600}, 5)}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample&) {
    Generator gen(kSeed);
    return std::vector<Tensor>{bernoulli(x[0], &gen)};
  };
  c.reference = [](const Sample& s) {
    const PhiloxState state{kSeed, 0};
    std::vector<double> p = values_of(s.inputs[0]);
    return std::vector<Expected>{generate(s.inputs[0].sizes(), s.inputs[0].dtype(), [&](int64_t i) {
      return philox_uniform_double(state, static_cast<uint64_t>(i)) < p[i] ? 1.0 : 0.0;
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("bernoulli_ scalar p") {
  OpCase c;
  c.dtypes = all_dtypes();
  c.samples = [](DType t) {
    auto x = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed); };
    return std::vector<Sample>{
        sample_of("0-d p 0.5", {x({}, 1)}, {}, {0.5}), sample_of("[5, 7] p 0.25", {x({5, 7}, 2)}, {}, {0.25}),
        sample_of("transposed p 0.9", {x({5, 7}, 3).t()}, {}, {0.9}),
        sample_of("p 0 and p 1 on [3]", {x({3}, 4)}, {}, {1.0}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Generator gen(kSeed);
    Tensor self = x[0].clone();
    bernoulli_(self, s.scalars[0].to<double>(), &gen);
    return std::vector<Tensor>{self};
  };
  c.reference = [](const Sample& s) {
    const PhiloxState state{kSeed, 0};
    const double p = s.scalars[0].to<double>();
    return std::vector<Expected>{generate(s.inputs[0].sizes(), s.inputs[0].dtype(), [&](int64_t i) {
      return philox_uniform_double(state, static_cast<uint64_t>(i)) < p ? 1.0 : 0.0;
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("native_dropout") {
  OpCase c;
  c.dtypes = floating_dtypes();
  // scalars: p; flag: train.
  c.samples = [](DType t) {
    auto x = [t](const Shape& s, uint64_t seed) { return make_input(s, t, seed); };
    return std::vector<Sample>{
        sample_of("0-d p 0.3", {x({}, 1)}, {}, {0.3}, true),
        sample_of("[5, 7] p 0.3", {x({5, 7}, 2)}, {}, {0.3}, true),
        sample_of("transposed p 0.5", {x({5, 7}, 3).t()}, {}, {0.5}, true),
        sample_of("p 1", {x({4}, 4)}, {}, {1.0}, true),
        sample_of("p 0", {x({4}, 5)}, {}, {0.0}, true),
        sample_of("eval", {x({4}, 6)}, {}, {0.5}, false),
        sample_of("zero-size", {x({0, 3}, 7)}, {}, {0.5}, true),
        sample_of("larger than L2 [1024, 600] p 0.1", {x({1024, 600}, 8)}, {}, {0.1}, true),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    Generator gen(kSeed);
    auto [out, mask] = native_dropout(x[0], s.scalars[0].to<double>(), s.flag, &gen);
    return std::vector<Tensor>{out, mask};
  };
  c.reference = [](const Sample& s) {
    const PhiloxState state{kSeed, 0};
    const double p = s.scalars[0].to<double>();
    const DType t = s.inputs[0].dtype();
    std::vector<double> x = values_of(s.inputs[0]);
    auto keep = [&](int64_t i) {
      return !s.flag || philox_uniform_double(state, static_cast<uint64_t>(i)) < 1.0 - p;
    };
    // The scale is applied in the input's dtype, as mul by a Scalar does.
    const double scale = s.flag && p < 1 ? round_to_dtype(1.0 / (1.0 - p), t) : 1.0;
    Expected out = generate(s.inputs[0].sizes(), t, [&](int64_t i) {
      return keep(i) ? x[i] * scale : 0.0;
    });
    Expected mask = generate(s.inputs[0].sizes(), DType::kBool, [&](int64_t i) { return keep(i) ? 1.0 : 0.0; });
    return std::vector<Expected>{out, mask};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("native_dropout_backward") {
  OpCase c;
  c.dtypes = floating_dtypes();
  c.samples = [](DType t) {
    return std::vector<Sample>{
        sample_of("[5, 7]", {make_input({5, 7}, t, 1), make_input({5, 7}, DType::kBool, 2)}, {}, {2.0}),
        sample_of("transposed", {make_input({7, 5}, t, 3).t(), make_input({5, 7}, DType::kBool, 4)}, {}, {1.25}),
    };
  };
  c.run = [](const std::vector<Tensor>& x, const Sample& s) {
    return std::vector<Tensor>{native_dropout_backward(x[0], x[1], s.scalars[0].to<double>())};
  };
  c.reference = [](const Sample& s) {
    const double scale = s.scalars[0].to<double>();
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(),
                                               [&](const std::vector<double>& v) { return v[0] * v[1] * scale; })};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("creation and random") {
  return std::vector<ErrorCase>{
      {"eye with negative n", [](Device d) { eye(-1, TensorOptions(DType::kF32, d)); },
       ErrorKind::kValue, {"eye", "-1"}},
      {"linspace with negative steps", [](Device d) { linspace(0, 1, -1, TensorOptions(DType::kF32, d)); },
       ErrorKind::kValue, {"linspace", "non-negative"}},
      {"tril of a 1-D tensor", [](Device d) { tril(ones({3}, d)); }, ErrorKind::kValue,
       {"tril", "at least 2 dimensions"}},
      {"triu_out of the wrong shape",
       [](Device d) {
         Tensor out = empty({2, 2}, d);
         triu_out(out, ones({3, 3}, d));
       },
       ErrorKind::kValue, {"triu", "[2, 2]", "[3, 3]"}},
      {"randint with low >= high", [](Device d) { randint(5, 3, {2}, TensorOptions(DType::kI64, d)); },
       ErrorKind::kValue, {"randint", "from=5", "to=3"}},
      {"randint beyond uint8", [](Device d) { randint(0, 300, {2}, TensorOptions(DType::kU8, d)); },
       ErrorKind::kValue, {"randint", "uint8"}},
      {"bernoulli_ with p > 1",
       [](Device d) {
         Tensor t = ones({2}, d);
         bernoulli_(t, 1.5);
       },
       ErrorKind::kValue, {"bernoulli_", "1.5"}},
      {"bernoulli with a probability tensor outside [0, 1]",
       [](Device d) { bernoulli(full({3}, -0.25, TensorOptions(DType::kF32, d))); },
       ErrorKind::kValue, {"bernoulli_", "[0, 1]", "-0.25"}},
      {"bernoulli of integer p", [](Device d) { bernoulli(ones({2}, TensorOptions(DType::kI32, d))); },
       ErrorKind::kType, {"bernoulli", "int32"}},
      {"dropout with p > 1", [](Device d) { dropout(ones({2}, d), 1.5); }, ErrorKind::kValue,
       {"dropout", "between 0 and 1", "1.5"}},
      {"dropout of integers", [](Device d) { dropout(ones({2}, TensorOptions(DType::kI32, d)), 0.5); },
       ErrorKind::kType, {"dropout", "int32"}},
  };
}

}  // namespace tessera::conformance
