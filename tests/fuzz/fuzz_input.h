// Reads a fuzzer's bytes as the choices of a structured fuzz target: small
// integers, picks from a list, floats. Past the end every read gives 0,
// so every input, however short, is a complete program of choices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return empty() ? 0 : size_ - pos_; }

  uint8_t byte() { return empty() ? 0 : data_[pos_++]; }
  bool boolean() { return (byte() & 1) != 0; }

  template <typename T>
  T raw() {
    T v{};
    const size_t n = std::min(sizeof(T), remaining());
    if (n > 0) std::memcpy(&v, data_ + pos_, n);
    pos_ += n;
    return v;
  }

  // An integer in [lo, hi] (both included; lo <= hi).
  int64_t in_range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span == 0) return lo;
    const uint64_t v = span < 0xff ? byte() : span < 0xffff ? raw<uint16_t>() : raw<uint64_t>();
    return static_cast<int64_t>(static_cast<uint64_t>(lo) +
                                (span == UINT64_MAX ? v : v % (span + 1)));
  }

  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(in_range(0, static_cast<int64_t>(items.size()) - 1))];
  }

  // The rest of the input.
  std::string_view rest() {
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace tessera::fuzz
