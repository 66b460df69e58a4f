// BERT's text normalization, as tokenizers' BertNormalizer: clean the text
// (drop NUL, U+FFFD and control/format characters; whitespace becomes
// ' '), surround CJK ideographs with spaces, strip accents (NFD, then drop
// nonspacing marks), lower-case. Works on code points; unicode_properties.h
// says which Unicode data each step follows.
#pragma once

#include <string>
#include <string_view>

#include "models/text/unicode_properties.h"

namespace tessera::models::text {

struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};

class BertNormalizer {
 public:
  explicit BertNormalizer(BertNormalizerOptions options) : options_(options) {}

  // Appends the normalized form of `text` to `out`. Allocates nothing once
  // `out` has the capacity.
  void normalize(std::u32string_view text, std::u32string& out) const;

  const BertNormalizerOptions& options() const { return options_; }

 private:
  BertNormalizerOptions options_;
  CharFlags flags_;
};

}  // namespace tessera::models::text
