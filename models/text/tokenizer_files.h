// Reading a BERT tokenizer's files: a model folder's tokenizer.json (the
// Hugging Face tokenizers format), or its vocab.txt plus
// tokenizer_config.json (the transformers format). Every defect is a
// tessera::ValueError naming the file.
#pragma once

#include <string>
#include <vector>

#include "models/text/bert_tokenizer.h"

namespace tessera::models::text {

struct TokenizerDefinition {
  std::vector<std::string> tokens;  // the vocabulary, by id
  TokenizerOptions options;         // special_tokens filled in
  std::string source;               // the file(s) read, for messages
};

// tokenizer.json when the folder has one, else vocab.txt (required) and
// tokenizer_config.json (optional).
TokenizerDefinition read_tokenizer_folder(const std::string& dir);

// One token per line, the id is the line number ("\n" or "\r\n" endings).
std::vector<std::string> read_vocab_txt(const std::string& path);

}  // namespace tessera::models::text
