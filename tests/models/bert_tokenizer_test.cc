// The BERT WordPiece tokenizer (models/text/bert_tokenizer.h), mostly with
// small vocabularies written here; the cases marked "real model" read the
// folder named by $TESSERA_TEST_MODEL_DIR and skip without it. Parity with
// Hugging Face's tokenizer on many texts is test_tokenizer_parity.py's job.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/text/bert_tokenizer.h"
#include "runtime/core/error.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace tessera::models {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<int64_t>;
using Strings = std::vector<std::string>;

const Strings kVocabulary = {
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",     // 0-4
    "hello", "world", "un",    "##aff", "##able",     // 5-9
    ",",     ".",     "!",     "cafe",  "naive",      // 10-14
    "中",    "国",    "a",     "##b",   "x",          // 15-19
    "[",     "]",     "sep",   "é",     "—",          // 20-24
    "ab",    "##c",   "istanbul",                     // 25-27
};

BertTokenizer tiny(TokenizerOptions options = {}) {
  return BertTokenizer::from_tokens(kVocabulary, std::move(options));
}

// Folders named after this test binary.
class TempDir : public tessera::testing::TempDir {
 public:
  explicit TempDir(const std::string& name) : tessera::testing::TempDir("bert_tokenizer_test_" + name) {}
};

std::string vocab_txt() {
  std::string text;
  for (const std::string& token : kVocabulary) text += token + "\n";
  return text;
}

// The message of the tessera::ValueError that `f` throws ("" if none).
template <typename F>
std::string value_error(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

using Catch::Matchers::Contains;

TEST_CASE("bert tokenizer: [CLS] words and punctuation [SEP]") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.encode("Hello, World!") == Ids{2, 5, 10, 6, 12, 3});
  CHECK(tokenizer.tokens("hello,world.") == Strings{"hello", ",", "world", "."});
  CHECK(tokenizer.vocab_size() == static_cast<int64_t>(kVocabulary.size()));
  CHECK(tokenizer.pad_id() == 0);
  CHECK(tokenizer.unk_id() == 1);
  CHECK(tokenizer.cls_id() == 2);
  CHECK(tokenizer.sep_id() == 3);
  CHECK(tokenizer.token(6) == "world");
  CHECK(tokenizer.token_id("##aff") == 8);
  CHECK_THROWS_AS(tokenizer.token(int64_t(kVocabulary.size())), IndexError);
  CHECK_THROWS_AS(tokenizer.token_id("nope"), ValueError);
}

TEST_CASE("bert tokenizer: empty and blank input give [CLS] [SEP]") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.encode("") == Ids{2, 3});
  CHECK(tokenizer.encode(" \t\r\n\u3000 ") == Ids{2, 3});
  CHECK(tokenizer.encode(std::string("\0\0", 2)) == Ids{2, 3});  // NULs are dropped
  CHECK(tokenizer.tokens("").empty());
}

TEST_CASE("bert tokenizer: WordPiece longest match first, [UNK] for a word with no split") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.tokens("unaffable") == Strings{"un", "##aff", "##able"});
  // "abc": "ab" then "##c", not "a" "##b" "##c" (which has no "##c" after "##b" anyway).
  CHECK(tokenizer.tokens("abc") == Strings{"ab", "##c"});
  // One unknown piece makes the whole word [UNK], not just the rest.
  CHECK(tokenizer.tokens("unaffablez") == Strings{"[UNK]"});
  CHECK(tokenizer.tokens("zebra hello") == Strings{"[UNK]", "hello"});
}

TEST_CASE("bert tokenizer: a word longer than max_input_chars_per_word is one [UNK]") {
  const BertTokenizer tokenizer = tiny();
  const std::string fits = "x" + std::string(99, 'b');   // 100 characters
  const std::string too_long = fits + "b";               // 101 characters
  const Strings pieces = tokenizer.tokens(fits);
  REQUIRE(pieces.size() == 100);
  CHECK(pieces.front() == "x");
  CHECK(pieces.back() == "##b");
  CHECK(tokenizer.tokens(too_long) == Strings{"[UNK]"});
  // Characters, not bytes, are counted: 100 two-byte "é" still fit.
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "\u00e9";
  CHECK(tokenizer.words(accented) == Strings{std::string(100, 'e')});

  TokenizerOptions options;
  options.max_input_chars_per_word = 3;
  CHECK(tiny(options).tokens("abc abbb") == Strings{"ab", "##c", "[UNK]"});
}

TEST_CASE("bert tokenizer: lower-casing and accent stripping") {
  const BertTokenizer tokenizer = tiny();
  // Precomposed and combining accents alike.
  CHECK(tokenizer.tokens("CAFÉ Naïve") == Strings{"cafe", "naive"});
  CHECK(tokenizer.tokens("cafe\u0301 nai\u0308ve") == Strings{"cafe", "naive"});
  // U+0130 (İ) lower-cases to i + U+0307, and the mark goes with the accents.
  CHECK(tokenizer.tokens("\u0130STANBUL") == Strings{"istanbul"});

  TokenizerOptions keep_accents;
  keep_accents.strip_accents = false;
  CHECK(tiny(keep_accents).tokens("É") == Strings{"é"});
  CHECK(tiny(keep_accents).words("\u0130") == Strings{"i\u0307"});

  TokenizerOptions cased;
  cased.lowercase = false;  // strip_accents unset: follows lowercase, so off
  CHECK(tiny(cased).words("Café") == Strings{"Café"});
  cased.strip_accents = true;
  CHECK(tiny(cased).words("Café") == Strings{"Cafe"});
}

TEST_CASE("bert tokenizer: combining marks are reordered by class before they are stripped") {
  // U+1D165 (class 216) and U+1D16D (class 226) are spacing marks (Mc),
  // which stay; U+0301 (class 230) is nonspacing and goes. NFD puts 226
  // after 216 whatever the input order.
  TokenizerOptions options;
  const BertTokenizer tokenizer = tiny(options);
  CHECK(tokenizer.words("a\U0001D16D\U0001D165") == Strings{"a\U0001D165\U0001D16D"});
  CHECK(tokenizer.words("a\U0001D16D\u0301\U0001D165") == Strings{"a\U0001D165\U0001D16D"});
  // A mark of class 0 (U+034F) ends a run: no reordering across it.
  CHECK(tokenizer.words("a\U0001D16D\u034F\U0001D165") == Strings{"a\U0001D16D\U0001D165"});
}

TEST_CASE("bert tokenizer: CJK ideographs are words of their own") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.words("hello中国world") == Strings{"hello", "中", "国", "world"});
  CHECK(tokenizer.encode("中国") == Ids{2, 15, 16, 3});
  // Kana are not ideographs: no split (and the voicing mark of "が",
  // nonspacing after NFD, goes with the accents).
  CHECK(tokenizer.words("ひらがな") == Strings{"ひらかな"});
  // tokenizers' ranges: U+2B820 (Extension E's start) is not split, U+2B920 is.
  CHECK(tokenizer.words("a\U0002B820b") == Strings{"a\U0002B820b"});
  CHECK(tokenizer.words("a\U0002B920b") == Strings{"a", "\U0002B920", "b"});

  TokenizerOptions options;
  options.split_chinese_chars = false;
  CHECK(tiny(options).words("hello中国") == Strings{"hello中国"});
}

TEST_CASE("bert tokenizer: punctuation splits, ASCII symbols included") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.words("a—b") == Strings{"a", "—", "b"});        // U+2014, Pd
  CHECK(tokenizer.words("¿x?") == Strings{"¿", "x", "?"});         // Po
  CHECK(tokenizer.words("«x»") == Strings{"«", "x", "»"});         // Pi, Pf
  CHECK(tokenizer.words("a$b^c`d") == Strings{"a", "$", "b", "^", "c", "`", "d"});  // ASCII Sc/Sk
  CHECK(tokenizer.words("a+b") == Strings{"a", "+", "b"});
  CHECK(tokenizer.words("a€b") == Strings{"a€b"});                 // Sc outside ASCII: no split
  CHECK(tokenizer.words("...") == Strings{".", ".", "."});
}

TEST_CASE("bert tokenizer: cleaning drops controls and maps whitespace to spaces") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.words("hel\u200blo") == Strings{"hello"});        // U+200B, Cf
  CHECK(tokenizer.words("hel\ufffdlo") == Strings{"hello"});        // replacement character
  CHECK(tokenizer.words("hel\x01lo\x7f") == Strings{"hello"});      // Cc
  CHECK(tokenizer.words("hello\tworld\r\nx") == Strings{"hello", "world", "x"});
  CHECK(tokenizer.words("a\u00a0b\u2003c") == Strings{"a", "b", "c"});  // Zs
  // \v is a control and whitespace: cleaning drops it, so no split.
  CHECK(tokenizer.words("a\vb") == Strings{"ab"});

  TokenizerOptions raw;
  raw.clean_text = false;
  CHECK(tiny(raw).words("a\vb\u200bc") == Strings{"a", "b\u200bc"});
}

TEST_CASE("bert tokenizer: special tokens typed in the text are kept whole") {
  const BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.encode("hello [SEP] world[MASK]x") == Ids{2, 5, 3, 6, 4, 19, 3});
  // Matched before normalization: "[sep]" and "[ SEP]" are plain text.
  CHECK(tokenizer.tokens("[sep]") == Strings{"[", "sep", "]"});
  CHECK(tokenizer.tokens("[SEP") == Strings{"[", "sep"});
  CHECK(tokenizer.words("[CLS][PAD]") == Strings{"[CLS]", "[PAD]"});
}

TEST_CASE("bert tokenizer: truncation keeps [CLS] and [SEP]") {
  BertTokenizer tokenizer = tiny();
  CHECK(tokenizer.max_length() == 512);
  tokenizer.set_max_length(5);
  CHECK(tokenizer.encode("hello world hello world") == Ids{2, 5, 6, 5, 3});
  CHECK(tokenizer.encode("hello world hello") == Ids{2, 5, 6, 5, 3});
  CHECK(tokenizer.encode("unaffable world") == Ids{2, 7, 8, 9, 3});
  tokenizer.set_max_length(4);  // truncation may cut a word's pieces
  CHECK(tokenizer.encode("unaffable") == Ids{2, 7, 8, 3});
  tokenizer.set_max_length(2);
  CHECK(tokenizer.encode("hello world") == Ids{2, 3});
  CHECK_THAT(value_error([&] { tokenizer.set_max_length(1); }), Contains("at least 2"));
  CHECK(tokenizer.max_length() == 2);
  // Invalid UTF-8 after the cut is still an error.
  CHECK_THAT(value_error([&] { tokenizer.encode("hello world \xff"); }),
             Contains("byte offset 12"));

  TokenizerOptions options;
  options.max_length = 1;
  CHECK_THAT(value_error([&] { tiny(options); }), Contains("at least 2"));
}

TEST_CASE("bert tokenizer: a batch is padded with [PAD] and masked") {
  BertTokenizer tokenizer = tiny();
  const EncodedBatch batch = tokenizer.encode_batch({"hello world", "", "hello"});
  CHECK(batch.batch == 3);
  CHECK(batch.seq_len == 4);
  CHECK(batch.lengths == Ids{4, 2, 3});
  CHECK(batch.input_ids == Ids{2, 5, 6, 3,  //
                               2, 3, 0, 0,  //
                               2, 5, 3, 0});
  CHECK(batch.attention_mask == Ids{1, 1, 1, 1,  //
                                    1, 1, 0, 0,  //
                                    1, 1, 1, 0});
  CHECK(batch.token_type_ids == Ids(12, 0));

  tokenizer.set_max_length(3);
  const EncodedBatch truncated = tokenizer.encode_batch({"hello world", "x"});
  CHECK(truncated.seq_len == 3);
  CHECK(truncated.input_ids == Ids{2, 5, 3, 2, 19, 3});

  const EncodedBatch empty = tokenizer.encode_batch({});
  CHECK(empty.batch == 0);
  CHECK(empty.seq_len == 0);
  CHECK(empty.input_ids.empty());
}

TEST_CASE("bert tokenizer: the pad id comes from the vocabulary") {
  Strings tokens = kVocabulary;
  std::swap(tokens[0], tokens[5]);  // [PAD] is id 5, hello id 0
  const BertTokenizer tokenizer = BertTokenizer::from_tokens(tokens, {});
  CHECK(tokenizer.pad_id() == 5);
  const EncodedBatch batch = tokenizer.encode_batch({"hello hello", ""});
  CHECK(batch.input_ids == Ids{2, 0, 0, 3, 2, 3, 5, 5});
}

TEST_CASE("bert tokenizer: invalid UTF-8 is an error naming the byte offset") {
  const BertTokenizer tokenizer = tiny();
  struct Case {
    std::string text;
    const char* offset;
    const char* defect;
  };
  const std::vector<Case> cases = {
      {"ab\x80", "byte offset 2", "continuation byte without a lead byte"},
      {"a\xc0\xaf", "byte offset 1", "overlong"},                  // '/' in two bytes
      {"\xe0\x80\xaf", "byte offset 0", "overlong"},               // in three
      {"xyz\xf0\x80\x80\xaf", "byte offset 3", "overlong"},        // in four
      {"\xed\xa0\x80", "byte offset 0", "surrogate"},              // U+D800
      {"\xed\xbf\xbf", "byte offset 0", "surrogate"},              // U+DFFF
      {"\xf4\x90\x80\x80", "byte offset 0", "above U+10FFFF"},     // U+110000
      {"ok \xf5\x80\x80\x80", "byte offset 3", "never occurs"},
      {"\xff", "byte offset 0", "never occurs"},
      {"hello \xe2\x82", "byte offset 6", "end of the input"},     // € cut short
      {"\xe2\x28\xa1", "byte offset 0", "not a continuation"},
      {"\xf0\x9f\x98", "byte offset 0", "end of the input"},       // 😀 cut short
  };
  for (const Case& c : cases) {
    INFO("text bytes: " << c.text.size());
    const std::string message = value_error([&] { tokenizer.encode(c.text); });
    CHECK_THAT(message, Contains("invalid UTF-8") && Contains(c.offset) && Contains(c.defect));
    CHECK_THAT(value_error([&] { tokenizer.tokens(c.text); }), Contains(c.offset));
  }
  // The largest code point and the edges around the surrogates are fine.
  CHECK(tokenizer.words("\xf4\x8f\xbf\xbf") == Strings{"\U0010FFFF"});
  CHECK(tokenizer.words("\xed\x9f\xbf\xee\x80\x80").size() == 1);  // U+D7FF U+E000 (Co, dropped)
  // In a batch the error names the text.
  CHECK_THAT(value_error([&] { tokenizer.encode_batch({"fine", "bad \xc3"}); }),
             Contains("text 1 of the batch of 2") && Contains("byte offset 4"));
}

TEST_CASE("bert tokenizer: from_vocab and from_folder read the files") {
  const TempDir dir("files");
  const std::string vocab = dir.write("vocab.txt", vocab_txt());
  CHECK(BertTokenizer::from_vocab(vocab, {}).encode("Hello!") == Ids{2, 5, 12, 3});

  // CRLF line ends are not part of the tokens.
  const TempDir crlf("crlf");
  std::string crlf_vocab = vocab_txt();
  for (size_t i = 0; (i = crlf_vocab.find('\n', i)) != std::string::npos; i += 2) {
    crlf_vocab.replace(i, 1, "\r\n");
  }
  CHECK(BertTokenizer::from_vocab(crlf.write("vocab.txt", crlf_vocab), {}).encode("world") ==
        Ids{2, 6, 3});

  // vocab.txt + tokenizer_config.json: the config's case and length.
  dir.write("tokenizer_config.json",
            R"({"do_lower_case": false, "model_max_length": 4, "unk_token": "[UNK]"})");
  BertTokenizer cased = BertTokenizer::from_folder(dir.path());
  CHECK(cased.max_length() == 4);
  CHECK(cased.encode("Hello hello world") == Ids{2, 1, 5, 3});
  CHECK_FALSE(cased.options().lowercase);

  // tokenizer.json wins over vocab.txt.
  dir.write("tokenizer.json", R"({
    "added_tokens": [{"id": 0, "content": "[PAD]", "special": true},
                     {"id": 3, "content": "[SEP]", "special": true}],
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 3,
              "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4, "ab": 5,
                        "##c": 6}}
  })");
  const BertTokenizer from_json = BertTokenizer::from_folder(dir.path());
  CHECK(from_json.vocab_size() == 7);
  CHECK(from_json.max_length() == 4);  // still tokenizer_config.json's
  CHECK(from_json.options().lowercase);
  CHECK(from_json.options().max_input_chars_per_word == 3);
  // "hello" has 5 characters, more than 3; [CLS] is not an added token
  // there, so it is split as punctuation and its pieces are unknown.
  CHECK(from_json.tokens("HELLO abc [SEP] [CLS]") ==
        Strings{"[UNK]", "ab", "##c", "[SEP]", "[UNK]", "[UNK]", "[UNK]"});
}

TEST_CASE("bert tokenizer: file errors name the path") {
  CHECK_THAT(value_error([] { BertTokenizer::from_folder("/nonexistent/model"); }),
             Contains("/nonexistent/model") && Contains("not a directory"));
  CHECK_THAT(value_error([] { BertTokenizer::from_vocab("/nonexistent/vocab.txt", {}); }),
             Contains("cannot open /nonexistent/vocab.txt"));

  const TempDir empty("empty");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(empty.path()); }),
             Contains("neither tokenizer.json nor vocab.txt") && Contains(empty.path()));

  const TempDir bad_json("bad_json");
  const std::string path = bad_json.write("tokenizer.json", "{\"model\": ");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains(path) && Contains("not valid JSON"));
  bad_json.write("tokenizer.json", R"({"normalizer": {"type": "NFC"}})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains(path) && Contains("BertNormalizer"));
  const std::string bert_parts = R"("normalizer": {"type": "BertNormalizer"},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 2], "sep": ["[SEP]", 3]},)";
  bad_json.write("tokenizer.json", "{" + bert_parts + R"(
    "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": "1"}}})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains(path) && Contains("the id of \"[CLS]\" in model.vocab must be an integer"));
  bad_json.write("tokenizer.json", "{" + bert_parts + R"(
    "model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 0}}})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains("unique"));
  bad_json.write("tokenizer.json", "{" + bert_parts + R"(
    "model": {"type": "WordPiece", "vocab": {"[UNK]": {"id": 0}}}})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains(path) && Contains("must be integer ids"));
  bad_json.write("tokenizer.json", "{" + bert_parts + R"(
    "model": {"type": "BPE", "vocab": {}}})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(bad_json.path()); }),
             Contains("the model is BPE, not WordPiece"));
  // BertProcessing names [CLS] and [SEP] too.
  bad_json.write("tokenizer.json", "{" + bert_parts + R"(
    "model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3,
                                             "hi": 4}}})");
  CHECK(BertTokenizer::from_folder(bad_json.path()).encode("Hi!") == Ids{2, 4, 1, 3});

  // A special token missing from the vocabulary.
  const TempDir unknown("unknown_special");
  unknown.write("vocab.txt", vocab_txt());
  const std::string config = unknown.write("tokenizer_config.json", R"({"pad_token": "<pad>"})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(unknown.path()); }),
             Contains("\"<pad>\" is not in the vocabulary") && Contains(config));
  unknown.write("tokenizer_config.json", R"({"do_lower_case": "yes"})");
  CHECK_THAT(value_error([&] { BertTokenizer::from_folder(unknown.path()); }),
             Contains("\"do_lower_case\" must be true or false") && Contains(config));

  TokenizerOptions options;
  options.cls_token = "<s>";
  CHECK_THAT(value_error([] {
               TokenizerOptions o;
               o.cls_token = "<s>";
               BertTokenizer::from_tokens(kVocabulary, o);
             }),
             Contains("[CLS] token \"<s>\" is not in the vocabulary"));
}

TEST_CASE("bert tokenizer: copies share the vocabulary, not the max length") {
  BertTokenizer a = tiny();
  BertTokenizer b = a;
  b.set_max_length(3);
  CHECK(a.encode("hello world") == Ids{2, 5, 6, 3});
  CHECK(b.encode("hello world") == Ids{2, 5, 3});
}

// --- the real model (all-MiniLM-L6-v2's tokenizer) --------------------------

const char* model_dir() { return std::getenv("TESSERA_TEST_MODEL_DIR"); }

TEST_CASE("bert tokenizer: real model: ids of BERT's uncased vocabulary") {
  if (model_dir() == nullptr) TESSERA_SKIP("TESSERA_TEST_MODEL_DIR is not set");
  const BertTokenizer tokenizer = BertTokenizer::from_folder(model_dir());
  CHECK(tokenizer.vocab_size() == 30522);
  CHECK(tokenizer.pad_id() == 0);
  CHECK(tokenizer.unk_id() == 100);
  CHECK(tokenizer.cls_id() == 101);
  CHECK(tokenizer.sep_id() == 102);
  CHECK(tokenizer.max_length() == 512);
  CHECK(tokenizer.encode("Hello, world!") == Ids{101, 7592, 1010, 2088, 999, 102});
  CHECK(tokenizer.tokens("unaffable") == Strings{"una", "##ffa", "##ble"});
  CHECK(tokenizer.encode("a [SEP] b [MASK]c[sep]") ==
        Ids{101, 1037, 102, 1038, 103, 1039, 1031, 19802, 1033, 102});
}

TEST_CASE("bert tokenizer: real model: truncation at 512 by default") {
  if (model_dir() == nullptr) TESSERA_SKIP("TESSERA_TEST_MODEL_DIR is not set");
  const BertTokenizer tokenizer = BertTokenizer::from_folder(model_dir());
  std::string text;
  for (int i = 0; i < 600; ++i) text += "word ";
  const Ids ids = tokenizer.encode(text);
  REQUIRE(ids.size() == 512);
  CHECK(ids.front() == 101);
  CHECK(ids[510] == 2773);
  CHECK(ids.back() == 102);
}

}  // namespace
}  // namespace tessera::models
