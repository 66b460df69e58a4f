// UTF-8 decoding with strict validation (RFC 3629) and encoding. The
// tokenizer decodes its input once; every defect is an error naming the
// byte offset, never a replacement character or an out-of-bounds read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tessera::models::text {

// Appends the code points of `text` to `out`. Throws tessera::ValueError
// naming the byte offset and the defect of the first invalid sequence:
// a stray continuation byte, a byte that never occurs in UTF-8 (0xC0,
// 0xC1, 0xF5-0xFF), an overlong encoding, an encoded surrogate, a code
// point above U+10FFFF, or a sequence cut short by a non-continuation byte
// or by the end of the input (`out` then holds unspecified code points
// after its old end).
void decode_utf8(std::string_view text, std::u32string& out);

// Writes the UTF-8 encoding of a valid code point at `out` (room for 4
// bytes) and returns the end of what it wrote.
inline char* write_utf8(char32_t c, char* out) {
  if (c < 0x80) {
    *out++ = static_cast<char>(c);
  } else if (c < 0x800) {
    *out++ = static_cast<char>(0xC0 | (c >> 6));
    *out++ = static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out++ = static_cast<char>(0xE0 | (c >> 12));
    *out++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (c & 0x3F));
  } else {
    *out++ = static_cast<char>(0xF0 | (c >> 18));
    *out++ = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    *out++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// Appends the UTF-8 encoding of valid code points to `out`.
inline void append_utf8(std::u32string_view text, std::string& out) {
  const size_t start = out.size();
  out.resize(start + 4 * text.size());
  char* cursor = out.data() + start;
  for (char32_t c : text) cursor = write_utf8(c, cursor);
  out.resize(cursor - out.data());
}

inline std::string to_utf8(std::u32string_view text) {
  std::string out;
  append_utf8(text, out);
  return out;
}

}  // namespace tessera::models::text
