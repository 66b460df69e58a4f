#include "models/json_config.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"

namespace tessera::models {

struct JsonObject::Impl {
  nlohmann::json value;  // an object
  std::string source;
};

namespace {

// A JSON value's kind, for error messages.
const char* describe_kind(const nlohmann::json& value) {
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

std::string read_text(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  TESSERA_CHECK(in.is_open(), ValueError, "cannot read the ", what, " ", path,
                ": no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  TESSERA_CHECK(!in.bad(), ValueError, "cannot read the ", what, " ", path, ": read error");
  return std::move(text).str();
}

nlohmann::json parse_json(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string message = e.what();
    const size_t bracket = message.find("] ");
    if (bracket != std::string::npos) message.erase(0, bracket + 2);
    throw ValueError(detail::concat(source, ": not valid JSON: ", message));
  }
}

}  // namespace

JsonObject::JsonObject(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsonObject::JsonObject(JsonObject&&) noexcept = default;
JsonObject& JsonObject::operator=(JsonObject&&) noexcept = default;
JsonObject::~JsonObject() = default;

JsonObject JsonObject::parse(std::string_view text, std::string source) {
  nlohmann::json value = parse_json(text, source);
  TESSERA_CHECK(value.is_object(), ValueError, source, ": expected a JSON object, got ",
                describe_kind(value));
  return JsonObject(std::make_unique<Impl>(Impl{std::move(value), std::move(source)}));
}

JsonObject JsonObject::read(const std::string& path, std::string_view what) {
  return parse(read_text(path, what), path);
}

std::vector<JsonObject> JsonObject::read_array(const std::string& path, std::string_view what,
                                               std::string_view element) {
  nlohmann::json list = parse_json(read_text(path, what), path);
  TESSERA_CHECK(list.is_array(), ValueError, path, ": expected a JSON array, got ",
                describe_kind(list));
  std::vector<JsonObject> objects;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string source = detail::concat(path, ": ", element, " ", i);
    TESSERA_CHECK(list[i].is_object(), ValueError, source, ": expected an object, got ",
                  describe_kind(list[i]));
    objects.push_back(
        JsonObject(std::make_unique<Impl>(Impl{std::move(list[i]), std::move(source)})));
  }
  return objects;
}

const std::string& JsonObject::source() const { return impl_->source; }

namespace {

// object[key], or nullptr where absent or null.
const nlohmann::json* find(const nlohmann::json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void wrong_type(const std::string& source, std::string_view key,
                             const char* expected, const nlohmann::json& value) {
  throw ValueError(detail::concat(source, ": \"", key, "\" must be ", expected, ", got ",
                                  describe_kind(value), " (", value.dump(), ")"));
}

}  // namespace

std::optional<int64_t> JsonObject::get_int(std::string_view key) const {
  const nlohmann::json* value = find(impl_->value, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_number_integer() && !value->is_number_unsigned()) return value->get<int64_t>();
  if (value->is_number_unsigned()) {
    const uint64_t u = value->get<uint64_t>();
    TESSERA_CHECK(u <= static_cast<uint64_t>(INT64_MAX), ValueError, impl_->source, ": \"", key,
                  "\" is out of range: ", u);
    return static_cast<int64_t>(u);
  }
  wrong_type(impl_->source, key, "an integer", *value);
}

std::optional<double> JsonObject::get_number(std::string_view key) const {
  const nlohmann::json* value = find(impl_->value, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_number()) return value->get<double>();
  wrong_type(impl_->source, key, "a number", *value);
}

std::optional<bool> JsonObject::get_bool(std::string_view key) const {
  const nlohmann::json* value = find(impl_->value, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_boolean()) return value->get<bool>();
  wrong_type(impl_->source, key, "a boolean", *value);
}

std::optional<std::string> JsonObject::get_string(std::string_view key) const {
  const nlohmann::json* value = find(impl_->value, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return value->get<std::string>();
  wrong_type(impl_->source, key, "a string", *value);
}

std::optional<std::vector<std::string>> JsonObject::get_strings(std::string_view key) const {
  const nlohmann::json* value = find(impl_->value, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return std::vector<std::string>{value->get<std::string>()};
  if (value->is_array()) {
    std::vector<std::string> strings;
    for (const nlohmann::json& item : *value) {
      if (!item.is_string()) {
        wrong_type(impl_->source, key, "a string or an array of strings", *value);
      }
      strings.push_back(item.get<std::string>());
    }
    return strings;
  }
  wrong_type(impl_->source, key, "a string or an array of strings", *value);
}

}  // namespace tessera::models
