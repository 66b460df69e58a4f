// SmallVector<T, N>: a vector that keeps up to N elements inside itself and
// moves to the heap only beyond that. Shape (sizes, strides, dims) is one:
// nearly every tensor has at most 6 dims, so making a tensor, a view or a
// runtime view of a torch tensor allocates no memory for its layout (a
// std::vector cost two heap allocations per tensor, the largest share of
// an op's fixed cost). The interface is std::vector's, for trivially
// copyable T only, so elements move with memcpy.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessera {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");
  static_assert(N > 0, "SmallVector needs inline room for at least one element");

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() noexcept = default;
  explicit SmallVector(size_type n) { resize(n); }
  SmallVector(size_type n, const T& value) { assign(n, value); }
  template <typename It>
    requires(!std::is_integral_v<It>)
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  // Implicit, so that code holding a std::vector passes it where a Shape is taken.
  SmallVector(const std::vector<T>& values) { assign(values.begin(), values.end()); }  // NOLINT
  SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  ~SmallVector() { release(); }

  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  std::vector<T> to_std_vector() const { return std::vector<T>(begin(), end()); }

  // -- Size and capacity.
  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  static constexpr size_type inline_capacity() noexcept { return N; }
  size_type max_size() const noexcept { return static_cast<size_type>(-1) / sizeof(T); }

  void reserve(size_type n) {
    if (n > capacity_) grow_to(n);
  }
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T& value) {
    reserve(n);
    for (size_type i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void clear() noexcept { size_ = 0; }
  void shrink_to_fit() noexcept {}

  // -- Element access.
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T& operator[](size_type i) noexcept { return data_[i]; }
  const T& operator[](size_type i) const noexcept { return data_[i]; }
  T& at(size_type i) {
    if (i >= size_) throw std::out_of_range("SmallVector::at: index out of range");
    return data_[i];
  }
  const T& at(size_type i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at: index out of range");
    return data_[i];
  }
  T& front() noexcept { return data_[0]; }
  const T& front() const noexcept { return data_[0]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }

  // -- Iterators.
  iterator begin() noexcept { return data_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator cbegin() const noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  // -- Modifiers.
  void assign(size_type n, const T& value) {
    clear();
    resize(n, value);
  }
  template <typename It>
    requires(!std::is_integral_v<It>)
  void assign(It first, It last) {
    clear();
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      reserve(static_cast<size_type>(std::distance(first, last)));
    }
    for (; first != last; ++first) push_back(*first);
  }
  void assign(std::initializer_list<T> values) { assign(values.begin(), values.end()); }

  void push_back(const T& value) {
    if (size_ == capacity_) {
      const T copy = value;  // value may live in this vector's old buffer
      grow_to(next_capacity(size_ + 1));
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = value;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() noexcept { --size_; }

  iterator insert(const_iterator pos, const T& value) { return insert(pos, size_type{1}, value); }
  iterator insert(const_iterator pos, size_type n, const T& value) {
    const size_type at = index_of(pos);
    const T copy = value;
    open_gap(at, n);
    std::fill_n(data_ + at, n, copy);
    return data_ + at;
  }
  template <typename It>
    requires(!std::is_integral_v<It>)
  iterator insert(const_iterator pos, It first, It last) {
    const size_type at = index_of(pos);
    SmallVector values(first, last);  // first..last may point into this vector
    open_gap(at, values.size());
    std::copy(values.begin(), values.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_type at = index_of(first), n = static_cast<size_type>(last - first);
    std::memmove(data_ + at, data_ + at + n, (size_ - at - n) * sizeof(T));
    size_ -= n;
    return data_ + at;
  }
  void swap(SmallVector& other) noexcept {
    SmallVector tmp(std::move(other));
    other = std::move(*this);
    *this = std::move(tmp);
  }

  // -- Comparison (with each other and, through the implicit conversion,
  // with std::vector).
  friend bool operator==(const SmallVector& a, const SmallVector& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend auto operator<=>(const SmallVector& a, const SmallVector& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool is_inline() const noexcept { return data_ == inline_; }

  size_type index_of(const_iterator pos) const noexcept {
    return static_cast<size_type>(pos - data_);
  }

  size_type next_capacity(size_type needed) const {
    return std::max(needed, capacity_ > max_size() / 2 ? max_size() : capacity_ * 2);
  }

  void grow_to(size_type n) {
    if (n > max_size()) throw std::length_error("SmallVector: too many elements");
    T* bigger = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_ != 0) std::memcpy(bigger, data_, size_ * sizeof(T));
    if (!is_inline()) ::operator delete(data_);
    data_ = bigger;
    capacity_ = n;
  }

  // Moves [at, size) up by n, making size n larger.
  void open_gap(size_type at, size_type n) {
    if (size_ + n > capacity_) grow_to(next_capacity(size_ + n));
    std::memmove(data_ + at + n, data_ + at, (size_ - at) * sizeof(T));
    size_ += n;
  }

  // Takes other's elements (its heap buffer, if it has one) and leaves it empty.
  void take(SmallVector& other) noexcept {
    if (other.is_inline()) {
      data_ = inline_;
      capacity_ = N;
      if (other.size_ != 0) std::memcpy(inline_, other.inline_, other.size_ * sizeof(T));
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = N;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  void release() noexcept {
    if (!is_inline()) ::operator delete(data_);
    data_ = inline_;
    capacity_ = N;
    size_ = 0;
  }

  T* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = N;
  T inline_[N];
};

}  // namespace tessera
