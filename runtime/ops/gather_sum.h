// Weighted sums of gathered positions along one dim, the building block of
// the resampling composites (adaptive pooling, upsampling and their
// backward): out[.., r, ..] = sum over the terms (i, w) of group r of
// w * x[.., i, ..]. Groups are built on the host (they index one dim, so
// they are small next to x) and run on x's device as index_select, mul,
// where and sum. Positions outside a group are masked with `where`, never
// multiplied by 0, so an inf or NaN stays in the groups that hold it.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"

namespace tessera::resample {

struct Term {
  int64_t index;
  double weight = 1.0;
};
using Groups = std::vector<std::vector<Term>>;

// x's dim `dim` (of size n, every term's index below n) becomes
// groups.size() long. With weighted false every weight must be 1 and
// nothing is multiplied. An empty group sums to 0.
Tensor gather_sum(const Tensor& x, int64_t dim, const Groups& groups, bool weighted);

// The transpose of `groups` over n positions: group i of the result holds
// (r, w) for each term (i, w) of group r (what a backward gathers).
Groups transpose(const Groups& groups, int64_t n);

}  // namespace tessera::resample
