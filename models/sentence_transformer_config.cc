#include "models/sentence_transformer_config.h"

#include <filesystem>
#include <string_view>

#include "models/json_config.h"
#include "runtime/core/error.h"

namespace tessera::models {

namespace {

namespace fs = std::filesystem;

std::string join(const std::string& dir, std::string_view name) {
  return (fs::path(dir) / fs::path(name)).lexically_normal().string();
}

// The legacy Pooling keys, in the order their modes concatenate.
constexpr struct {
  std::string_view key;
  PoolingMode mode;
} kLegacyPoolingKeys[] = {
    {"pooling_mode_cls_token", PoolingMode::kCls},
    {"pooling_mode_max_tokens", PoolingMode::kMax},
    {"pooling_mode_mean_tokens", PoolingMode::kMean},
    {"pooling_mode_mean_sqrt_len_tokens", PoolingMode::kMeanSqrtLen},
    {"pooling_mode_weightedmean_tokens", PoolingMode::kWeightedMean},
    {"pooling_mode_lasttoken", PoolingMode::kLastToken},
};

// A Pooling module's config.json: "pooling_mode" (a name or a list of
// names; sentence-transformers 5 and later) or the older
// "pooling_mode_*_tokens" booleans; mean pooling when neither selects any.
void read_pooling(const std::string& path, SentenceTransformerConfig& config) {
  const JsonObject pooling = JsonObject::read(path, "pooling config");
  std::vector<PoolingMode> modes;
  if (std::optional<std::vector<std::string>> names = pooling.get_strings("pooling_mode")) {
    TESSERA_CHECK(!names->empty(), ValueError, path, ": \"pooling_mode\" is an empty list");
    for (const std::string& name : *names) {
      try {
        modes.push_back(pooling_mode_from_name(name));
      } catch (const ValueError& e) {
        throw ValueError(detail::concat(path, ": ", e.what()));
      }
    }
  } else {
    for (const auto& legacy : kLegacyPoolingKeys) {
      if (pooling.get_bool(legacy.key).value_or(false)) modes.push_back(legacy.mode);
    }
    if (modes.empty()) modes.push_back(PoolingMode::kMean);
  }
  config.pooling = modes;
  config.pooling_dimension = pooling.get_int("embedding_dimension");
  if (!config.pooling_dimension) {
    config.pooling_dimension = pooling.get_int("word_embedding_dimension");
  }
}

// The module kind of a modules.json "type": its last dotted component
// ("sentence_transformers.models.Pooling" -> "Pooling"), whichever package
// path the sentence-transformers version that wrote it used.
std::string_view module_kind(std::string_view type) {
  const size_t dot = type.rfind('.');
  return dot == std::string_view::npos ? type : type.substr(dot + 1);
}

void read_modules(const std::string& model_dir, const std::string& path,
                  SentenceTransformerConfig& config) {
  // The pipeline this runtime runs: Transformer, Pooling, then optionally
  // Normalize, in that order.
  enum class Stage { kStart, kTransformer, kPooling, kNormalize } stage = Stage::kStart;
  for (const JsonObject& module : JsonObject::read_array(path, "module list", "module")) {
    const std::string& where = module.source();
    const std::optional<std::string> type = module.get_string("type");
    TESSERA_CHECK(type.has_value(), ValueError, where, ": no \"type\"");
    const std::string folder = join(model_dir, module.get_string("path").value_or(""));
    const std::string_view kind = module_kind(*type);
    if (kind == "Transformer") {
      TESSERA_CHECK(stage == Stage::kStart, ValueError, where,
                    ": a Transformer module must come first, and only once");
      config.transformer_dir = folder;
      stage = Stage::kTransformer;
    } else if (kind == "Pooling") {
      TESSERA_CHECK(stage == Stage::kTransformer, ValueError, where,
                    ": a Pooling module must follow the Transformer module, once");
      read_pooling(join(folder, "config.json"), config);
      stage = Stage::kPooling;
    } else if (kind == "Normalize") {
      TESSERA_CHECK(stage == Stage::kPooling, ValueError, where,
                    ": a Normalize module must follow the Pooling module, once");
      config.normalize = true;
      stage = Stage::kNormalize;
    } else {
      throw ValueError(detail::concat(where, ": the module type \"", *type,
                                      "\" is not supported (only Transformer, Pooling and "
                                      "Normalize are)"));
    }
  }
  TESSERA_CHECK(stage == Stage::kPooling || stage == Stage::kNormalize, ValueError, path,
                ": expected a Transformer module followed by a Pooling module");
}

}  // namespace

SentenceTransformerConfig SentenceTransformerConfig::read(const std::string& model_dir) {
  std::error_code error;
  TESSERA_CHECK(fs::is_directory(model_dir, error), ValueError, "the model folder ", model_dir,
                " does not exist or is not a folder");
  SentenceTransformerConfig config;
  config.transformer_dir = fs::path(model_dir).lexically_normal().string();
  const std::string modules_path = join(model_dir, "modules.json");
  if (fs::exists(modules_path, error)) read_modules(model_dir, modules_path, config);

  const std::string st_config_path = join(config.transformer_dir, "sentence_bert_config.json");
  if (fs::exists(st_config_path, error)) {
    const JsonObject st_config = JsonObject::read(st_config_path, "sentence-transformers config");
    config.max_seq_length = st_config.get_int("max_seq_length");
    TESSERA_CHECK(!config.max_seq_length || *config.max_seq_length >= 2, ValueError,
                  st_config_path, ": \"max_seq_length\" must be at least 2 ([CLS] and [SEP]), got ",
                  *config.max_seq_length);
  }
  return config;
}

}  // namespace tessera::models
