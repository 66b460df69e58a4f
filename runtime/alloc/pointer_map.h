// A map from addresses to pointers for the caching allocator's table of
// live blocks: open addressing with linear probing and backward-shift
// deletion (no tombstones), at most half full. std::unordered_map costs a
// heap node per insert and a division per lookup, a sizeable share of an
// allocate+free pair that should take well under 100 ns. Not thread-safe:
// the allocator's mutex guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace tessera::alloc_detail {

template <typename V>
class PointerMap {
  static_assert(std::is_pointer_v<V>, "PointerMap values are pointers");

 public:
  PointerMap() { rehash(64); }

  size_t size() const { return size_; }

  // The value for key, or nullptr.
  V find(const void* key) const {
    if (key == nullptr) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == nullptr) return nullptr;
    }
  }

  // Adds key (not null, not present) -> value.
  void insert(const void* key, V value) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    place(key, value);
    ++size_;
  }

  // Removes key and returns its value, or nullptr if absent.
  V erase(const void* key) {
    if (key == nullptr) return nullptr;  // null marks an empty slot
    size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return nullptr;
      i = (i + 1) & mask_;
    }
    V value = slots_[i].value;
    // Shift later members of the probe run back so that no lookup meets a
    // hole before reaching its key.
    for (size_t j = (i + 1) & mask_; slots_[j].key != nullptr; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].key);
      // Move j to i unless its home lies cyclically in (i, j].
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    return value;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.key != nullptr) f(s.key, s.value);
    }
  }

 private:
  struct Slot {
    const void* key = nullptr;
    V value = nullptr;
  };

  // Fibonacci hashing: the high bits of key * 2^64/phi spread aligned
  // addresses (whose low bits are all zero) over the table.
  size_t home(const void* key) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) * 0x9E3779B97F4A7C15ull) >>
                               shift_);
  }

  void place(const void* key, V value) {
    size_t i = home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - __builtin_ctzll(capacity);
    for (const Slot& s : old) {
      if (s.key != nullptr) place(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace tessera::alloc_detail
