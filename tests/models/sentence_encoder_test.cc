// BertConfig, the sentence-transformers folder config and SentenceEncoder
// (models/), on model folders written here: a tiny BERT with random
// weights, and folders with one defect each, whose errors must name the
// file and what is wrong. Parity with sentence-transformers on the real
// all-MiniLM-L6-v2 is test_sentence_encoder_parity.py's job.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "models/bert/bert_config.h"
#include "models/sentence_encoder.h"
#include "runtime/io/safetensors.h"
#include "runtime/tessera.h"
#include "tests/support/temp_dir.h"

namespace tessera::models {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

// Folders named after this test binary.
class TempDir : public tessera::testing::TempDir {
 public:
  explicit TempDir(const std::string& name) : tessera::testing::TempDir("sentence_encoder_test_" + name) {}
};

// The message of the tessera::Error that f throws ("" if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// -- A tiny BERT: hidden 8, 2 heads, 2 layers, 16 positions. --------------

constexpr int64_t kHidden = 8, kInner = 16, kLayers = 2, kPositions = 16;
const std::vector<std::string> kVocabulary = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                              "hello", "world", "a",     "b",     "c"};

std::string tiny_config() {
  return R"({"model_type": "bert", "vocab_size": 10, "hidden_size": 8,
             "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 16,
             "hidden_act": "gelu", "max_position_embeddings": 16, "type_vocab_size": 2,
             "layer_norm_eps": 1e-12, "pad_token_id": 0})";
}

// Random weights named as Hugging Face's BertModel saves them.
std::map<std::string, Tensor> tiny_weights() {
  Generator gen(7);
  auto w = [&](Shape shape) { return mul(randn(shape, {}, &gen), 0.5); };
  std::map<std::string, Tensor> t;
  t["embeddings.word_embeddings.weight"] = w({10, kHidden});
  t["embeddings.position_embeddings.weight"] = w({kPositions, kHidden});
  t["embeddings.token_type_embeddings.weight"] = w({2, kHidden});
  t["embeddings.LayerNorm.weight"] = add(w({kHidden}), 1.0);
  t["embeddings.LayerNorm.bias"] = w({kHidden});
  for (int64_t i = 0; i < kLayers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* proj : {"attention.self.query", "attention.self.key",
                             "attention.self.value", "attention.output.dense"}) {
      t[p + proj + ".weight"] = w({kHidden, kHidden});
      t[p + proj + ".bias"] = w({kHidden});
    }
    t[p + "intermediate.dense.weight"] = w({kInner, kHidden});
    t[p + "intermediate.dense.bias"] = w({kInner});
    t[p + "output.dense.weight"] = w({kHidden, kInner});
    t[p + "output.dense.bias"] = w({kHidden});
    for (const char* norm : {"attention.output.LayerNorm", "output.LayerNorm"}) {
      t[p + norm + ".weight"] = add(w({kHidden}), 1.0);
      t[p + norm + ".bias"] = w({kHidden});
    }
  }
  return t;
}

std::string modules_json(bool normalize) {
  std::string modules =
      R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
          {"idx": 1, "name": "1", "path": "1_Pooling",
           "type": "sentence_transformers.models.Pooling"})";
  if (normalize) {
    modules += R"(, {"idx": 2, "name": "2", "path": "2_Normalize",
                     "type": "sentence_transformers.models.Normalize"})";
  }
  return modules + "]";
}

// A complete sentence-transformers folder of the tiny model.
void write_tiny_model(const TempDir& dir, const std::string& pooling_mode = "mean",
                      bool normalize = true) {
  std::string vocab;
  for (const std::string& token : kVocabulary) vocab += token + "\n";
  dir.write("vocab.txt", vocab);
  dir.write("config.json", tiny_config());
  dir.write("modules.json", modules_json(normalize));
  dir.write("1_Pooling/config.json",
            R"({"embedding_dimension": 8, "pooling_mode": ")" + pooling_mode + R"("})");
  dir.write("sentence_bert_config.json", R"({"max_seq_length": 100})");
  save_safetensors(dir.file("model.safetensors"), tiny_weights());
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  return amax(abs(sub(a, b))).item<float>();
}

// -- BertConfig ------------------------------------------------------------

TEST_CASE("bert config: reads the keys and keeps Hugging Face's defaults for the rest") {
  const BertConfig c = BertConfig::from_json(
      R"({"hidden_size": 384, "num_attention_heads": 12, "layer_norm_eps": 1e-5,
          "hidden_act": "gelu_new", "position_embedding_type": null})",
      "config.json");
  CHECK(c.hidden_size == 384);
  CHECK(c.head_dim() == 32);
  CHECK(c.layer_norm_eps == 1e-5);
  CHECK(c.hidden_act == BertActivation::kGeluTanh);
  CHECK(c.vocab_size == 30522);
  CHECK(c.num_hidden_layers == 12);
  CHECK(c.max_position_embeddings == 512);
}

TEST_CASE("bert config: each mistake names the file and the key") {
  struct Case {
    const char* json;
    std::vector<std::string> mentions;
  };
  const Case cases[] = {
      {R"({"hidden_size": "384"})", {"cfg.json", "\"hidden_size\" must be an integer", "a string"}},
      {R"({"hidden_size": 38.5})", {"\"hidden_size\" must be an integer", "38.5"}},
      {R"({"hidden_size": 0})", {"\"hidden_size\" must be positive, got 0"}},
      {R"({"layer_norm_eps": "small"})", {"\"layer_norm_eps\" must be a number"}},
      {R"({"layer_norm_eps": -1})", {"\"layer_norm_eps\" must be positive"}},
      {R"({"hidden_act": 3})", {"\"hidden_act\" must be a string"}},
      {R"({"hidden_act": "swish"})", {"\"hidden_act\" \"swish\" is not supported"}},
      {R"({"model_type": "roberta"})", {"\"model_type\" is \"roberta\"", "BERT"}},
      {R"({"position_embedding_type": "relative_key"})", {"relative_key", "only \"absolute\""}},
      {R"({"hidden_size": 10, "num_attention_heads": 4})",
       {"\"hidden_size\" 10 is not a multiple of \"num_attention_heads\" 4"}},
      {R"({"pad_token_id": 99, "vocab_size": 10})", {"\"pad_token_id\" 99", "[0, 10)"}},
      {R"([1, 2])", {"cfg.json: expected a JSON object, got an array"}},
      {R"({"hidden_size": )", {"cfg.json: not valid JSON"}},
  };
  for (const Case& c : cases) {
    INFO(c.json);
    const std::string message = error_of([&] { BertConfig::from_json(c.json, "cfg.json"); });
    REQUIRE_FALSE(message.empty());
    for (const std::string& word : c.mentions) CHECK_THAT(message, Contains(word));
  }
}

TEST_CASE("bert config: a missing file is named") {
  CHECK_THAT(error_of([] { BertConfig::from_file("/nonexistent/config.json"); }),
             Contains("cannot read the model config /nonexistent/config.json"));
}

// -- SentenceEncoder on the tiny model -------------------------------------

TEST_CASE("sentence encoder: padding, batching and sorting leave each embedding unchanged") {
  TempDir dir("tiny");
  write_tiny_model(dir);
  const SentenceEncoder encoder = SentenceEncoder::load(dir.path(), host_device());
  CHECK(encoder.dimension() == kHidden);
  CHECK(encoder.normalizes());
  CHECK(encoder.max_length() == kPositions);  // max_seq_length 100, capped by the positions

  const std::vector<std::string> sentences = {"hello", "a b c hello world a b", "",
                                              "world a", "c c c c c c c c c c c c c c c c c"};
  const Tensor together = encoder.encode(sentences, 4);
  REQUIRE(together.sizes() == Shape{5, kHidden});
  CHECK(max_abs_diff(norm(together, 2.0, {1}), ones({5})) < 1e-5f);
  for (size_t i = 0; i < sentences.size(); ++i) {
    const Tensor alone = encoder.encode({sentences[i]}, 1);
    INFO("sentence " << i);
    CHECK(max_abs_diff(alone.select(0, 0), together.select(0, static_cast<int64_t>(i))) < 1e-5f);
  }
  CHECK(encoder.encode({}, 4).sizes() == Shape{0, kHidden});

  // The two halves of encode give the same.
  const Tensor by_ids = encoder.encode_tokens(encoder.tokenize(sentences), 2);
  CHECK(max_abs_diff(by_ids, together) < 1e-5f);
}

TEST_CASE("sentence encoder: mean pooling without Normalize is the mean of the token vectors") {
  TempDir dir("mean");
  write_tiny_model(dir, "mean", /*normalize=*/false);
  const SentenceEncoder encoder = SentenceEncoder::load(dir.path(), host_device());
  CHECK_FALSE(encoder.normalizes());
  const std::vector<int64_t> ids = encoder.tokenizer().encode("hello world");
  const int64_t n = static_cast<int64_t>(ids.size());
  Tensor input = empty({1, n}, TensorOptions(DType::kI64));
  for (int64_t i = 0; i < n; ++i) input.data<int64_t>()[i] = ids[static_cast<size_t>(i)];
  const Tensor hidden = encoder.model().forward(input, Tensor(), Tensor());
  const Tensor want = mean(hidden.select(0, 0), {0});
  // Batched with a longer sentence, so its row is padded.
  const Tensor got = encoder.encode({"a b c a b c a b c", "hello world"}, 2).select(0, 1);
  CHECK(max_abs_diff(got, want) < 1e-5f);
}

TEST_CASE("sentence encoder: cls pooling takes the first token's vector") {
  TempDir dir("cls");
  write_tiny_model(dir, "cls", /*normalize=*/false);
  const SentenceEncoder encoder = SentenceEncoder::load(dir.path(), host_device());
  Tensor input = empty({1, 3}, TensorOptions(DType::kI64));
  const std::vector<int64_t> ids = encoder.tokenizer().encode("a");
  REQUIRE(ids.size() == 3);
  for (int64_t i = 0; i < 3; ++i) input.data<int64_t>()[i] = ids[static_cast<size_t>(i)];
  const Tensor want = encoder.model().forward(input, Tensor(), Tensor()).select(1, 0);
  CHECK(max_abs_diff(encoder.encode({"a b c hello", "a"}, 2).select(0, 1), want.select(0, 0)) <
        1e-5f);
}

TEST_CASE("sentence encoder: max length truncates, within the model's positions") {
  TempDir dir("max_length");
  write_tiny_model(dir);
  SentenceEncoder encoder = SentenceEncoder::load(dir.path(), host_device());
  encoder.set_max_length(4);
  CHECK(encoder.tokenize({"a b c hello world"})[0].size() == 4);
  CHECK(max_abs_diff(encoder.encode({"a b c hello world"}), encoder.encode({"a b"})) < 1e-6f);
  CHECK_THAT(error_of([&] { encoder.set_max_length(17); }),
             Contains("17 is outside [2, 16] (the model's positions)"));
  CHECK_THAT(error_of([&] { encoder.encode({"a"}, 0); }), Contains("batch_size must be >= 1"));
  CHECK_THAT(error_of([&] { encoder.encode({"ok", "bad \xff"}); }), Contains("sentence 1"));
  CHECK_THAT(error_of([&] { encoder.encode_tokens({{2, 99, 3}}); }),
             Contains("sentence 0 has the token id 99, outside the vocabulary [0, 10)"));
  CHECK_THAT(error_of([&] { encoder.encode_tokens({{}}); }),
             Contains("sentence 0 has 0 tokens, expected 1 to 16"));
}

// -- Folders with one defect each -------------------------------------------

TEST_CASE("sentence encoder: a folder's defects are errors naming the file") {
  TempDir dir("defects");
  auto load_error = [&] {
    return error_of([&] { SentenceEncoder::load(dir.path(), host_device()); });
  };

  SECTION("no such folder") {
    CHECK_THAT(error_of([] { SentenceEncoder::load("/nonexistent/model", host_device()); }),
               Contains("the model folder /nonexistent/model does not exist"));
  }
  SECTION("no config.json") {
    write_tiny_model(dir);
    dir.remove("config.json");
    CHECK_THAT(load_error(), Contains("cannot read the model config"));
    CHECK_THAT(load_error(), Contains("config.json"));
  }
  SECTION("no model.safetensors") {
    write_tiny_model(dir);
    dir.remove("model.safetensors");
    CHECK_THAT(load_error(), Contains("no weights file " + dir.file("model.safetensors")));
  }
  SECTION("a weight missing") {
    write_tiny_model(dir);
    auto weights = tiny_weights();
    weights.erase("encoder.layer.1.output.dense.bias");
    save_safetensors(dir.file("model.safetensors"), weights);
    CHECK_THAT(load_error(), Contains("\"encoder.layer.1.output.dense.bias\" is missing"));
  }
  SECTION("a weight of the wrong shape") {
    write_tiny_model(dir);
    auto weights = tiny_weights();
    weights["encoder.layer.0.intermediate.dense.weight"] = zeros({kInner, kHidden + 1});
    save_safetensors(dir.file("model.safetensors"), weights);
    CHECK_THAT(load_error(), Contains("\"encoder.layer.0.intermediate.dense.weight\" is [16, 9], "
                                      "the model config makes it [16, 8]"));
  }
  SECTION("not BERT weights") {
    write_tiny_model(dir);
    save_safetensors(dir.file("model.safetensors"), {{"linear.weight", zeros({2, 2})}});
    CHECK_THAT(load_error(), Contains("not the weights of a BERT model"));
  }
  SECTION("a config.json value of the wrong type") {
    write_tiny_model(dir);
    dir.write("config.json", R"({"hidden_size": [8]})");
    CHECK_THAT(load_error(), Contains("\"hidden_size\" must be an integer, got an array"));
  }
  SECTION("a module this runtime does not run") {
    write_tiny_model(dir);
    dir.write("modules.json",
              R"([{"path": "", "type": "sentence_transformers.models.Transformer"},
                  {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                  {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}])");
    CHECK_THAT(load_error(), Contains("modules.json: module 2: the module type "
                                      "\"sentence_transformers.models.Dense\" is not supported"));
  }
  SECTION("modules out of order") {
    write_tiny_model(dir);
    dir.write("modules.json",
              R"([{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
    CHECK_THAT(load_error(), Contains("a Pooling module must follow the Transformer module"));
  }
  SECTION("modules.json not a list") {
    write_tiny_model(dir);
    dir.write("modules.json", R"({"type": "Transformer"})");
    CHECK_THAT(load_error(), Contains("modules.json: expected a JSON array, got an object"));
  }
  SECTION("an unknown pooling mode") {
    write_tiny_model(dir, "median");
    CHECK_THAT(load_error(), Contains("1_Pooling/config.json: unknown pooling mode \"median\""));
  }
  SECTION("a pooling dimension that is not the hidden size") {
    write_tiny_model(dir);
    dir.write("1_Pooling/config.json", R"({"word_embedding_dimension": 384})");
    CHECK_THAT(load_error(), Contains("the Pooling module expects vectors of 384"));
  }
  SECTION("a max_seq_length below 2") {
    write_tiny_model(dir);
    dir.write("sentence_bert_config.json", R"({"max_seq_length": 1})");
    CHECK_THAT(load_error(), Contains("\"max_seq_length\" must be at least 2"));
  }
  SECTION("a vocabulary larger than the embeddings") {
    write_tiny_model(dir);
    std::string vocab;
    for (const std::string& token : kVocabulary) vocab += token + "\n";
    dir.write("vocab.txt", vocab + "extra1\nextra2\n");
    CHECK_THAT(load_error(), Contains("the tokenizer's vocabulary has 12 tokens, the model's "
                                      "embeddings only 10"));
  }
}

TEST_CASE("sentence encoder: a folder without modules.json is mean pooled, not normalized") {
  TempDir dir("plain");
  write_tiny_model(dir);
  dir.remove("modules.json");
  const SentenceEncoder encoder = SentenceEncoder::load(dir.path(), host_device());
  CHECK_FALSE(encoder.normalizes());
  REQUIRE(encoder.pooling().size() == 1);
  CHECK(encoder.pooling()[0] == PoolingMode::kMean);
}

}  // namespace
}  // namespace tessera::models
