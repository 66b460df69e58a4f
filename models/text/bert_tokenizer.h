// The BERT WordPiece tokenizer (uncased BERT, MiniLM, all-MiniLM-L6-v2...):
// text -> token ids, equal to Hugging Face's tokenizer for the model
// (tokenizers' BertNormalizer + BertPreTokenizer + WordPiece +
// TemplateProcessing "[CLS] $A [SEP]", which transformers' BertTokenizer
// runs): encode_batch(texts) gives the ids and mask of
// tokenizer(texts, truncation=True, max_length=max_length(), padding=True).
//
//   auto tokenizer = tessera::models::BertTokenizer::from_folder(model_dir);
//   EncodedBatch batch = tokenizer.encode_batch({"A sentence.", "Another."});
//
// The pipeline, one file each: utf8 (decoding, validation), bert_normalizer
// (clean text, CJK spacing, accents, lower case), bert_pre_tokenizer
// (whitespace and punctuation splits), wordpiece (the vocabulary and the
// greedy longest-match split), added_tokens (special tokens typed in the
// text itself, e.g. "[SEP]"), tokenizer_files (reading a model folder).
//
// A tokenizer is immutable after construction except for set_max_length,
// so const methods may run on several threads at once. Copies are cheap:
// they share the vocabulary.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::models {

struct TokenizerOptions {
  bool lowercase = true;
  // Strip accents (NFD, then drop nonspacing marks). Unset: follows
  // `lowercase`, as in BERT's uncased models.
  std::optional<bool> strip_accents;
  // Surround each CJK ideograph with spaces, so that each is its own word.
  bool split_chinese_chars = true;
  // Drop NUL, U+FFFD and control/format characters; map whitespace to ' '.
  bool clean_text = true;
  // Longest encoding, [CLS] and [SEP] included; longer inputs are truncated
  // (the last token stays [SEP]).
  int64_t max_length = 512;
  // Words of more characters than this become one [UNK].
  int64_t max_input_chars_per_word = 100;
  std::string continuing_subword_prefix = "##";
  std::string unk_token = "[UNK]";
  std::string cls_token = "[CLS]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  // Tokens matched verbatim in the input text before normalization and
  // encoded as themselves ([CLS], [SEP], [PAD], [UNK], [MASK] for BERT);
  // each must be in the vocabulary. Empty: the four tokens above plus
  // "[MASK]" when the vocabulary has it.
  std::vector<std::string> special_tokens;
};

struct EncodedBatch {  // [batch, seq_len] row-major, padded to the longest row with [PAD]
  int64_t batch = 0, seq_len = 0;
  std::vector<int64_t> input_ids, token_type_ids, attention_mask;  // mask: 1 token, 0 padding
  std::vector<int64_t> lengths;  // real tokens per row, [CLS]/[SEP] included
};

class BertTokenizer {
 public:
  // A model folder: tokenizer.json when present (normalizer flags, the
  // WordPiece vocabulary and options, special tokens), else vocab.txt plus
  // tokenizer_config.json (optional). max_length: tokenizer_config.json's
  // model_max_length when present and sensible, else 512 (tokenizer.json's
  // own "truncation" and "padding" lengths are ignored, as transformers
  // does). Errors (tessera::ValueError) name the file.
  static BertTokenizer from_folder(const std::string& dir);
  // A vocab.txt (one token per line, id = line number) and explicit options.
  static BertTokenizer from_vocab(const std::string& vocab_txt, TokenizerOptions options);
  // Tokens in id order (a vocab.txt's lines) and explicit options.
  static BertTokenizer from_tokens(std::vector<std::string> tokens, TokenizerOptions options);

  // [CLS] ... [SEP], truncated to max_length. Invalid UTF-8 is a
  // tessera::ValueError naming the byte offset.
  std::vector<int64_t> encode(std::string_view utf8_text) const;
  EncodedBatch encode_batch(const std::vector<std::string>& texts) const;

  int64_t max_length() const;
  void set_max_length(int64_t max_length);  // >= 2, else tessera::ValueError
  int64_t vocab_size() const;
  int64_t pad_id() const;
  int64_t unk_id() const;
  int64_t cls_id() const;
  int64_t sep_id() const;
  // As read or given; options().max_length is the initial max_length().
  const TokenizerOptions& options() const;

  // The wordpieces of the text (special tokens typed in it included), no
  // [CLS]/[SEP], not truncated.
  std::vector<std::string> tokens(std::string_view utf8_text) const;
  // The words after normalization and pre-tokenization, before WordPiece
  // (special tokens typed in the text are words of their own): for tests
  // and debugging.
  std::vector<std::string> words(std::string_view utf8_text) const;
  // The token of an id, or the id of a token (tessera::IndexError /
  // ValueError when absent).
  const std::string& token(int64_t id) const;
  int64_t token_id(std::string_view token) const;

 private:
  struct Impl;
  BertTokenizer(std::shared_ptr<const Impl> impl, int64_t max_length);
  std::shared_ptr<const Impl> impl_;
  int64_t max_length_;
};

}  // namespace tessera::models
