// Special tokens typed in the input text ("[CLS] a [SEP] b"): as in
// tokenizers' AddedVocabulary, they are found in the raw text before
// normalization (leftmost, then longest match) and encoded as themselves;
// the text between them is tokenized as usual.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::models::text {

class AddedTokenMatcher {
 public:
  struct Token {
    std::u32string text;  // not empty
    int64_t id;
  };
  // A segment of the input: plain text (id -1) or one added token.
  struct Segment {
    size_t begin, end;  // code point offsets
    int64_t id;
  };

  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<Token> tokens);

  // Replaces `segments` with the segments of `text`, in order; the plain
  // ones are not empty.
  void split(std::u32string_view text, std::vector<Segment>& segments) const;

 private:
  bool may_start_token(char32_t c) const {
    if (c < 128) return (ascii_first_[c / 64] >> (c % 64)) & 1;
    return non_ascii_first_;
  }

  std::vector<Token> tokens_;  // longest first
  uint64_t ascii_first_[2] = {0, 0};  // which ASCII characters start a token
  bool non_ascii_first_ = false;      // whether some token starts otherwise
};

}  // namespace tessera::models::text
