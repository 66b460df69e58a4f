#include "models/text/tokenizer_files.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"

namespace tessera::models::text {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.good(), ValueError, "BertTokenizer: cannot open ", path);
  std::ostringstream content;
  content << in.rdbuf();
  TESSERA_CHECK(!in.bad(), ValueError, "BertTokenizer: cannot read ", path);
  return content.str();
}

json read_json(const std::string& path) {
  const std::string text = read_file(path);
  json document = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  TESSERA_CHECK(!document.is_discarded(), ValueError, "BertTokenizer: ", path,
                " is not valid JSON");
  TESSERA_CHECK(document.is_object(), ValueError, "BertTokenizer: ", path,
                " is not a JSON object");
  return document;
}

// tokenizer.json, with the vocabulary (model.vocab: BERT's 30522 entries)
// taken out as the parser streams it by: building the document's map for
// it would be most of the tokenizer's load time.
struct TokenizerJson {
  json document;                                    // model.vocab left empty
  std::vector<std::pair<std::string, json>> vocab;  // token, id as written
};

// nlohmann's SAX interface: builds the document as its own DOM parser
// does, except inside model.vocab.
class VocabSplittingSax {
 public:
  explicit VocabSplittingSax(TokenizerJson& out) : out_(out) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(json::number_integer_t v) { return value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value(v); }
  bool number_float(json::number_float_t v, const std::string&) { return value(v); }
  bool string(std::string& v) { return value(std::move(v)); }
  bool binary(json::binary_t& v) { return value(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_ = e.what();
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool in_vocab() const {
    return open_.size() == 3 && names_[1] == "model" && names_[2] == "vocab";
  }
  bool value(json v) {
    if (in_vocab()) {
      out_.vocab.emplace_back(std::move(key_), std::move(v));
    } else {
      add(std::move(v));
    }
    return true;
  }
  json* add(json v) {
    if (open_.empty()) {
      out_.document = std::move(v);
      return &out_.document;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  bool open(json container) {
    if (in_vocab()) {
      error_ = "the values of \"model.vocab\" must be integer ids";
      return false;
    }
    // A container of an array is only appended to while it is the last
    // element, so the pointers on the stack stay valid.
    std::string name = open_.empty() || open_.back()->is_array() ? std::string() : key_;
    open_.push_back(add(std::move(container)));
    names_.push_back(std::move(name));
    return true;
  }
  bool close() {
    open_.pop_back();
    names_.pop_back();
    return true;
  }

  TokenizerJson& out_;
  std::vector<json*> open_;         // the containers being read
  std::vector<std::string> names_;  // the key of each in its parent
  std::string key_;
  std::string error_;
};

TokenizerJson read_tokenizer_json_file(const std::string& path) {
  const std::string text = read_file(path);
  TokenizerJson result;
  VocabSplittingSax sax(result);
  const bool parsed = json::sax_parse(text, &sax);
  TESSERA_CHECK(parsed, ValueError, "BertTokenizer: ", path, " is not valid JSON: ", sax.error());
  TESSERA_CHECK(result.document.is_object(), ValueError, "BertTokenizer: ", path,
                " is not a JSON object");
  return result;
}

// Typed access to optional fields, with errors naming the file and field.
class JsonFields {
 public:
  JsonFields(const json& object, std::string path, std::string prefix)
      : object_(object), path_(std::move(path)), prefix_(std::move(prefix)) {}

  const json* find(const char* name) const {
    const auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const char* name, const char* expected) const {
    throw ValueError(detail::concat("BertTokenizer: ", path_, ": \"", prefix_, name,
                                    "\" must be ", expected));
  }
  bool boolean(const char* name, bool fallback) const {
    const json* value = find(name);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) fail(name, "true or false");
    return value->get<bool>();
  }
  std::optional<bool> optional_boolean(const char* name) const {
    if (find(name) == nullptr) return std::nullopt;
    return boolean(name, false);
  }
  std::string string(const char* name, const std::string& fallback) const {
    const json* value = find(name);
    if (value == nullptr) return fallback;
    if (!value->is_string()) fail(name, "a string");
    return value->get<std::string>();
  }
  int64_t integer(const char* name, int64_t fallback) const {
    const json* value = find(name);
    if (value == nullptr) return fallback;
    if (!value->is_number_integer()) fail(name, "an integer");
    return value->get<int64_t>();
  }
  // A special token of tokenizer_config.json: "[CLS]" or {"content": "[CLS]", ...}.
  std::optional<std::string> token(const char* name) const {
    const json* value = find(name);
    if (value == nullptr) return std::nullopt;
    if (value->is_string()) return value->get<std::string>();
    if (value->is_object()) {
      const auto content = value->find("content");
      if (content != value->end() && content->is_string()) return content->get<std::string>();
    }
    fail(name, "a string or an object with a \"content\" string");
  }
  std::string type() const { return string("type", ""); }

 private:
  const json& object_;
  std::string path_;
  std::string prefix_;
};

// Options shared by both formats: tokenizer_config.json's maximum length.
int64_t model_max_length(const std::optional<json>& config, const std::string& path) {
  constexpr int64_t kDefault = 512;
  if (!config) return kDefault;
  const auto it = config->find("model_max_length");
  if (it == config->end() || it->is_null()) return kDefault;
  TESSERA_CHECK(it->is_number(), ValueError, "BertTokenizer: ", path,
                ": \"model_max_length\" must be a number");
  // transformers writes 1e30 for "no limit": keep BERT's 512 then.
  const double value = it->get<double>();
  if (value < 2 || value > (1 << 20)) return kDefault;
  return static_cast<int64_t>(value);
}

std::optional<json> read_optional_json(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  return read_json(path);
}

void apply_tokenizer_config_tokens(const json& config, const std::string& path,
                                   TokenizerOptions& options) {
  const JsonFields fields(config, path, "");
  options.unk_token = fields.token("unk_token").value_or(options.unk_token);
  options.cls_token = fields.token("cls_token").value_or(options.cls_token);
  options.sep_token = fields.token("sep_token").value_or(options.sep_token);
  options.pad_token = fields.token("pad_token").value_or(options.pad_token);
}

TokenizerDefinition read_tokenizer_json(const std::string& path,
                                        const std::optional<json>& config,
                                        const std::string& config_path) {
  TokenizerJson parsed = read_tokenizer_json_file(path);
  const json& document = parsed.document;
  TokenizerDefinition definition;
  definition.source = path;
  TokenizerOptions& options = definition.options;
  // tokenizer_config.json names the pad token (tokenizer.json only does in
  // "padding"); tokenizer.json's own settings below win.
  if (config) apply_tokenizer_config_tokens(*config, config_path, options);
  const JsonFields top(document, path, "");

  const json* normalizer = top.find("normalizer");
  TESSERA_CHECK(normalizer != nullptr && normalizer->is_object() &&
                    JsonFields(*normalizer, path, "normalizer.").type() == "BertNormalizer",
                ValueError, "BertTokenizer: ", path,
                ": the normalizer must be a BertNormalizer (this is not a BERT WordPiece "
                "tokenizer)");
  const JsonFields normalizer_fields(*normalizer, path, "normalizer.");
  options.clean_text = normalizer_fields.boolean("clean_text", true);
  options.split_chinese_chars = normalizer_fields.boolean("handle_chinese_chars", true);
  options.strip_accents = normalizer_fields.optional_boolean("strip_accents");
  options.lowercase = normalizer_fields.boolean("lowercase", true);

  const json* pre_tokenizer = top.find("pre_tokenizer");
  TESSERA_CHECK(pre_tokenizer != nullptr && pre_tokenizer->is_object() &&
                    JsonFields(*pre_tokenizer, path, "pre_tokenizer.").type() == "BertPreTokenizer",
                ValueError, "BertTokenizer: ", path,
                ": the pre_tokenizer must be a BertPreTokenizer");

  const json* model = top.find("model");
  TESSERA_CHECK(model != nullptr && model->is_object(), ValueError, "BertTokenizer: ", path,
                ": no \"model\" object");
  const JsonFields model_fields(*model, path, "model.");
  const std::string model_type = model_fields.type();
  TESSERA_CHECK(model_type == "WordPiece" || model_type.empty(), ValueError, "BertTokenizer: ",
                path, ": the model is ", model_type, ", not WordPiece");
  options.unk_token = model_fields.string("unk_token", options.unk_token);
  options.continuing_subword_prefix =
      model_fields.string("continuing_subword_prefix", options.continuing_subword_prefix);
  options.max_input_chars_per_word =
      model_fields.integer("max_input_chars_per_word", options.max_input_chars_per_word);
  const json* vocab = model_fields.find("vocab");
  if (vocab == nullptr || !vocab->is_object()) model_fields.fail("vocab", "an object of token: id");
  std::vector<std::string>& tokens = definition.tokens;
  tokens.resize(parsed.vocab.size());
  std::vector<bool> seen(parsed.vocab.size(), false);
  for (auto& [token, id] : parsed.vocab) {
    TESSERA_CHECK(id.is_number_integer() && id.get<int64_t>() >= 0 &&
                      id.get<int64_t>() < static_cast<int64_t>(tokens.size()) &&
                      !seen[id.get<int64_t>()],
                  ValueError, "BertTokenizer: ", path, ": the id of \"", token,
                  "\" in model.vocab must be an integer, unique, in [0, ", tokens.size(), ")");
    seen[id.get<int64_t>()] = true;
    tokens[id.get<int64_t>()] = std::move(token);
  }

  // Added tokens: matched verbatim in the input. tokenizers would also
  // match "normalized" ones after normalization and honour lstrip/rstrip/
  // single_word; BERT's never use them, so they are refused.
  if (const json* added = top.find("added_tokens")) {
    TESSERA_CHECK(added->is_array(), ValueError, "BertTokenizer: ", path,
                  ": \"added_tokens\" must be an array");
    for (const json& entry : *added) {
      TESSERA_CHECK(entry.is_object(), ValueError, "BertTokenizer: ", path,
                    ": each of \"added_tokens\" must be an object");
      const JsonFields fields(entry, path, "added_tokens[].");
      const std::string content = fields.string("content", "");
      const int64_t id = fields.integer("id", -1);
      TESSERA_CHECK(!content.empty() && id >= 0, ValueError, "BertTokenizer: ", path,
                    ": an added token needs a \"content\" and an \"id\"");
      for (const char* flag : {"normalized", "lstrip", "rstrip", "single_word"}) {
        TESSERA_CHECK(!fields.boolean(flag, false), ValueError, "BertTokenizer: ", path,
                      ": the added token \"", content, "\" has \"", flag,
                      "\": true, which is not supported");
      }
      if (id == static_cast<int64_t>(tokens.size())) tokens.push_back(content);
      TESSERA_CHECK(id < static_cast<int64_t>(tokens.size()) && tokens[id] == content, ValueError,
                    "BertTokenizer: ", path, ": the added token \"", content, "\" has id ", id,
                    " but the vocabulary's token ", id, " is \"",
                    id < static_cast<int64_t>(tokens.size()) ? tokens[id] : std::string("(none)"),
                    "\"");
      options.special_tokens.push_back(content);
    }
  }

  // [CLS] $A [SEP] from the post-processor.
  const json* post = top.find("post_processor");
  TESSERA_CHECK(post != nullptr && post->is_object(), ValueError, "BertTokenizer: ", path,
                ": no \"post_processor\" (expected [CLS] $A [SEP])");
  const JsonFields post_fields(*post, path, "post_processor.");
  if (post_fields.type() == "BertProcessing") {
    const json* cls = post_fields.find("cls");
    const json* sep = post_fields.find("sep");
    TESSERA_CHECK(cls && sep && cls->is_array() && sep->is_array() && !cls->empty() &&
                      !sep->empty() && (*cls)[0].is_string() && (*sep)[0].is_string(),
                  ValueError, "BertTokenizer: ", path,
                  ": post_processor.cls and .sep must be [token, id]");
    options.cls_token = (*cls)[0].get<std::string>();
    options.sep_token = (*sep)[0].get<std::string>();
  } else if (post_fields.type() == "TemplateProcessing") {
    const json* single = post_fields.find("single");
    auto special = [&](const json& piece) -> std::optional<std::string> {
      const auto it = piece.find("SpecialToken");
      if (it == piece.end() || !it->is_object()) return std::nullopt;
      const auto id = it->find("id");
      const auto type_id = it->find("type_id");
      if (id == it->end() || !id->is_string()) return std::nullopt;
      if (type_id != it->end() && !(type_id->is_number_integer() && type_id->get<int64_t>() == 0))
        return std::nullopt;
      return id->get<std::string>();
    };
    const bool bert_template = single && single->is_array() && single->size() == 3 &&
                               special((*single)[0]) && special((*single)[2]) &&
                               (*single)[1].contains("Sequence");
    TESSERA_CHECK(bert_template, ValueError, "BertTokenizer: ", path,
                  ": post_processor.single must be [CLS] $A [SEP] (a special token, the "
                  "sequence, a special token, all of type 0)");
    options.cls_token = *special((*single)[0]);
    options.sep_token = *special((*single)[2]);
  } else {
    throw ValueError(detail::concat("BertTokenizer: ", path, ": post_processor type \"",
                                    post_fields.type(),
                                    "\" is not supported (TemplateProcessing or BertProcessing)"));
  }

  if (const json* padding = top.find("padding"); padding && padding->is_object()) {
    options.pad_token = JsonFields(*padding, path, "padding.").string("pad_token", options.pad_token);
  }
  // tokenizer.json's "truncation" and "padding" lengths are not used: as
  // with transformers, the caller's max_length decides.
  options.max_length = model_max_length(config, config_path);
  return definition;
}

TokenizerDefinition read_vocab_folder(const std::string& vocab_path,
                                      const std::optional<json>& config,
                                      const std::string& config_path) {
  TokenizerDefinition definition;
  definition.tokens = read_vocab_txt(vocab_path);
  definition.source = config ? vocab_path + " and " + config_path : vocab_path;
  TokenizerOptions& options = definition.options;
  if (config) {
    const JsonFields fields(*config, config_path, "");
    options.lowercase = fields.boolean("do_lower_case", true);
    options.strip_accents = fields.optional_boolean("strip_accents");
    options.split_chinese_chars = fields.boolean("tokenize_chinese_chars", true);
    apply_tokenizer_config_tokens(*config, config_path, options);
    for (const std::string* token :
         {&options.unk_token, &options.sep_token, &options.pad_token, &options.cls_token}) {
      options.special_tokens.push_back(*token);
    }
    if (const auto mask = fields.token("mask_token")) options.special_tokens.push_back(*mask);
    if (const json* extra = fields.find("additional_special_tokens")) {
      TESSERA_CHECK(extra->is_array(), ValueError, "BertTokenizer: ", config_path,
                    ": \"additional_special_tokens\" must be an array");
      for (const json& token : *extra) {
        TESSERA_CHECK(token.is_string() || (token.is_object() && token.contains("content") &&
                                            token["content"].is_string()),
                      ValueError, "BertTokenizer: ", config_path,
                      ": each of \"additional_special_tokens\" must be a string or an object "
                      "with a \"content\" string");
        options.special_tokens.push_back(token.is_string() ? token.get<std::string>()
                                                           : token["content"].get<std::string>());
      }
    }
  }
  options.max_length = model_max_length(config, config_path);
  return definition;
}

}  // namespace

std::vector<std::string> read_vocab_txt(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    size_t token_end = end;
    if (token_end > start && text[token_end - 1] == '\r') --token_end;
    tokens.emplace_back(text, start, token_end - start);
    start = end + 1;
  }
  TESSERA_CHECK(!tokens.empty(), ValueError, "BertTokenizer: ", path, " has no tokens");
  return tokens;
}

TokenizerDefinition read_tokenizer_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  TESSERA_CHECK(fs::is_directory(dir), ValueError, "BertTokenizer: ", dir,
                " is not a directory (expected a model folder with tokenizer.json or vocab.txt)");
  const std::string tokenizer_json = (fs::path(dir) / "tokenizer.json").string();
  const std::string vocab_txt = (fs::path(dir) / "vocab.txt").string();
  const std::string config_path = (fs::path(dir) / "tokenizer_config.json").string();
  const std::optional<json> config = read_optional_json(config_path);
  if (fs::exists(tokenizer_json)) return read_tokenizer_json(tokenizer_json, config, config_path);
  TESSERA_CHECK(fs::exists(vocab_txt), ValueError, "BertTokenizer: ", dir,
                " has neither tokenizer.json nor vocab.txt (looked for ", tokenizer_json, " and ",
                vocab_txt, ")");
  return read_vocab_folder(vocab_txt, config, config_path);
}

}  // namespace tessera::models::text
