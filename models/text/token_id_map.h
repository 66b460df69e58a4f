// A hash map from token text to token id for the tokenizer's hot loop:
// lookups by std::string_view with no allocation, keys stored in one
// buffer, open addressing with linear probing.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::models::text {

class TokenIdMap {
 public:
  // Maps `token` to `id`; a token inserted again keeps the last id (as a
  // vocab.txt that lists a token twice maps it to its last line).
  void insert(std::string_view token, int32_t id);
  // Room for `count` tokens (of `key_bytes` bytes in all) with no rehash.
  void reserve(size_t count, size_t key_bytes);
  // The id of `token`, or -1.
  int32_t find(std::string_view token) const {
    if (slots_.empty()) return -1;
    const uint64_t hash = hash_bytes(token);
    for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      const uint32_t index = slots_[slot];
      if (index == 0) return -1;
      const Entry& entry = entries_[index - 1];
      if (entry.hash == hash && key(entry) == token) return entry.id;
    }
  }
  size_t size() const { return entries_.size(); }

  // Eight bytes at a time: tokens are short, and WordPiece hashes many
  // prefixes of each word.
  static uint64_t hash_bytes(std::string_view bytes) {
    uint64_t hash = 0x9E3779B97F4A7C15ull ^ bytes.size();
    const char* data = bytes.data();
    size_t left = bytes.size();
    while (left >= 8) {
      uint64_t chunk;
      std::memcpy(&chunk, data, 8);
      hash = mix(hash ^ chunk);
      data += 8;
      left -= 8;
    }
    if (left > 0) {
      uint64_t chunk = 0;
      std::memcpy(&chunk, data, left);
      hash = mix(hash ^ chunk ^ (uint64_t{0xFF} << 56));
    }
    return mix(hash);
  }

 private:
  static uint64_t mix(uint64_t x) {
    x ^= x >> 32;
    x *= 0xD6E8FEB86659FD93ull;
    x ^= x >> 32;
    return x;
  }
  struct Entry {
    uint64_t hash;
    uint32_t offset, length;
    int32_t id;
  };
  std::string_view key(const Entry& entry) const {
    return std::string_view(keys_).substr(entry.offset, entry.length);
  }
  void rehash(size_t slot_count);

  std::string keys_;             // every key, back to back
  std::vector<Entry> entries_;   // in insertion order
  std::vector<uint32_t> slots_;  // 1 + index into entries_, 0 when empty
  size_t mask_ = 0;
};

}  // namespace tessera::models::text
