#include "models/text/added_tokens.h"

#include <algorithm>

namespace tessera::models::text {

AddedTokenMatcher::AddedTokenMatcher(std::vector<Token> tokens) : tokens_(std::move(tokens)) {
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const Token& a, const Token& b) {
    return a.text.size() > b.text.size();
  });
  for (const Token& token : tokens_) {
    const char32_t first = token.text.front();
    if (first < 128) {
      ascii_first_[first / 64] |= uint64_t{1} << (first % 64);
    } else {
      non_ascii_first_ = true;
    }
  }
}

void AddedTokenMatcher::split(std::u32string_view text, std::vector<Segment>& segments) const {
  segments.clear();
  size_t plain_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const Token* match = nullptr;
    if (may_start_token(text[i])) {
      const std::u32string_view rest = text.substr(i);
      for (const Token& token : tokens_) {  // longest first
        if (rest.substr(0, token.text.size()) == token.text) {
          match = &token;
          break;
        }
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > plain_start) segments.push_back(Segment{plain_start, i, -1});
    segments.push_back(Segment{i, i + match->text.size(), match->id});
    i += match->text.size();
    plain_start = i;
  }
  if (text.size() > plain_start) segments.push_back(Segment{plain_start, text.size(), -1});
}

}  // namespace tessera::models::text
