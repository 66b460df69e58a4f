#include "models/text/unicode_properties.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <array>

#include "runtime/core/error.h"

namespace tessera::models::text {
namespace {

struct UnicodeVersion {
  int major, minor;
};
// The Unicode versions of tokenizers' tables (see the header).
constexpr UnicodeVersion kCategoryVersion{8, 0};
constexpr UnicodeVersion kNormalizationVersion{9, 0};

// Assigned in ICU's data no later than `version`.
bool assigned_by(UChar32 c, UnicodeVersion version) {
  UVersionInfo age;
  u_charAge(c, age);
  if (age[0] == 0 && age[1] == 0) return false;  // unassigned in ICU
  return age[0] < version.major || (age[0] == version.major && age[1] <= version.minor);
}

bool assigned_in_icu(UChar32 c) {
  UVersionInfo age;
  u_charAge(c, age);
  return age[0] != 0 || age[1] != 0;
}

// The general category of c in Unicode 8.0.
int8_t category_in_unicode_8(UChar32 c) {
  switch (c) {  // the characters whose category changed since 8.0
    case 0x166D:   // CANADIAN SYLLABICS CHI SIGN, So today
    case 0x111C9:  // SHARADA SANDHI MARK, Mn today
      return U_OTHER_PUNCTUATION;
    case 0x1734:  // HANUNOO SIGN PAMUDPOD, Mc today
      return U_NON_SPACING_MARK;
    case 0x1885:  // MONGOLIAN LETTER ALI GALI BALUDA, Mn today
    case 0x1886:  // MONGOLIAN LETTER ALI GALI THREE BALUDA, Mn today
      return U_OTHER_LETTER;
    case 0xA9BD:  // JAVANESE CONSONANT SIGN KERET, Mn today
      return U_COMBINING_SPACING_MARK;
    default:
      break;
  }
  if (!assigned_by(c, kCategoryVersion)) return U_UNASSIGNED;
  return u_charType(c);
}

// Lower-case mappings of Unicode 16 and 17, which Rust's standard library
// applies and ICU 72 predates: c in [first, last] maps to c + delta.
struct CaseRange {
  char32_t first, last;
  int32_t delta;
};
constexpr CaseRange kCaseRangesAfterIcu[] = {
    {0x1C89, 0x1C89, 1},                 // CYRILLIC CAPITAL LETTER TJE
    {0xA7CB, 0xA7CB, 0x0264 - 0xA7CB},   // LATIN CAPITAL LETTER RAMS HORN
    {0xA7CC, 0xA7CC, 1},                 // LATIN CAPITAL LETTER S WITH DIAGONAL STROKE
    {0xA7CE, 0xA7CE, 1},                 // LATIN CAPITAL LETTER PHARYNGEAL VOICED FRICATIVE
    {0xA7D2, 0xA7D2, 1},                 // LATIN CAPITAL LETTER DOUBLE THORN
    {0xA7D4, 0xA7D4, 1},                 // LATIN CAPITAL LETTER DOUBLE WYNN
    {0xA7DA, 0xA7DA, 1},                 // LATIN CAPITAL LETTER LAMBDA
    {0xA7DC, 0xA7DC, 0x019B - 0xA7DC},   // LATIN CAPITAL LETTER LAMBDA WITH STROKE
    {0x10D50, 0x10D65, 0x20},            // GARAY CAPITAL LETTERS
    {0x16EA0, 0x16EB8, 0x1B},            // BERIA ERFE CAPITAL LETTERS
};

const icu::Normalizer2& nfd_instance() {
  static const icu::Normalizer2* const instance = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
    TESSERA_CHECK(U_SUCCESS(status) && nfd != nullptr, DeviceError,
                  "BertTokenizer: ICU's NFD normalizer is unavailable: ", u_errorName(status));
    return nfd;
  }();
  return *instance;
}

bool is_ascii_punctuation(char32_t c) {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
         (c >= 123 && c <= 126);
}

// The ranges tokenizers' BertNormalizer treats as CJK ideographs (its
// range after Extension B's neighbours starts at U+2B920, not U+2B820 as in
// the original BERT code).
bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

uint8_t compute_flags(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  const int8_t category = category_in_unicode_8(u);
  uint8_t flags = 0;
  const bool kept_control = c == '\t' || c == '\n' || c == '\r';
  if (c == 0 || c == 0xFFFD ||
      (!kept_control && (category == U_CONTROL_CHAR || category == U_FORMAT_CHAR ||
                         category == U_PRIVATE_USE_CHAR))) {
    flags |= kDroppedByCleaning;
  }
  if (u_hasBinaryProperty(u, UCHAR_WHITE_SPACE)) flags |= kWhitespace;
  constexpr uint32_t kPunctuationMask = U_GC_P_MASK;
  if (is_ascii_punctuation(c) || (U_MASK(category) & kPunctuationMask) != 0) {
    flags |= kPunctuation;
  }
  if (is_cjk_ideograph(c)) flags |= kCjkIdeograph;
  if (category == U_NON_SPACING_MARK) flags |= kNonspacingMark;
  if (assigned_by(u, kNormalizationVersion) && !nfd_instance().isInert(u)) {
    flags |= kNfdSensitive;
  }
  char32_t lower[2];
  if (to_lower(c, lower) != 1 || lower[0] != c) flags |= kChangesCase;
  return flags;
}

}  // namespace

const uint8_t* bmp_char_flags() {
  using BmpTable = std::array<uint8_t, 0x10000>;
  static const BmpTable table = [] {
    BmpTable t{};
    for (char32_t c = 0; c < 0x10000; ++c) {
      // Surrogates never come out of the UTF-8 decoder.
      t[c] = (c >= 0xD800 && c <= 0xDFFF) ? 0 : compute_flags(c);
    }
    return t;
  }();
  return table.data();
}

uint8_t supplementary_char_flags(char32_t c) { return compute_flags(c); }

int nfd_decompose(char32_t c, char32_t* out) {
  const auto u = static_cast<UChar32>(c);
  icu::UnicodeString decomposition;  // short strings stay in its inline buffer
  if (!assigned_by(u, kNormalizationVersion) ||
      !nfd_instance().getDecomposition(u, decomposition)) {
    out[0] = c;
    return 1;
  }
  int count = 0;
  for (int32_t i = 0; i < decomposition.length();) {
    const UChar32 part = decomposition.char32At(i);
    // Unicode's longest canonical decomposition has 4 code points.
    TESSERA_CHECK(count < kMaxDecomposition, ValueError, "BertTokenizer: the NFD decomposition of code point ",
                  static_cast<uint32_t>(c), " is longer than ", kMaxDecomposition);
    out[count++] = static_cast<char32_t>(part);
    i += U16_LENGTH(part);
  }
  return count;
}

uint8_t combining_class(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  if (!assigned_by(u, kNormalizationVersion)) return 0;
  return u_getCombiningClass(u);
}

int to_lower(char32_t c, char32_t* out) {
  if (c < 0x80) {
    out[0] = (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
    return 1;
  }
  if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: i + COMBINING DOT ABOVE
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  const auto u = static_cast<UChar32>(c);
  if (!assigned_in_icu(u)) {
    for (const CaseRange& range : kCaseRangesAfterIcu) {
      if (c >= range.first && c <= range.last) {
        out[0] = static_cast<char32_t>(static_cast<int32_t>(c) + range.delta);
        return 1;
      }
    }
    out[0] = c;
    return 1;
  }
  out[0] = static_cast<char32_t>(u_tolower(u));
  return 1;
}

}  // namespace tessera::models::text
