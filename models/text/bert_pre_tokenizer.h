// BERT's pre-tokenization, as tokenizers' BertPreTokenizer: whitespace
// separates words and is dropped; each punctuation character (ASCII
// punctuation or Unicode category P*, see unicode_properties.h) is a word
// of its own.
#pragma once

#include <cstddef>
#include <string_view>

#include "models/text/unicode_properties.h"

namespace tessera::models::text {

// Calls on_word(std::u32string_view word) for each word of `text`, in
// order. Words are views into `text`.
template <typename OnWord>
void split_bert_words(std::u32string_view text, OnWord&& on_word) {
  const CharFlags char_flags;
  size_t word_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const uint8_t flags = char_flags(text[i]);
    if ((flags & (kWhitespace | kPunctuation)) == 0) continue;
    if (i > word_start) on_word(text.substr(word_start, i - word_start));
    if ((flags & kWhitespace) == 0) on_word(text.substr(i, 1));  // punctuation
    word_start = i + 1;
  }
  if (text.size() > word_start) on_word(text.substr(word_start));
}

}  // namespace tessera::models::text
