#include "models/text/bert_tokenizer.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <utility>

#include "models/text/added_tokens.h"
#include "models/text/bert_normalizer.h"
#include "models/text/bert_pre_tokenizer.h"
#include "models/text/tokenizer_files.h"
#include "models/text/utf8.h"
#include "models/text/wordpiece.h"
#include "runtime/core/error.h"

namespace tessera::models {

using text::AddedTokenMatcher;

namespace {

// Buffers reused from one call to the next on a thread, so that encoding
// allocates only its result once they have grown.
struct Scratch {
  std::u32string decoded;
  std::u32string normalized;
  std::string word;
  std::vector<AddedTokenMatcher::Segment> segments;
  std::vector<int64_t> ids;
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The id of `token` (its last line, as in the maps), or 0 when absent:
// the constructor then reports it.
int32_t unk_id_or_zero(const std::vector<std::string>& tokens, const std::string& token) {
  for (size_t id = tokens.size(); id-- > 0;) {
    if (tokens[id] == token) return static_cast<int32_t>(id);
  }
  return 0;
}

// What an input is in error messages: "input text" or "text 3 of the
// batch of 32"; built only when there is an error.
struct InputName {
  int64_t row = -1;  // -1: a single text
  size_t batch_size = 0;
};

std::ostream& operator<<(std::ostream& out, const InputName& name) {
  if (name.row < 0) return out << "input text";
  return out << "text " << name.row << " of the batch of " << name.batch_size;
}

void check_max_length(int64_t max_length, const std::string& source) {
  TESSERA_CHECK(max_length >= 2, ValueError, "BertTokenizer (", source,
                "): max_length must be at least 2 ([CLS] and [SEP]), got ", max_length);
}

}  // namespace

struct BertTokenizer::Impl {
  Impl(std::vector<std::string> vocabulary, TokenizerOptions tokenizer_options, std::string from);

  int32_t required_id(const std::string& token, const char* role) const;
  // Decodes `utf8` into the scratch buffer, the error naming the input.
  void decode(std::string_view utf8, InputName name, Scratch& scratch) const;
  // Calls on_piece(std::u32string_view word) for each normalized word and
  // on_added(int64_t id) for each special token typed in the text, in
  // order, until one returns false.
  template <typename OnWord, typename OnAdded>
  void for_each_word(std::u32string_view decoded, Scratch& scratch, OnWord&& on_word,
                     OnAdded&& on_added) const;
  // The wordpiece ids of the text, at most `limit` of them.
  void content_ids(std::string_view utf8, InputName name, size_t limit,
                   Scratch& scratch, std::vector<int64_t>& ids) const;

  std::vector<std::string> tokens;
  TokenizerOptions options;
  std::string source;
  text::BertNormalizer normalizer;
  text::WordPiece wordpiece;
  AddedTokenMatcher added_tokens;
  int64_t unk_id, cls_id, sep_id, pad_id;
};

BertTokenizer::Impl::Impl(std::vector<std::string> vocabulary, TokenizerOptions tokenizer_options,
                          std::string from)
    : tokens(std::move(vocabulary)),
      options(std::move(tokenizer_options)),
      source(std::move(from)),
      normalizer(text::BertNormalizerOptions{
          .clean_text = options.clean_text,
          .handle_chinese_chars = options.split_chinese_chars,
          .strip_accents = options.strip_accents.value_or(options.lowercase),
          .lowercase = options.lowercase}),
      wordpiece(tokens, options.continuing_subword_prefix, options.max_input_chars_per_word,
                unk_id_or_zero(tokens, options.unk_token)) {
  TESSERA_CHECK(!tokens.empty(), ValueError, "BertTokenizer (", source, "): the vocabulary is empty");
  TESSERA_CHECK(tokens.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                ValueError, "BertTokenizer (", source, "): the vocabulary has ", tokens.size(),
                " tokens, more than ids of 32 bits hold");
  check_max_length(options.max_length, source);
  TESSERA_CHECK(options.max_input_chars_per_word >= 1, ValueError, "BertTokenizer (", source,
                "): max_input_chars_per_word must be positive, got ",
                options.max_input_chars_per_word);
  std::u32string decoded;
  for (const std::string& token : tokens) {
    decoded.clear();
    try {
      text::decode_utf8(token, decoded);
    } catch (const ValueError& e) {
      throw ValueError(detail::concat("BertTokenizer (", source, "): vocabulary token \"", token,
                                      "\": ", e.what()));
    }
  }
  unk_id = required_id(options.unk_token, "unknown-token");
  cls_id = required_id(options.cls_token, "[CLS]");
  sep_id = required_id(options.sep_token, "[SEP]");
  pad_id = required_id(options.pad_token, "padding");

  if (options.special_tokens.empty()) {
    options.special_tokens = {options.pad_token, options.unk_token, options.cls_token,
                              options.sep_token};
    if (wordpiece.find("[MASK]") >= 0) options.special_tokens.push_back("[MASK]");
  }
  std::vector<AddedTokenMatcher::Token> specials;
  for (const std::string& token : options.special_tokens) {
    TESSERA_CHECK(!token.empty(), ValueError, "BertTokenizer (", source,
                  "): a special token is empty");
    AddedTokenMatcher::Token special{U"", required_id(token, "special")};
    text::decode_utf8(token, special.text);  // in the vocabulary: valid
    specials.push_back(std::move(special));
  }
  added_tokens = AddedTokenMatcher(std::move(specials));
}

int32_t BertTokenizer::Impl::required_id(const std::string& token, const char* role) const {
  const int32_t id = wordpiece.find(token);
  TESSERA_CHECK(id >= 0, ValueError, "BertTokenizer (", source, "): the ", role, " token \"",
                token, "\" is not in the vocabulary");
  return id;
}

void BertTokenizer::Impl::decode(std::string_view utf8, InputName name,
                                 Scratch& scratch) const {
  scratch.decoded.clear();
  try {
    text::decode_utf8(utf8, scratch.decoded);
  } catch (const ValueError& e) {
    throw ValueError(detail::concat("BertTokenizer: ", name, ": ", e.what()));
  }
}

template <typename OnWord, typename OnAdded>
void BertTokenizer::Impl::for_each_word(std::u32string_view decoded, Scratch& scratch,
                                        OnWord&& on_word, OnAdded&& on_added) const {
  added_tokens.split(decoded, scratch.segments);
  for (const AddedTokenMatcher::Segment& segment : scratch.segments) {
    if (segment.id >= 0) {
      if (!on_added(segment.id)) return;
      continue;
    }
    scratch.normalized.clear();
    normalizer.normalize(decoded.substr(segment.begin, segment.end - segment.begin),
                         scratch.normalized);
    bool go_on = true;
    text::split_bert_words(scratch.normalized, [&](std::u32string_view word) {
      if (go_on) go_on = on_word(word);
    });
    if (!go_on) return;
  }
}

void BertTokenizer::Impl::content_ids(std::string_view utf8, InputName name,
                                      size_t limit, Scratch& scratch,
                                      std::vector<int64_t>& ids) const {
  // The whole text is decoded (and so validated) even when it is truncated.
  decode(utf8, name, scratch);
  const size_t first = ids.size();
  for_each_word(
      scratch.decoded, scratch,
      [&](std::u32string_view word) {
        scratch.word.clear();
        text::append_utf8(word, scratch.word);
        wordpiece.tokenize(scratch.word, word.size(), ids);
        return ids.size() - first < limit;
      },
      [&](int64_t id) {
        ids.push_back(id);
        return ids.size() - first < limit;
      });
  if (ids.size() - first > limit) ids.resize(first + limit);
}

BertTokenizer::BertTokenizer(std::shared_ptr<const Impl> impl, int64_t max_length)
    : impl_(std::move(impl)), max_length_(max_length) {}

BertTokenizer BertTokenizer::from_folder(const std::string& dir) {
  text::TokenizerDefinition definition = text::read_tokenizer_folder(dir);
  const int64_t max_length = definition.options.max_length;
  return BertTokenizer(std::make_shared<const Impl>(std::move(definition.tokens),
                                                    std::move(definition.options),
                                                    std::move(definition.source)),
                       max_length);
}

BertTokenizer BertTokenizer::from_vocab(const std::string& vocab_txt, TokenizerOptions options) {
  std::vector<std::string> tokens = text::read_vocab_txt(vocab_txt);
  const int64_t max_length = options.max_length;
  return BertTokenizer(std::make_shared<const Impl>(std::move(tokens), std::move(options), vocab_txt),
                       max_length);
}

BertTokenizer BertTokenizer::from_tokens(std::vector<std::string> tokens, TokenizerOptions options) {
  const int64_t max_length = options.max_length;
  return BertTokenizer(
      std::make_shared<const Impl>(std::move(tokens), std::move(options), "a token list"),
      max_length);
}

std::vector<int64_t> BertTokenizer::encode(std::string_view utf8_text) const {
  Scratch& scratch = thread_scratch();
  std::vector<int64_t> ids;
  ids.push_back(impl_->cls_id);
  impl_->content_ids(utf8_text, InputName{}, static_cast<size_t>(max_length_ - 2), scratch, ids);
  ids.push_back(impl_->sep_id);
  return ids;
}

EncodedBatch BertTokenizer::encode_batch(const std::vector<std::string>& texts) const {
  Scratch& scratch = thread_scratch();
  // Every row's ids back to back first, then the padded matrix.
  std::vector<int64_t>& flat = scratch.ids;
  flat.clear();
  EncodedBatch batch;
  batch.batch = static_cast<int64_t>(texts.size());
  batch.lengths.reserve(texts.size());
  const size_t limit = static_cast<size_t>(max_length_ - 2);
  for (size_t row = 0; row < texts.size(); ++row) {
    const size_t start = flat.size();
    flat.push_back(impl_->cls_id);
    impl_->content_ids(texts[row], InputName{static_cast<int64_t>(row), texts.size()}, limit,
                       scratch, flat);
    flat.push_back(impl_->sep_id);
    batch.lengths.push_back(static_cast<int64_t>(flat.size() - start));
  }
  batch.seq_len = texts.empty() ? 0 : *std::max_element(batch.lengths.begin(), batch.lengths.end());
  const size_t cells = static_cast<size_t>(batch.batch * batch.seq_len);
  batch.input_ids.assign(cells, impl_->pad_id);
  batch.token_type_ids.assign(cells, 0);
  batch.attention_mask.assign(cells, 0);
  size_t read = 0;
  for (int64_t row = 0; row < batch.batch; ++row) {
    const int64_t length = batch.lengths[row];
    const size_t base = static_cast<size_t>(row * batch.seq_len);
    std::copy_n(flat.begin() + read, length, batch.input_ids.begin() + base);
    std::fill_n(batch.attention_mask.begin() + base, length, 1);
    read += length;
  }
  return batch;
}

int64_t BertTokenizer::max_length() const { return max_length_; }

void BertTokenizer::set_max_length(int64_t max_length) {
  check_max_length(max_length, impl_->source);
  max_length_ = max_length;
}

int64_t BertTokenizer::vocab_size() const { return static_cast<int64_t>(impl_->tokens.size()); }
int64_t BertTokenizer::pad_id() const { return impl_->pad_id; }
int64_t BertTokenizer::unk_id() const { return impl_->unk_id; }
int64_t BertTokenizer::cls_id() const { return impl_->cls_id; }
int64_t BertTokenizer::sep_id() const { return impl_->sep_id; }
const TokenizerOptions& BertTokenizer::options() const { return impl_->options; }

std::vector<std::string> BertTokenizer::tokens(std::string_view utf8_text) const {
  Scratch& scratch = thread_scratch();
  std::vector<int64_t> ids;
  impl_->content_ids(utf8_text, InputName{}, std::numeric_limits<size_t>::max(), scratch, ids);
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int64_t id : ids) pieces.push_back(impl_->tokens[id]);
  return pieces;
}

std::vector<std::string> BertTokenizer::words(std::string_view utf8_text) const {
  Scratch& scratch = thread_scratch();
  impl_->decode(utf8_text, InputName{}, scratch);
  std::vector<std::string> result;
  impl_->for_each_word(
      scratch.decoded, scratch,
      [&](std::u32string_view word) {
        result.push_back(text::to_utf8(word));
        return true;
      },
      [&](int64_t id) {
        result.push_back(impl_->tokens[id]);
        return true;
      });
  return result;
}

const std::string& BertTokenizer::token(int64_t id) const {
  TESSERA_CHECK(id >= 0 && id < vocab_size(), IndexError, "BertTokenizer::token: id ", id,
                " is out of range for a vocabulary of ", vocab_size(), " tokens");
  return impl_->tokens[id];
}

int64_t BertTokenizer::token_id(std::string_view token) const {
  const int32_t id = impl_->wordpiece.find(token);
  TESSERA_CHECK(id >= 0, ValueError, "BertTokenizer::token_id: \"", token,
                "\" is not in the vocabulary");
  return id;
}

}  // namespace tessera::models
