// bert_tokenize MODEL_DIR [--max-length N] [--words | --batch]
//
// Reads texts from stdin, one per line ("\n" ends a line; "\r" and every
// other character are part of the text), tokenizes them with the folder's
// BertTokenizer and writes one JSON line per text on stdout:
//   (default)  the ids, [CLS] and [SEP] included: [101, 7592, 102]
//   --words    the words after normalization and pre-tokenization: ["hello"]
// or, with --batch, one JSON object for all the texts: encode_batch's
// {"input_ids": [[...]], "token_type_ids": ..., "attention_mask": ...,
//  "lengths": [...]}.
// A text that fails (invalid UTF-8) gives {"error": "..."} in its place.
// The pytest tests/models/test_tokenizer_parity.py drives it.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/text/bert_tokenizer.h"
#include "runtime/core/error.h"

namespace {

int usage(const char* message) {
  std::cerr << "bert_tokenize: " << message << "\n"
            << "usage: bert_tokenize MODEL_DIR [--max-length N] [--words | --batch] < texts\n";
  return 2;
}

nlohmann::json rows(const std::vector<int64_t>& values, int64_t batch, int64_t seq_len) {
  nlohmann::json result = nlohmann::json::array();
  for (int64_t row = 0; row < batch; ++row) {
    result.push_back(std::vector<int64_t>(values.begin() + row * seq_len,
                                          values.begin() + (row + 1) * seq_len));
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir;
  int64_t max_length = -1;
  bool words = false;
  bool batch = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--max-length") {
      if (i + 1 >= argc) return usage("--max-length needs a value");
      char* end = nullptr;
      max_length = std::strtoll(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0') return usage("--max-length needs an integer");
    } else if (arg == "--words") {
      words = true;
    } else if (arg == "--batch") {
      batch = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(("unknown option " + arg).c_str());
    } else if (model_dir.empty()) {
      model_dir = arg;
    } else {
      return usage("more than one model folder");
    }
  }
  if (model_dir.empty()) return usage("no model folder");
  if (words && batch) return usage("--words and --batch exclude each other");

  try {
    auto tokenizer = tessera::models::BertTokenizer::from_folder(model_dir);
    if (max_length >= 0) tokenizer.set_max_length(max_length);
    std::vector<std::string> texts;
    for (std::string line; std::getline(std::cin, line);) texts.push_back(std::move(line));

    if (batch) {
      const tessera::models::EncodedBatch encoded = tokenizer.encode_batch(texts);
      nlohmann::json result;
      result["input_ids"] = rows(encoded.input_ids, encoded.batch, encoded.seq_len);
      result["token_type_ids"] = rows(encoded.token_type_ids, encoded.batch, encoded.seq_len);
      result["attention_mask"] = rows(encoded.attention_mask, encoded.batch, encoded.seq_len);
      result["lengths"] = encoded.lengths;
      std::cout << result.dump() << "\n";
      return 0;
    }
    for (const std::string& text : texts) {
      nlohmann::json line;
      try {
        if (words) {
          line = tokenizer.words(text);
        } else {
          line = tokenizer.encode(text);
        }
      } catch (const tessera::Error& e) {
        line = {{"error", e.what()}};
      }
      std::cout << line.dump() << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "bert_tokenize: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
