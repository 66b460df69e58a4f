// Views: sizes, strides, storage offsets, shared storage and contiguity of
// slice/select/narrow/transpose/permute/expand/view/reshape/squeeze/
// unsqueeze/as_strided/contiguous/flatten/t, against PyTorch's results, and
// the errors they raise.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"
#include "tests/ops/reference.h"

using namespace tessera;
using tessera::testing::iota;
using tessera::testing::make_tensor;
using tessera::testing::MessageContains;
using tessera::testing::read_strided;
using tessera::testing::thrown_kind;

namespace {

using V = std::vector<double>;

// 0..23 as float32 [2, 3, 4].
Tensor base3() { return make_tensor(iota(24), {2, 3, 4}); }
Tensor base1(int64_t n = 10) { return make_tensor(iota(n), {n}); }

// The values of base at the elements a view with (sizes, strides, offset)
// sees, computed by hand.
V gather(const V& flat, const Shape& sizes, const Shape& strides, int64_t offset) {
  V out;
  int64_t n = tessera::testing::naive_numel(sizes);
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = offset;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    out.push_back(flat[off]);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Checks sizes/strides/offset, shared storage with base, and values.
void check_view(const Tensor& v, const Tensor& base, const Shape& sizes,
                const Shape& strides, int64_t offset) {
  CHECK(v.sizes() == sizes);
  CHECK(v.strides() == strides);
  CHECK(v.storage_offset() == offset);
  CHECK(v.storage().get() == base.storage().get());
  CHECK(v.dtype() == base.dtype());
  CHECK(v.numel() == tessera::testing::naive_numel(sizes));
  // Every base here is contiguous from offset 0: its values are the storage.
  REQUIRE(base.is_contiguous());
  REQUIRE(base.storage_offset() == 0);
  V flat = read_strided(base);
  V expected = gather(flat, sizes, strides, offset);
  CHECK(tessera::testing::close_report(v.to_vector<double>(), expected) == "");
}

}  // namespace

TEST_CASE("views: sizes, strides and element access basics", "[views]") {
  Tensor t = base3();
  CHECK(t.dim() == 3);
  CHECK(t.sizes() == Shape{2, 3, 4});
  CHECK(t.strides() == Shape{12, 4, 1});
  CHECK(t.size(-1) == 4);
  CHECK(t.size(0) == 2);
  CHECK(t.stride(-2) == 4);
  CHECK(t.numel() == 24);
  CHECK(t.nbytes() == 96);
  CHECK(t.itemsize() == 4);
  CHECK(t.is_contiguous());
  CHECK(contiguous_strides({2, 3, 4}) == Shape{12, 4, 1});
  CHECK(contiguous_strides({}) == Shape{});
  CHECK(contiguous_strides({2, 0, 3}) == Shape{3, 3, 1});
  CHECK_THROWS_AS(t.size(3), IndexError);
  CHECK_THROWS_AS(t.stride(-4), IndexError);
  CHECK(tessera::testing::close_report(t.to_vector<double>(), iota(24)) == "");
  CHECK(shape_to_string({2, 3}) == "[2, 3]");
  CHECK(shape_to_string({}) == "[]");
  CHECK(describe(zeros({2, 3})) == "float32[2, 3] on cpu:0");
  CHECK(wrap_dim(-1, 3, "myop") == 2);
  CHECK(wrap_dim(-3, 3, "myop") == 0);
  CHECK(wrap_dim(2, 3, "myop") == 2);
  CHECK_THROWS_MATCHES(wrap_dim(3, 3, "myop"), IndexError, MessageContains({"myop"}));
  CHECK_THROWS_MATCHES(wrap_dim(-4, 3, "myop"), IndexError, MessageContains({"myop"}));
  // item
  CHECK(make_tensor({2.5}, {}).item<double>() == 2.5);
  CHECK(make_tensor({7}, {1, 1}, DType::kI32).item<int64_t>() == 7);
  CHECK(make_tensor({7}, {1}, DType::kI64).item().is_integral());
  CHECK(make_tensor({1}, {}, DType::kBool).item().is_bool());
  CHECK_THROWS_AS(zeros({2}).item(), ValueError);
  CHECK(t.to_string().find("tensor(") != std::string::npos);
}

TEST_CASE("views: slice with steps, negative and missing bounds, clamping",
          "[views][slice]") {
  Tensor x = base1();
  check_view(x.slice(0, 1, 8, 2), x, {4}, {2}, 1);
  check_view(x.slice(0, std::nullopt, std::nullopt, 3), x, {4}, {3}, 0);
  check_view(x.slice(0, -3, std::nullopt), x, {3}, {1}, 7);
  check_view(x.slice(0, std::nullopt, -2), x, {8}, {1}, 0);
  check_view(x.slice(-1, -8, -1, 4), x, {2}, {4}, 2);
  check_view(x.slice(0, 5, 100), x, {5}, {1}, 5);
  check_view(x.slice(0, -100, 3), x, {3}, {1}, 0);
  check_view(x.slice(0, 0, 10, 20), x, {1}, {20}, 0);
  // Empty results.
  CHECK(x.slice(0, 8, 3).sizes() == Shape{0});
  CHECK(x.slice(0, 12, 20).sizes() == Shape{0});
  CHECK(x.slice(0, -1, -5).sizes() == Shape{0});

  Tensor t = base3();
  check_view(t.slice(2, 1, 3), t, {2, 3, 2}, {12, 4, 1}, 1);
  check_view(t.slice(1, 1, std::nullopt), t, {2, 2, 4}, {12, 4, 1}, 4);
  check_view(t.slice(-2, std::nullopt, std::nullopt, 2), t, {2, 2, 4}, {12, 8, 1}, 0);
  // Slicing a slice composes offsets and strides.
  check_view(t.slice(2, 1, std::nullopt).slice(2, 1, std::nullopt, 2), t,
             {2, 3, 1}, {12, 4, 2}, 2);
  CHECK_FALSE(t.slice(2, 1, 3).is_contiguous());
  CHECK(t.slice(0, 1, 2).is_contiguous());

  CHECK_THROWS_AS(t.slice(3, 0, 1), IndexError);
  CHECK_THROWS_MATCHES(t.slice(-4, 0, 1), IndexError, MessageContains({"slice"}));
  CHECK_THROWS_MATCHES(x.slice(0, 0, 5, 0), ValueError, MessageContains({"step"}));
  CHECK_THROWS_AS(x.slice(0, 5, 0, -1), ValueError);
}

TEST_CASE("views: writes through views reach the base", "[views]") {
  Tensor x = base1();
  Tensor s = x.slice(0, 1, 8, 2);
  s.fill_(-1);
  CHECK(tessera::testing::close_report(x.to_vector<double>(),
                                       V{0, -1, 2, -1, 4, -1, 6, -1, 8, 9}) == "");
  Tensor t = base3();
  Tensor col = t.select(2, 1);  // [2, 3] stride {12, 4}
  col.copy_(make_tensor({100, 101, 102, 103, 104, 105}, {2, 3}));
  V expect = iota(24);
  for (int i = 0; i < 6; ++i) expect[1 + 4 * i] = 100 + i;
  CHECK(tessera::testing::close_report(t.to_vector<double>(), expect) == "");
  // Through a transpose and a narrow.
  Tensor tr = t.transpose(0, 2).narrow(0, 3, 1);  // [1, 3, 2]: elements with k == 3
  tr.fill_(7);
  for (int i = 0; i < 6; ++i) expect[3 + 4 * i] = 7;
  CHECK(tessera::testing::close_report(t.to_vector<double>(), expect) == "");
  // Through a view of a view.
  t.view({6, 4}).select(0, 5).fill_(-5);
  for (int i = 20; i < 24; ++i) expect[i] = -5;
  CHECK(tessera::testing::close_report(t.to_vector<double>(), expect) == "");
  // And the base's writes are seen by the view.
  t.fill_(3);
  CHECK(tessera::testing::close_report(col.to_vector<double>(), V(6, 3.0)) == "");
}

TEST_CASE("views: select and narrow", "[views]") {
  Tensor t = base3();
  check_view(t.select(1, 2), t, {2, 4}, {12, 1}, 8);
  check_view(t.select(1, -1), t, {2, 4}, {12, 1}, 8);
  check_view(t.select(0, 1), t, {3, 4}, {4, 1}, 12);
  check_view(t.select(2, 3), t, {2, 3}, {12, 4}, 3);
  Tensor x = base1();
  Tensor e = x.select(0, 3);
  CHECK(e.dim() == 0);
  CHECK(e.storage_offset() == 3);
  CHECK(e.item<double>() == 3.0);
  CHECK_THROWS_MATCHES(t.select(0, 2), IndexError, MessageContains({"select"}));
  CHECK_THROWS_AS(t.select(0, -3), IndexError);
  CHECK_THROWS_AS(t.select(3, 0), IndexError);
  CHECK_THROWS_AS(e.select(0, 0), IndexError);

  check_view(t.narrow(2, 1, 2), t, {2, 3, 2}, {12, 4, 1}, 1);
  check_view(t.narrow(-2, 0, 3), t, {2, 3, 4}, {12, 4, 1}, 0);
  check_view(t.narrow(2, -2, 2), t, {2, 3, 2}, {12, 4, 1}, 2);  // start wraps
  check_view(t.narrow(1, 3, 0), t, {2, 0, 4}, {12, 4, 1}, 12);
  std::string msg;
  CHECK(thrown_kind([&] { t.narrow(2, 3, 2); }, &msg) != "none");
  CHECK(msg.find("narrow") != std::string::npos);
  CHECK(thrown_kind([&] { t.narrow(2, 0, -1); }) != "none");
  CHECK(thrown_kind([&] { t.narrow(2, 0, -1); }).rfind("other", 0) != 0);
  CHECK_THROWS_AS(t.narrow(3, 0, 1), IndexError);
}

TEST_CASE("views: transpose, t and permute", "[views]") {
  Tensor t = base3();
  Tensor tr = t.transpose(0, 2);
  check_view(tr, t, {4, 3, 2}, {1, 4, 12}, 0);
  CHECK_FALSE(tr.is_contiguous());
  check_view(t.transpose(-1, -3), t, {4, 3, 2}, {1, 4, 12}, 0);
  check_view(t.transpose(1, 1), t, {2, 3, 4}, {12, 4, 1}, 0);
  check_view(t.slice(2, 1, 3).transpose(1, 2), t, {2, 2, 3}, {12, 1, 4}, 1);
  CHECK_THROWS_MATCHES(t.transpose(0, 3), IndexError, MessageContains({"transpose"}));
  CHECK_THROWS_AS(t.transpose(-4, 0), IndexError);

  Tensor m = make_tensor(iota(6), {2, 3});
  check_view(m.t(), m, {3, 2}, {1, 3}, 0);
  check_view(m.t().t(), m, {2, 3}, {3, 1}, 0);
  Tensor v = base1(5);
  check_view(v.t(), v, {5}, {1}, 0);
  Tensor s = make_tensor({4}, {});
  CHECK(s.t().dim() == 0);
  CHECK_THROWS_MATCHES(t.t(), ValueError, MessageContains({"2 dimensions"}));

  check_view(t.permute({2, 0, 1}), t, {4, 2, 3}, {1, 12, 4}, 0);
  check_view(t.permute({-1, 0, 1}), t, {4, 2, 3}, {1, 12, 4}, 0);
  check_view(t.permute({0, 1, 2}), t, {2, 3, 4}, {12, 4, 1}, 0);
  check_view(t.permute({1, 2, 0}).permute({2, 0, 1}), t, {2, 3, 4}, {12, 4, 1}, 0);
  CHECK(s.permute({}).dim() == 0);
  CHECK_THROWS_MATCHES(t.permute({0, 1}), ValueError, MessageContains({"permute"}));
  CHECK_THROWS_MATCHES(t.permute({0, 1, 1}), ValueError, MessageContains({"permute"}));
  CHECK_THROWS_AS(t.permute({0, 1, -1, 2}), ValueError);
  CHECK_THROWS_AS(t.permute({0, 1, 3}), IndexError);
}

TEST_CASE("views: expand", "[views]") {
  Tensor c = make_tensor({1, 2, 3}, {3, 1});
  Tensor e = c.expand({3, 4});
  check_view(e, c, {3, 4}, {1, 0}, 0);
  CHECK_FALSE(e.is_contiguous());
  CHECK(tessera::testing::close_report(e.to_vector<double>(),
                                       V{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}) == "");
  check_view(c.expand({2, 3, 4}), c, {2, 3, 4}, {0, 1, 0}, 0);
  check_view(c.expand({-1, 4}), c, {3, 4}, {1, 0}, 0);
  check_view(c.expand({5, -1, -1}), c, {5, 3, 1}, {0, 1, 1}, 0);
  check_view(c.expand({3, 1}), c, {3, 1}, {1, 1}, 0);
  check_view(c.expand({3, 0}), c, {3, 0}, {1, 0}, 0);
  Tensor s = make_tensor({9}, {});
  check_view(s.expand({2, 2}), s, {2, 2}, {0, 0}, 0);
  // Expanding a view keeps its offset.
  Tensor t = base3();
  check_view(t.select(2, 1).unsqueeze(2).expand({2, 3, 5}), t, {2, 3, 5}, {12, 4, 0}, 1);

  CHECK_THROWS_MATCHES(c.expand({2, 4}), ValueError, MessageContains({"expand"}));
  CHECK_THROWS_AS(c.expand({4}), ValueError);          // fewer dims
  CHECK_THROWS_AS(c.expand({-1, 3, 4}), ValueError);   // -1 in a new dim
  CHECK_THROWS_AS(c.expand({3, -2}), ValueError);
}

TEST_CASE("views: view", "[views]") {
  Tensor t = base3();
  check_view(t.view({6, 4}), t, {6, 4}, {4, 1}, 0);
  check_view(t.view({-1, 2}), t, {12, 2}, {2, 1}, 0);
  check_view(t.view({4, -1, 3}), t, {4, 2, 3}, {6, 3, 1}, 0);
  check_view(t.view({24}), t, {24}, {1}, 0);
  check_view(t.view({1, 24, 1}), t, {1, 24, 1}, {24, 1, 1}, 0);
  // Non-contiguous but compatible: splitting a dim of a transposed tensor.
  Tensor tr = t.transpose(0, 1);  // [3, 2, 4], strides {4, 12, 1}
  check_view(tr.view({3, 2, 2, 2}), t, {3, 2, 2, 2}, {4, 12, 2, 1}, 0);
  // Keeps the offset of a sliced tensor.
  check_view(t.select(0, 1).view({12}), t, {12}, {1}, 12);
  // Expanded dims split into stride-0 dims.
  Tensor c = make_tensor({1, 2, 3}, {3, 1});
  check_view(c.expand({3, 4}).view({3, 2, 2}), c, {3, 2, 2}, {1, 0, 0}, 0);
  // 0-d <-> one element.
  Tensor s = make_tensor({5}, {});
  check_view(s.view({1, 1}), s, {1, 1}, {1, 1}, 0);
  CHECK(s.view({1}).view({}).dim() == 0);
  // Zero-size.
  Tensor z = zeros({0, 3});
  CHECK(z.view({3, 0}).sizes() == Shape{3, 0});
  CHECK(z.view({-1}).sizes() == Shape{0});
  CHECK(z.view({2, -1, 3}).sizes() == Shape{2, 0, 3});

  // Size-1 dims with any stride do not block merging; real gaps do.
  Tensor g = t.select(1, 0).unsqueeze(1);  // [2, 1, 4], strides {12, 4, 1}
  check_view(g.view({2, 4}), t, {2, 4}, {12, 1}, 0);
  CHECK_THROWS_AS(g.view({8}), ValueError);
  CHECK_THROWS_MATCHES(tr.view({3, 8}), ValueError, MessageContains({"view"}));
  CHECK_THROWS_AS(t.transpose(1, 2).view({2, 12}), ValueError);
  CHECK_THROWS_AS(c.expand({3, 4}).view({12}), ValueError);
  CHECK_THROWS_MATCHES(t.view({5, 5}), ValueError, MessageContains({"[5, 5]", "24"}));
  CHECK_THROWS_AS(t.view({-1, -1}), ValueError);
  CHECK_THROWS_AS(t.view({-1, 5}), ValueError);
  CHECK_THROWS_AS(t.view({-2, 12}), ValueError);
  CHECK_THROWS_AS(z.view({-1, 0}), ValueError);
}

TEST_CASE("views: reshape views when it can and copies when it must", "[views]") {
  Tensor t = base3();
  Tensor r = t.reshape({4, 6});
  check_view(r, t, {4, 6}, {6, 1}, 0);
  check_view(t.transpose(0, 1).reshape({3, 2, 2, -1}), t, {3, 2, 2, 2}, {4, 12, 2, 1}, 0);

  Tensor tr = t.transpose(1, 2);  // [2, 4, 3]
  Tensor c = tr.reshape({2, 12});
  CHECK(c.sizes() == Shape{2, 12});
  CHECK(c.is_contiguous());
  CHECK(c.strides() == Shape{12, 1});
  CHECK(c.storage().get() != t.storage().get());
  V expected = read_strided(tr);
  CHECK(tessera::testing::close_report(c.to_vector<double>(), expected) == "");
  // The copy is independent of the base.
  c.fill_(0);
  CHECK(tessera::testing::close_report(t.to_vector<double>(), iota(24)) == "");

  Tensor e = make_tensor({1, 2, 3}, {3, 1}).expand({3, 2});
  Tensor ec = e.reshape({6});
  CHECK(tessera::testing::close_report(ec.to_vector<double>(), V{1, 1, 2, 2, 3, 3}) == "");
  Tensor s = make_tensor({5}, {});
  CHECK(s.reshape({1}).sizes() == Shape{1});
  CHECK(s.reshape({-1}).sizes() == Shape{1});
  CHECK_THROWS_MATCHES(t.reshape({7, -1}), ValueError, MessageContains({"24"}));
}

TEST_CASE("views: squeeze and unsqueeze", "[views]") {
  Tensor a = make_tensor(iota(6), {1, 3, 1, 2});
  check_view(a.squeeze(), a, {3, 2}, {2, 1}, 0);
  check_view(a.squeeze(0), a, {3, 1, 2}, {2, 2, 1}, 0);
  check_view(a.squeeze(1), a, {1, 3, 1, 2}, {6, 2, 2, 1}, 0);
  check_view(a.squeeze(-2), a, {1, 3, 2}, {6, 2, 1}, 0);
  CHECK_THROWS_MATCHES(a.squeeze(4), IndexError, MessageContains({"squeeze"}));
  CHECK_THROWS_AS(a.squeeze(-5), IndexError);
  Tensor one = make_tensor({3}, {1, 1});
  CHECK(one.squeeze().dim() == 0);
  CHECK(one.squeeze().item<double>() == 3);

  Tensor m = make_tensor(iota(6), {3, 2});
  check_view(m.unsqueeze(0), m, {1, 3, 2}, {6, 2, 1}, 0);
  check_view(m.unsqueeze(1), m, {3, 1, 2}, {2, 2, 1}, 0);
  check_view(m.unsqueeze(2), m, {3, 2, 1}, {2, 1, 1}, 0);
  check_view(m.unsqueeze(-1), m, {3, 2, 1}, {2, 1, 1}, 0);
  check_view(m.unsqueeze(-3), m, {1, 3, 2}, {6, 2, 1}, 0);
  CHECK_THROWS_MATCHES(m.unsqueeze(3), IndexError, MessageContains({"unsqueeze"}));
  CHECK_THROWS_AS(m.unsqueeze(-4), IndexError);
  Tensor s = make_tensor({5}, {});
  check_view(s.unsqueeze(0), s, {1}, {1}, 0);
  check_view(s.unsqueeze(-1), s, {1}, {1}, 0);
  // On a transposed view.
  check_view(m.t().unsqueeze(1), m, {2, 1, 3}, {1, 6, 2}, 0);
  check_view(m.t().unsqueeze(1).squeeze(1), m, {2, 3}, {1, 2}, 0);
}

TEST_CASE("views: as_strided", "[views]") {
  Tensor x = make_tensor(iota(12), {12});
  Tensor w = x.as_strided({3, 3}, {1, 1});
  check_view(w, x, {3, 3}, {1, 1}, 0);
  CHECK(tessera::testing::close_report(w.to_vector<double>(),
                                       V{0, 1, 2, 1, 2, 3, 2, 3, 4}) == "");
  check_view(x.as_strided({2, 2}, {4, 2}, 3), x, {2, 2}, {4, 2}, 3);
  // Without an offset: the tensor's own.
  Tensor v = x.slice(0, 3, std::nullopt);
  check_view(v.as_strided({2}, {2}), x, {2}, {2}, 3);
  check_view(x.as_strided({}, {}, 11), x, {}, {}, 11);
  check_view(x.as_strided({4, 3}, {1, 4}), x, {4, 3}, {1, 4}, 0);
  CHECK_FALSE(x.as_strided({4, 3}, {1, 4}).is_contiguous());
  CHECK(x.as_strided({3, 4}, {4, 1}, 0).is_contiguous());
  // Out of bounds and malformed.
  CHECK_THROWS_AS(x.as_strided({3, 3}, {4, 1}, 2), ValueError);
  CHECK_THROWS_AS(x.as_strided({13}, {1}), ValueError);
  CHECK_THROWS_AS(x.as_strided({2, 2}, {1}), ValueError);
  CHECK_THROWS_AS(x.as_strided({2}, {-1}, 5), ValueError);
  CHECK_THROWS_AS(x.as_strided({2}, {1}, -1), ValueError);
}

TEST_CASE("views: contiguous, clone and flatten", "[views]") {
  Tensor t = base3();
  Tensor same = t.contiguous();
  CHECK(same.storage().get() == t.storage().get());
  CHECK(same.data_ptr() == t.data_ptr());
  CHECK(same.strides() == t.strides());

  Tensor tr = t.permute({2, 0, 1});
  Tensor c = tr.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.sizes() == Shape{4, 2, 3});
  CHECK(c.strides() == Shape{6, 3, 1});
  CHECK(c.storage_offset() == 0);
  CHECK(c.storage().get() != t.storage().get());
  CHECK(tessera::testing::close_report(c.to_vector<double>(), read_strided(tr)) == "");
  CHECK(tessera::testing::close_report(read_strided(c), read_strided(tr)) == "");

  Tensor sl = t.slice(2, 1, 4, 2).contiguous();
  CHECK(sl.sizes() == Shape{2, 3, 2});
  CHECK(tessera::testing::close_report(
            read_strided(sl), V{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}) == "");

  Tensor cl = t.clone();
  CHECK(cl.storage().get() != t.storage().get());
  cl.fill_(1);
  CHECK(tessera::testing::close_report(t.to_vector<double>(), iota(24)) == "");
  Tensor cl2 = tr.clone();
  CHECK(cl2.is_contiguous());
  CHECK(tessera::testing::close_report(read_strided(cl2), read_strided(tr)) == "");

  Tensor f = t.flatten();
  check_view(f, t, {24}, {1}, 0);
  Tensor ft = tr.flatten();
  CHECK(ft.sizes() == Shape{24});
  CHECK(tessera::testing::close_report(ft.to_vector<double>(), read_strided(tr)) == "");
  Tensor s = make_tensor({5}, {});
  CHECK(s.flatten().sizes() == Shape{1});
  CHECK(make_tensor({5}, {1}).flatten().sizes() == Shape{1});
  CHECK(zeros({2, 0, 3}).flatten().sizes() == Shape{0});
}

TEST_CASE("views: is_contiguous flags", "[views]") {
  Tensor t = base3();
  CHECK(t.is_contiguous());
  CHECK_FALSE(t.transpose(0, 1).is_contiguous());
  CHECK_FALSE(t.select(2, 0).is_contiguous());
  CHECK(t.select(0, 1).is_contiguous());
  CHECK(t.slice(1, 1, 2).is_contiguous() == false);
  // Size-1 dims do not affect contiguity, whatever their stride.
  CHECK(t.slice(1, 1, 2).select(0, 0).is_contiguous());
  CHECK(t.as_strided({3, 1}, {1, 7}).is_contiguous());
  CHECK(base1(4).unsqueeze(1).is_contiguous());
  CHECK(t.transpose(0, 1).slice(0, 0, 1).squeeze(0).is_contiguous() == false);
  // Zero-size tensors are contiguous.
  CHECK(t.as_strided({0, 3}, {1, 5}).is_contiguous());
  // Expanded size-1 is still contiguous; real expansion is not.
  CHECK(make_tensor({1}, {1}).expand({1}).is_contiguous());
  CHECK_FALSE(make_tensor({1}, {1}).expand({3}).is_contiguous());
  // A 0-d tensor is contiguous.
  CHECK(make_tensor({1}, {}).is_contiguous());
  // Transposing twice restores contiguity.
  CHECK(t.transpose(0, 2).transpose(2, 0).is_contiguous());
}

TEST_CASE("views: to_vector of strided views reads in row-major order", "[views]") {
  Tensor t = base3();
  std::vector<Tensor> views = {
      t.transpose(0, 2), t.permute({1, 2, 0}), t.slice(2, 1, std::nullopt, 2),
      t.select(1, 1).t(), t.slice(0, 1, 2).expand({3, 3, 4}),
      t.as_strided({5, 3}, {2, 3}, 1)};
  for (const Tensor& v : views) {
    INFO(shape_to_string(v.sizes()) << " strides " << shape_to_string(v.strides()));
    CHECK(tessera::testing::close_report(v.to_vector<double>(), read_strided(v)) == "");
    std::vector<float> f = v.to_vector<float>();
    V fd(f.begin(), f.end());
    CHECK(tessera::testing::close_report(fd, read_strided(v)) == "");
  }
  std::vector<int32_t> iv = make_tensor({1.9, -2.9, 3}, {3}).to_vector<int32_t>();
  CHECK(iv == std::vector<int32_t>{1, -2, 3});
}

TEST_CASE("views: 0-d tensors", "[views]") {
  Tensor s = make_tensor({2.5}, {});
  CHECK(s.squeeze().dim() == 0);
  CHECK(s.squeeze(0).dim() == 0);
  CHECK(s.squeeze(-1).dim() == 0);
  CHECK(s.transpose(0, -1).dim() == 0);
  CHECK(s.expand({}).dim() == 0);
  CHECK(s.view({}).item<double>() == 2.5);
  CHECK(s.reshape({}).item<double>() == 2.5);
  CHECK(s.contiguous().item<double>() == 2.5);
  CHECK(s.clone().item<double>() == 2.5);
  CHECK_THROWS_AS(s.slice(0, 0, 1), IndexError);
  std::string kind = thrown_kind([&] { s.narrow(0, 0, 1); });
  CHECK((kind == "IndexError" || kind == "ValueError"));
  CHECK_THROWS_AS(s.squeeze(1), IndexError);
  CHECK_THROWS_AS(s.unsqueeze(2), IndexError);
}

TEST_CASE("views: clone materializes expanded and strided tensors", "[views]") {
  Tensor c = make_tensor({1, 2, 3}, {3, 1});
  Tensor e = c.expand({3, 4}).clone();
  CHECK(e.is_contiguous());
  CHECK(e.strides() == Shape{4, 1});
  CHECK(read_strided(e) == V{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  e.select(1, 0).fill_(0);  // independent elements now
  CHECK(read_strided(e) == V{0, 1, 1, 1, 0, 2, 2, 2, 0, 3, 3, 3});
  CHECK(read_strided(c) == V{1, 2, 3});
  Tensor t = base3();
  Tensor sc = t.slice(2, 1, 4, 2).select(0, 1).clone();
  CHECK(sc.sizes() == Shape{3, 2});
  CHECK(read_strided(sc) == V{13, 15, 17, 19, 21, 23});
  CHECK(sc.storage_offset() == 0);
}

TEST_CASE("views: from_storage checks the layout fits", "[views]") {
  Tensor t = base3();  // 24 floats
  Tensor v = Tensor::from_storage(t.storage(), DType::kF32, {2, 12}, {12, 1}, 0);
  CHECK(v.storage().get() == t.storage().get());
  CHECK(read_strided(v) == iota(24));
  Tensor w = Tensor::from_storage(t.storage(), DType::kF32, {3}, {2}, 5);
  CHECK(read_strided(w) == V{5, 7, 9});
  // Reinterpreting the bytes with another dtype of the same size.
  Tensor i = Tensor::from_storage(t.storage(), DType::kI32, {1}, {1}, 0);
  CHECK(i.to_vector<int64_t>()[0] == 0);  // 0.0f has all bits zero
  CHECK_THROWS_AS(Tensor::from_storage(t.storage(), DType::kF32, {25}, {1}, 0), ValueError);
  CHECK_THROWS_AS(Tensor::from_storage(t.storage(), DType::kF32, {3}, {2}, 20), ValueError);
  CHECK_THROWS_AS(Tensor::from_storage(t.storage(), DType::kF64, {13}, {1}, 0), ValueError);
  CHECK_THROWS_AS(Tensor::from_storage(t.storage(), DType::kF32, {2}, {1, 1}, 0), ValueError);
}

TEST_CASE("views: an undefined tensor throws instead of crashing", "[views]") {
  Tensor u;
  CHECK_FALSE(u.defined());
  std::string kind = thrown_kind([&] { (void)u.sizes(); });
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);
  kind = thrown_kind([&] { (void)add(u, u); });
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);
}

TEST_CASE("views: to_string prints like PyTorch for small tensors", "[views]") {
  CHECK(make_tensor({1, 2, 3, 4}, {2, 2}).to_string() ==
        "tensor([[1., 2.],\n        [3., 4.]])");
  CHECK(make_tensor({1, 2, 3, 4}, {2, 2}, DType::kI64).to_string() ==
        "tensor([[1, 2],\n        [3, 4]])");
  CHECK(make_tensor({1, 2}, {2}, DType::kI32).to_string() == "tensor([1, 2], dtype=int32)");
  CHECK(make_tensor({1.5, 0.25}, {2}, DType::kF16).to_string() ==
        "tensor([1.5000, 0.2500], dtype=float16)");
  CHECK(make_tensor({2.5}, {}).to_string() == "tensor(2.5000)");
  CHECK(make_tensor({1, 0}, {2}, DType::kBool).to_string() == "tensor([ True, False])");
  // A transposed view prints its logical order.
  CHECK(make_tensor({1, 2, 3, 4}, {2, 2}, DType::kI64).t().to_string() ==
        "tensor([[1, 3],\n        [2, 4]])");
}

// Kept last: with the bug it guards against, size(0) of a 0-d tensor read
// past the end of its sizes and could crash the test binary.
TEST_CASE("views: size() and stride() of a 0-d tensor throw IndexError", "[views]") {
  Tensor s = make_tensor({2.5}, {});
  CHECK_THROWS_AS(s.size(0), IndexError);
  CHECK_THROWS_AS(s.size(-1), IndexError);
  CHECK_THROWS_AS(s.stride(0), IndexError);
  CHECK_THROWS_AS(s.stride(-1), IndexError);
}
