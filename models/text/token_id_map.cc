#include "models/text/token_id_map.h"

#include <limits>

#include "runtime/core/error.h"

namespace tessera::models::text {
void TokenIdMap::insert(std::string_view token, int32_t id) {
  TESSERA_CHECK(token.size() <= std::numeric_limits<uint32_t>::max() &&
                    keys_.size() + token.size() <= std::numeric_limits<uint32_t>::max() &&
                    entries_.size() < std::numeric_limits<uint32_t>::max() - 1,
                ValueError, "BertTokenizer: the vocabulary is too large");
  if (slots_.empty() || 2 * (entries_.size() + 1) > slots_.size()) {
    rehash(slots_.empty() ? 64 : 2 * slots_.size());
  }
  const uint64_t hash = hash_bytes(token);
  size_t slot = hash & mask_;
  for (;; slot = (slot + 1) & mask_) {
    const uint32_t index = slots_[slot];
    if (index == 0) break;
    Entry& entry = entries_[index - 1];
    if (entry.hash == hash && key(entry) == token) {
      entry.id = id;
      return;
    }
  }
  entries_.push_back(Entry{hash, static_cast<uint32_t>(keys_.size()),
                           static_cast<uint32_t>(token.size()), id});
  keys_.append(token);
  slots_[slot] = static_cast<uint32_t>(entries_.size());
}

void TokenIdMap::reserve(size_t count, size_t key_bytes) {
  entries_.reserve(count);
  keys_.reserve(key_bytes);
  size_t slot_count = 64;
  while (slot_count < 2 * count) slot_count *= 2;
  if (slot_count > slots_.size()) rehash(slot_count);
}

void TokenIdMap::rehash(size_t slot_count) {
  slots_.assign(slot_count, 0);
  mask_ = slot_count - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t slot = entries_[i].hash & mask_;
    while (slots_[slot] != 0) slot = (slot + 1) & mask_;
    slots_[slot] = static_cast<uint32_t>(i + 1);
  }
}

}  // namespace tessera::models::text
