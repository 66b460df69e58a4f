// Character properties as Hugging Face's tokenizers (the Rust library
// behind the models' tokenizer.json) sees them, from ICU's data.
//
// tokenizers does not use one Unicode version: it classifies characters
// (control, punctuation, nonspacing mark) with Unicode 8.0 tables (the
// unicode_categories crate), decomposes (NFD) with Unicode 9.0 data
// (unicode-normalization-alignments) and lower-cases with Rust's standard
// library (Unicode 17). ICU 72 knows Unicode 15.0, so the functions here
// take ICU's answer for characters old enough, treat newer ones as
// unassigned where tokenizers does, and list the few characters whose
// category changed since 8.0 and the case pairs ICU 72 predates. The
// pytest tests/models/test_tokenizer_parity.py checks every code point
// against the installed tokenizers.
#pragma once

#include <cstdint>

namespace tessera::models::text {

enum CharFlag : uint8_t {
  // Removed by clean_text: NUL, U+FFFD and Cc/Cf/Co except \t \n \r.
  kDroppedByCleaning = 1 << 0,
  // White_Space (\t \n \r included): ' ' after cleaning; separates words.
  kWhitespace = 1 << 1,
  // ASCII punctuation (33-47, 58-64, 91-96, 123-126) or P*: its own word.
  kPunctuation = 1 << 2,
  // A CJK ideograph: surrounded by spaces, so each is its own word.
  kCjkIdeograph = 1 << 3,
  // Mn: removed when stripping accents (after NFD).
  kNonspacingMark = 1 << 4,
  // NFD changes it, or its canonical combining class is not 0 (it may be
  // reordered): the slow path of accent stripping.
  kNfdSensitive = 1 << 5,
  // Lower-casing changes it.
  kChangesCase = 1 << 6,
};

// The CharFlag bits of each BMP code point (65536 entries, built on the
// first call), and of a code point above the BMP (computed).
const uint8_t* bmp_char_flags();
uint8_t supplementary_char_flags(char32_t c);

// The CharFlag bits of code points: an inline table lookup for the BMP.
// Holding one keeps the table's address at hand in the hot loops.
class CharFlags {
 public:
  CharFlags() : bmp_(bmp_char_flags()) {}
  uint8_t operator()(char32_t c) const {
    return c < 0x10000 ? bmp_[c] : supplementary_char_flags(c);
  }

 private:
  const uint8_t* bmp_;
};

inline uint8_t char_flags(char32_t c) { return CharFlags()(c); }

// The most code points one character decomposes into under NFD.
inline constexpr int kMaxDecomposition = 4;

// Writes the NFD decomposition of c to `out` and returns its length
// (1 and c itself when c does not decompose).
int nfd_decompose(char32_t c, char32_t* out);

// The canonical combining class of c, 0 for characters tokenizers'
// normalization data does not know.
uint8_t combining_class(char32_t c);

// Writes the full lower-case mapping of c (one code point, two for U+0130)
// to `out` and returns its length.
int to_lower(char32_t c, char32_t* out);

}  // namespace tessera::models::text
