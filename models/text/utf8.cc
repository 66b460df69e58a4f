#include "models/text/utf8.h"

#include <cstdint>
#include <iomanip>
#include <sstream>

#include "runtime/core/error.h"

namespace tessera::models::text {
namespace {

[[noreturn]] void throw_invalid(std::string_view text, size_t offset, size_t length,
                                std::string_view defect) {
  std::ostringstream message;
  message << "invalid UTF-8 at byte offset " << offset << ": " << defect << " (bytes";
  for (size_t i = offset; i < offset + length && i < text.size(); ++i) {
    message << " 0x" << std::hex << std::uppercase << std::setw(2) << std::setfill('0')
            << static_cast<unsigned>(static_cast<uint8_t>(text[i])) << std::dec;
  }
  message << ")";
  throw ValueError(message.str());
}

bool is_continuation(uint8_t byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

void decode_utf8(std::string_view text, std::u32string& out) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  // At most one code point per byte: write through a pointer, no capacity
  // checks per character.
  const size_t start = out.size();
  out.resize(start + size);
  char32_t* cursor = out.data() + start;
  size_t i = 0;
  while (i < size) {
    const uint8_t lead = bytes[i];
    if (lead < 0x80) {
      *cursor++ = lead;
      ++i;
      continue;
    }
    size_t length;
    char32_t c;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      c = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      c = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      c = lead & 0x07;
    } else if (is_continuation(lead)) {
      throw_invalid(text, i, 1, "continuation byte without a lead byte");
    } else if (lead == 0xC0 || lead == 0xC1) {
      throw_invalid(text, i, 2, "overlong encoding (lead byte 0xC0/0xC1)");
    } else {
      throw_invalid(text, i, 1, "byte that never occurs in UTF-8");
    }
    for (size_t k = 1; k < length; ++k) {
      if (i + k >= size) {
        throw_invalid(text, i, k, "sequence truncated by the end of the input");
      }
      if (!is_continuation(bytes[i + k])) {
        throw_invalid(text, i, k + 1, "sequence truncated by a byte that is not a continuation");
      }
      c = (c << 6) | (bytes[i + k] & 0x3F);
    }
    if ((length == 3 && c < 0x800) || (length == 4 && c < 0x10000)) {
      throw_invalid(text, i, length, "overlong encoding");
    }
    if (c >= 0xD800 && c <= 0xDFFF) {
      throw_invalid(text, i, length, "encoded UTF-16 surrogate");
    }
    if (c > 0x10FFFF) {
      throw_invalid(text, i, length, "code point above U+10FFFF");
    }
    *cursor++ = c;
    i += length;
  }
  out.resize(cursor - out.data());
}

}  // namespace tessera::models::text
