// One JSON object of a model folder's configuration files (config.json,
// modules.json, 1_Pooling/config.json, ...), with reads that check each
// field's type: every mistake is a ValueError naming the file (and the
// element of a list) and the key. nlohmann/json parses; it stays out of
// this header, a private dependency of libtessera_models.so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::models {

class JsonObject {
 public:
  // The object in the file at path. ValueError naming `what` (e.g. "model
  // config") and the path when the file cannot be read, and naming the
  // path when it is not JSON or not an object.
  static JsonObject read(const std::string& path, std::string_view what);
  // The same from text; source names it in errors.
  static JsonObject parse(std::string_view text, std::string source);
  // The objects of a file holding a JSON array of objects (modules.json);
  // element i's errors name it as "<path>: <element> i".
  static std::vector<JsonObject> read_array(const std::string& path, std::string_view what,
                                            std::string_view element);

  JsonObject(JsonObject&&) noexcept;
  JsonObject& operator=(JsonObject&&) noexcept;
  ~JsonObject();

  // What errors name: the file, or the file and the element.
  const std::string& source() const;

  // The key's value as the type named, or nullopt where the key is absent
  // or null (Hugging Face writes null for "not set"); ValueError naming
  // the source and the key for a value of another type. Integers are
  // whole numbers only; numbers take integers too.
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_number(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  // A string or an array of strings, as a list.
  std::optional<std::vector<std::string>> get_strings(std::string_view key) const;

 private:
  struct Impl;
  explicit JsonObject(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::models
