// Views: new sizes, strides and offset over the same storage, never a copy
// (except reshape, which copies when no view exists, as in PyTorch).
#include <algorithm>
#include <numeric>
#include <optional>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace tessera {

namespace {

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->storage_offset = offset;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = base.dtype();
  impl->refresh();
  return Tensor(std::move(impl));
}

// Strides that let a tensor of old sizes/strides be seen as new_sizes
// without copying, or nullopt. The same rule as PyTorch's computeStride:
// new dims must each lie within one chunk of old dims that are contiguous
// with respect to each other.
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& new_sizes, int64_t numel) {
  Shape new_strides(new_sizes.size(), 1);
  if (old_sizes.empty()) return new_strides;  // a 0-d tensor: all sizes are 1
  if (numel == 0) {
    if (old_sizes == new_sizes) return old_strides;
    return contiguous_strides(new_sizes);
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    bool chunk_ends = tensor_d == 0 ||
                      (old_sizes[tensor_d - 1] != 1 &&
                       old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

// Resolves one -1 in sizes against numel.
Shape infer_size(const Shape& sizes, int64_t numel, const char* op, const Tensor& t) {
  Shape out = sizes;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      TESSERA_CHECK(!infer, ValueError, op, ": only one dimension can be inferred, got ",
                    shape_to_string(sizes));
      infer = i;
    } else {
      TESSERA_CHECK(sizes[i] >= 0, ValueError, op, ": invalid shape dimension ", sizes[i],
                    " in ", shape_to_string(sizes));
      known = checked_mul(known, sizes[i], op);
    }
  }
  if (infer) {
    TESSERA_CHECK(known != 0 && numel % known == 0, ValueError, op, ": shape ",
                  shape_to_string(sizes), " is invalid for input of size ", numel, " (",
                  describe(t), ")");
    out[*infer] = numel / known;
  } else {
    TESSERA_CHECK(known == numel, ValueError, op, ": shape ", shape_to_string(sizes),
                  " is invalid for input of size ", numel, " (", describe(t), ")");
  }
  return out;
}

}  // namespace

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  TESSERA_CHECK(dim() > 0, IndexError, "slice: cannot slice a 0-d tensor");
  d = wrap_dim(d, dim(), "slice");
  TESSERA_CHECK(step > 0, ValueError, "slice: step must be positive, got ", step);
  int64_t n = sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(n);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  Shape sz = sizes(), st = strides();
  sz[d] = (e - s + step - 1) / step;
  int64_t offset = storage_offset() + s * st[d];
  st[d] = checked_mul(st[d], step, "slice");
  return make_view(*this, std::move(sz), std::move(st), offset);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  TESSERA_CHECK(dim() > 0, IndexError, "select: cannot be applied to a 0-d tensor");
  d = wrap_dim(d, dim(), "select");
  int64_t n = sizes()[d];
  TESSERA_CHECK(index >= -n && index < n, IndexError, "select: index ", index,
                " out of range for tensor of size ", shape_to_string(sizes()),
                " at dimension ", d);
  if (index < 0) index += n;
  Shape sz = sizes(), st = strides();
  int64_t offset = storage_offset() + index * st[d];
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return make_view(*this, std::move(sz), std::move(st), offset);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  TESSERA_CHECK(dim() > 0, IndexError, "narrow: cannot be applied to a 0-d tensor");
  d = wrap_dim(d, dim(), "narrow");
  int64_t n = sizes()[d];
  TESSERA_CHECK(start >= -n && start <= n, IndexError, "narrow: start ", start,
                " out of range for dimension ", d, " of size ", n);
  if (start < 0) start += n;
  TESSERA_CHECK(length >= 0 && start + length <= n, ValueError, "narrow: start (", start,
                ") + length (", length, ") exceeds dimension size (", n, ")");
  return slice(d, start, start + length);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  int64_t n = dim();
  d0 = wrap_dim(d0, n, "transpose");
  d1 = wrap_dim(d1, n, "transpose");
  if (n == 0) return make_view(*this, sizes(), strides(), storage_offset());
  Shape sz = sizes(), st = strides();
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::t() const {
  TESSERA_CHECK(dim() <= 2, ValueError, "t: expects a tensor with <= 2 dimensions, got ",
                describe(*this));
  return dim() < 2 ? transpose(0, 0) : transpose(0, 1);
}

Tensor Tensor::permute(const Shape& dims) const {
  int64_t n = dim();
  TESSERA_CHECK(static_cast<int64_t>(dims.size()) == n, ValueError,
                "permute: number of dims don't match: tensor has ", n, " but got ",
                shape_to_string(dims));
  std::vector<bool> seen(n, false);
  Shape sz(n), st(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[i], n, "permute");
    TESSERA_CHECK(!seen[d], ValueError, "permute: repeated dim ", dims[i], " in ",
                  shape_to_string(dims));
    seen[d] = true;
    sz[i] = sizes()[d];
    st[i] = strides()[d];
  }
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::expand(const Shape& target) const {
  if (target == sizes()) return *this;  // nothing to broadcast: pointwise ops' common case
  int64_t n = dim(), m = static_cast<int64_t>(target.size());
  TESSERA_CHECK(m >= n, ValueError, "expand: the number of sizes provided (", m,
                ") must be greater or equal to the number of dimensions in the tensor (",
                n, ")");
  Shape sz(m), st(m);
  for (int64_t i = m - 1; i >= 0; --i) {
    int64_t src = i - (m - n);
    int64_t want = target[i];
    if (src < 0) {
      TESSERA_CHECK(want >= 0, ValueError, "expand: the expanded size ", want,
                    " is not allowed in a leading, non-existing dimension ", i);
      sz[i] = want;
      st[i] = 0;
      continue;
    }
    int64_t have = sizes()[src];
    if (want == -1) want = have;
    TESSERA_CHECK(want >= 0, ValueError, "expand: invalid size ", want);
    if (have == want) {
      sz[i] = have;
      st[i] = strides()[src];
    } else {
      TESSERA_CHECK(have == 1, ValueError, "expand: the expanded size of the tensor (", want,
                    ") must match the existing size (", have, ") at non-singleton dimension ",
                    i, ". Target sizes: ", shape_to_string(target),
                    ". Tensor sizes: ", shape_to_string(sizes()));
      sz[i] = want;
      st[i] = 0;
    }
  }
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::view(const Shape& new_sizes) const {
  Shape sz = infer_size(new_sizes, numel(), "view", *this);
  std::optional<Shape> st = view_strides(sizes(), strides(), sz, numel());
  TESSERA_CHECK(st.has_value(), ValueError, "view: size ", shape_to_string(sz),
                " is not compatible with the input's size ", shape_to_string(sizes()),
                " and stride ", shape_to_string(strides()),
                " (at least one dimension spans across two contiguous subspaces); use reshape "
                "instead");
  return make_view(*this, std::move(sz), std::move(*st), storage_offset());
}

Tensor Tensor::reshape(const Shape& new_sizes) const {
  Shape sz = infer_size(new_sizes, numel(), "reshape", *this);
  if (std::optional<Shape> st = view_strides(sizes(), strides(), sz, numel())) {
    return make_view(*this, std::move(sz), std::move(*st), storage_offset());
  }
  return clone().view(sz);
}

Tensor Tensor::flatten() const { return reshape({numel()}); }

Tensor Tensor::squeeze() const {
  Shape sz, st;
  for (int64_t i = 0; i < dim(); ++i) {
    if (sizes()[i] != 1) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  }
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim(d, dim(), "squeeze");
  Shape sz = sizes(), st = strides();
  if (dim() > 0 && sz[d] == 1) {
    sz.erase(sz.begin() + d);
    st.erase(st.begin() + d);
  }
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  Shape sz = sizes(), st = strides();
  int64_t stride = d < dim() ? sz[d] * st[d] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return make_view(*this, std::move(sz), std::move(st), storage_offset());
}

Tensor Tensor::as_strided(const Shape& sz, const Shape& st,
                          std::optional<int64_t> offset) const {
  return from_storage(storage(), dtype(), sz, st, offset.value_or(storage_offset()));
}

}  // namespace tessera
