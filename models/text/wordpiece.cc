#include "models/text/wordpiece.h"

namespace tessera::models::text {

WordPiece::WordPiece(const std::vector<std::string>& tokens, std::string continuing_subword_prefix,
                     int64_t max_input_chars_per_word, int32_t unk_id)
    : max_input_chars_per_word_(max_input_chars_per_word), unk_id_(unk_id) {
  const std::string_view prefix = continuing_subword_prefix;
  size_t key_bytes = 0;
  for (const std::string& token : tokens) key_bytes += token.size();
  tokens_.reserve(tokens.size(), key_bytes);
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string_view token = tokens[id];
    tokens_.insert(token, static_cast<int32_t>(id));
    // A piece after the first is looked up as prefix + piece; keying the
    // prefixed tokens without the prefix avoids building that string.
    if (token.substr(0, prefix.size()) == prefix) {
      continuations_.insert(token.substr(prefix.size()), static_cast<int32_t>(id));
    }
  }
}

void WordPiece::tokenize(std::string_view word, size_t char_count,
                         std::vector<int64_t>& ids) const {
  if (static_cast<int64_t>(char_count) > max_input_chars_per_word_) {
    ids.push_back(unk_id_);
    return;
  }
  const size_t first = ids.size();
  size_t start = 0;
  while (start < word.size()) {
    const TokenIdMap& pieces = start == 0 ? tokens_ : continuations_;
    size_t end = word.size();
    int32_t id = -1;
    while (end > start) {
      id = pieces.find(word.substr(start, end - start));
      if (id >= 0) break;
      // One code point shorter: back over its continuation bytes.
      do {
        --end;
      } while (end > start && (static_cast<uint8_t>(word[end]) & 0xC0) == 0x80);
    }
    if (id < 0) {  // no piece fits here: the whole word is unknown
      ids.resize(first);
      ids.push_back(unk_id_);
      return;
    }
    ids.push_back(id);
    start = end;
  }
}

}  // namespace tessera::models::text
