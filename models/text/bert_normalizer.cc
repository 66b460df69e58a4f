#include "models/text/bert_normalizer.h"

#include <algorithm>
#include <cstdint>

namespace tessera::models::text {
namespace {

// The most code points one input code point becomes: a CJK ideograph
// between two spaces, or an NFD decomposition (lower-casing maps each of
// its parts to one code point; only U+0130, which NFD decomposes, becomes
// two).
constexpr size_t kMaxExpansion = std::max(3, kMaxDecomposition);

// Writes the normalized text to a buffer sized for the worst case: no
// capacity checks per character.
class Writer {
 public:
  Writer(const BertNormalizerOptions& options, CharFlags flags, char32_t* out)
      : options_(options), flags_(flags), cursor_(out) {}

  // Appends c (of the given flags), after cleaning and CJK spacing.
  void add(char32_t c, uint8_t flags) {
    if (!options_.strip_accents || (flags & kNfdSensitive) == 0) {
      // NFD leaves c as it is and it has combining class 0.
      flush_marks();
      add_final(c, flags);
      return;
    }
    char32_t parts[kMaxDecomposition];
    const int count = nfd_decompose(c, parts);
    for (int i = 0; i < count; ++i) {
      if (combining_class(parts[i]) == 0) {
        flush_marks();
        add_final(parts[i], flags_(parts[i]));
      } else {
        if (run_start_ == nullptr) run_start_ = cursor_;
        *cursor_++ = parts[i];
      }
    }
  }

  // The end of the normalized text.
  char32_t* finish() {
    flush_marks();
    return cursor_;
  }

 private:
  // The steps after NFD: drop nonspacing marks, lower-case.
  void add_final(char32_t c, uint8_t flags) {
    if ((flags & (kNonspacingMark | kChangesCase)) == 0) {
      *cursor_++ = c;
    } else if (options_.strip_accents && (flags & kNonspacingMark) != 0) {
      // dropped
    } else if (options_.lowercase && (flags & kChangesCase) != 0) {
      if (c < 0x80) {
        *cursor_++ = c + ('a' - 'A');
      } else {
        cursor_ += to_lower(c, cursor_);
      }
    } else {
      *cursor_++ = c;
    }
  }

  // With accent stripping, NFD reorders each run of characters of nonzero
  // combining class by class (canonical ordering) before the nonspacing
  // marks go. Such a run collects at the end of the output, from
  // run_start_, and is finished when a character of class 0 (or the end)
  // comes.
  void flush_marks() {
    if (run_start_ == nullptr) return;
    // Stable insertion sort by combining class: runs are a few marks long.
    for (char32_t* mark = run_start_ + 1; mark < cursor_; ++mark) {
      const char32_t c = *mark;
      const uint8_t c_class = combining_class(c);
      char32_t* slot = mark;
      while (slot > run_start_ && combining_class(slot[-1]) > c_class) {
        *slot = slot[-1];
        --slot;
      }
      *slot = c;
    }
    // Then the final steps, in place: characters of nonzero class lower-
    // case to one code point.
    char32_t* write = run_start_;
    for (char32_t* read = run_start_; read < cursor_; ++read) {
      const uint8_t flags = flags_(*read);
      if ((flags & kNonspacingMark) != 0) continue;
      char32_t lower[2] = {*read, 0};
      if (options_.lowercase && (flags & kChangesCase) != 0) to_lower(*read, lower);
      *write++ = lower[0];
    }
    cursor_ = write;
    run_start_ = nullptr;
  }

  const BertNormalizerOptions& options_;
  CharFlags flags_;
  char32_t* cursor_;
  char32_t* run_start_ = nullptr;  // the run of marks being collected
};

}  // namespace

void BertNormalizer::normalize(std::u32string_view text, std::u32string& out) const {
  const size_t start = out.size();
  out.resize(start + kMaxExpansion * text.size());
  Writer writer(options_, flags_, out.data() + start);
  const uint8_t space_flags = flags_(U' ');
  for (char32_t c : text) {
    const uint8_t flags = flags_(c);
    if (options_.clean_text && (flags & (kDroppedByCleaning | kWhitespace)) != 0) {
      // Dropping wins: \v, \f and U+0085 are both control and whitespace.
      if ((flags & kDroppedByCleaning) == 0) writer.add(U' ', space_flags);
      continue;
    }
    if (options_.handle_chinese_chars && (flags & kCjkIdeograph) != 0) {
      writer.add(U' ', space_flags);
      writer.add(c, flags);
      writer.add(U' ', space_flags);
      continue;
    }
    writer.add(c, flags);
  }
  out.resize(writer.finish() - out.data());
}

}  // namespace tessera::models::text
