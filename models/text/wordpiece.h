// WordPiece, as tokenizers' WordPiece model: a word becomes its greedy
// longest-match-first pieces from the vocabulary, the pieces after the
// first spelled with the continuing-subword prefix ("##"); a word that
// some part of matches no piece, or that has more than
// max_input_chars_per_word characters, becomes one [UNK].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/text/token_id_map.h"

namespace tessera::models::text {

class WordPiece {
 public:
  // tokens: the vocabulary, by id.
  WordPiece(const std::vector<std::string>& tokens, std::string continuing_subword_prefix,
            int64_t max_input_chars_per_word, int32_t unk_id);

  // Appends the ids of the pieces of `word` (UTF-8, `char_count` code
  // points, not empty) to `ids`.
  void tokenize(std::string_view word, size_t char_count, std::vector<int64_t>& ids) const;

  // The id of a whole token of the vocabulary, or -1.
  int32_t find(std::string_view token) const { return tokens_.find(token); }

 private:
  TokenIdMap tokens_;         // every token: the first piece of a word
  TokenIdMap continuations_;  // tokens with the prefix, keyed without it
  int64_t max_input_chars_per_word_;
  int32_t unk_id_;
};

}  // namespace tessera::models::text
