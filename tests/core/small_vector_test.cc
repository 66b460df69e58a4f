// SmallVector, the type of Shape: std::vector's behaviour on both sides of
// the inline capacity, and that small shapes never touch the heap.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/core/small_vector.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/ops.h"

using namespace tessera;

namespace {
using Small = SmallVector<int64_t, 4>;

std::vector<int64_t> as_std(const Small& v) { return std::vector<int64_t>(v.begin(), v.end()); }
}  // namespace

TEST_CASE("SmallVector: construction matches std::vector", "[small_vector]") {
  CHECK(Small().empty());
  CHECK(as_std(Small(3)) == std::vector<int64_t>{0, 0, 0});
  CHECK(as_std(Small(6, 7)) == std::vector<int64_t>(6, 7));
  CHECK(as_std(Small{1, 2, 3, 4, 5}) == std::vector<int64_t>{1, 2, 3, 4, 5});
  const std::vector<int64_t> src{9, 8, 7};
  CHECK(as_std(Small(src)) == src);
  CHECK(as_std(Small(src.rbegin(), src.rend())) == std::vector<int64_t>{7, 8, 9});
  CHECK(Small(src).to_std_vector() == src);
}

TEST_CASE("SmallVector: stays inline up to N, then moves to the heap", "[small_vector]") {
  Small v{1, 2, 3, 4};
  const int64_t* inline_data = v.data();
  CHECK(v.capacity() == 4);
  v.push_back(5);  // the fifth element moves everything to the heap
  CHECK(v.data() != inline_data);
  CHECK(v.capacity() >= 5);
  CHECK(as_std(v) == std::vector<int64_t>{1, 2, 3, 4, 5});
  for (int64_t i = 6; i <= 100; ++i) v.push_back(i);
  CHECK(v.size() == 100);
  CHECK(v.front() == 1);
  CHECK(v.back() == 100);
  // push_back of an element of the vector itself while it grows
  Small w{1, 2, 3, 4};
  w.push_back(w[0]);
  CHECK(as_std(w) == std::vector<int64_t>{1, 2, 3, 4, 1});
}

TEST_CASE("SmallVector: copy and move, inline and on the heap", "[small_vector]") {
  for (int n : {2, 9}) {
    Small a;
    for (int i = 0; i < n; ++i) a.push_back(i * 10);
    Small copy(a);
    CHECK(copy == a);
    copy[0] = -1;
    CHECK(a[0] == 0);  // a deep copy
    Small moved(std::move(copy));
    CHECK(moved[0] == -1);
    CHECK(moved.size() == static_cast<size_t>(n));
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    Small assigned{5};
    assigned = a;
    CHECK(assigned == a);
    assigned = std::move(moved);
    CHECK(assigned[0] == -1);
    assigned = assigned;  // self-assignment keeps the elements
    CHECK(assigned.size() == static_cast<size_t>(n));
    Small other{1};
    other.swap(assigned);
    CHECK(other[0] == -1);
    CHECK(as_std(assigned) == std::vector<int64_t>{1});
  }
}

TEST_CASE("SmallVector: insert, erase, resize, assign", "[small_vector]") {
  Small v{1, 2, 3};
  v.insert(v.begin(), 0);
  CHECK(as_std(v) == std::vector<int64_t>{0, 1, 2, 3});
  v.insert(v.begin() + 2, 2, 9);  // grows past N
  CHECK(as_std(v) == std::vector<int64_t>{0, 1, 9, 9, 2, 3});
  v.insert(v.end(), {7, 8});
  CHECK(as_std(v) == std::vector<int64_t>{0, 1, 9, 9, 2, 3, 7, 8});
  v.insert(v.begin(), v.begin() + 6, v.end());  // a range of itself
  CHECK(as_std(v) == std::vector<int64_t>{7, 8, 0, 1, 9, 9, 2, 3, 7, 8});
  v.erase(v.begin());
  CHECK(v.front() == 8);
  v.erase(v.begin() + 1, v.begin() + 5);
  CHECK(as_std(v) == std::vector<int64_t>{8, 2, 3, 7, 8});
  v.pop_back();
  v.resize(7, 4);
  CHECK(as_std(v) == std::vector<int64_t>{8, 2, 3, 7, 4, 4, 4});
  v.resize(2);
  CHECK(as_std(v) == std::vector<int64_t>{8, 2});
  v.assign(3, 1);
  CHECK(as_std(v) == std::vector<int64_t>{1, 1, 1});
  v.emplace_back(2);
  v.clear();
  CHECK(v.empty());
  CHECK_THROWS_AS(v.at(0), std::out_of_range);
}

TEST_CASE("SmallVector: compares as std::vector does", "[small_vector]") {
  CHECK(Small{1, 2} == Small{1, 2});
  CHECK(Small{1, 2} != Small{1, 2, 3});
  CHECK(Small{1, 2} < Small{1, 2, 3});
  CHECK(Small{1, 3} > Small{1, 2, 3});
  CHECK(Small{1, 2} == std::vector<int64_t>{1, 2});
  std::map<Small, int> by_shape{{Small{2, 3}, 1}, {Small{1}, 2}};
  CHECK(by_shape.begin()->second == 2);
}

TEST_CASE("Shape: tensors of up to 6 dims hold their layout inline", "[small_vector]") {
  Tensor t = zeros({2, 3, 4, 5, 1, 2});
  CHECK(t.sizes().capacity() == Shape::inline_capacity());
  CHECK(t.sizes() == Shape{2, 3, 4, 5, 1, 2});
  CHECK(t.strides() == Shape{120, 40, 10, 2, 2, 1});
  Tensor big = zeros({1, 1, 1, 1, 1, 1, 1, 2});  // more dims than inline room: still right
  CHECK(big.dim() == 8);
  CHECK(big.numel() == 2);
  CHECK(big.flatten().sizes() == Shape{2});
}
