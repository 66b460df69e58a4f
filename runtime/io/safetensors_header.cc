#include "runtime/io/safetensors_header.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"

namespace tessera::safetensors {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kMetadataKey = "__metadata__";

template <typename... Args>
[[noreturn]] void fail(const std::string& path, const Args&... parts) {
  throw ValueError(detail::concat("safetensors file '", path, "': ", parts...));
}

// As save_safetensors words its errors.
template <typename... Args>
[[noreturn]] void fail_save(const std::string& path, const Args&... parts) {
  throw ValueError(detail::concat("save_safetensors: '", path, "': ", parts...));
}

struct DTypeName {
  std::string_view name;
  DType dtype;
};

// In the reference implementation's dtype order (its Dtype enum), which
// its writer sorts by; the names are the format's.
constexpr DTypeName kDTypeNames[] = {
    {"BOOL", DType::kBool}, {"U8", DType::kU8},   {"I8", DType::kI8},   {"I16", DType::kI16},
    {"F16", DType::kF16},   {"BF16", DType::kBF16}, {"I32", DType::kI32}, {"F32", DType::kF32},
    {"F64", DType::kF64},   {"I64", DType::kI64},
};

// Dtypes of the format that tessera has no dtype for, with what they are.
constexpr std::pair<std::string_view, std::string_view> kDTypesWithoutTessera[] = {
    {"U16", "uint16"},
    {"U32", "uint32"},
    {"U64", "uint64"},
    {"C64", "complex64"},
    {"F8_E4M3", "float8 e4m3fn"},
    {"F8_E5M2", "float8 e5m2"},
    {"F8_E4M3FNUZ", "float8 e4m3fnuz"},
    {"F8_E5M2FNUZ", "float8 e5m2fnuz"},
    {"F8_E8M0", "float8 e8m0fnu"},
    {"F6_E2M3", "float6 e2m3fn"},
    {"F6_E3M2", "float6 e3m2fn"},
    {"F4", "float4 e2m1fn"},
};

int writer_rank(DType t) {
  for (size_t i = 0; i < std::size(kDTypeNames); ++i) {
    if (kDTypeNames[i].dtype == t) return static_cast<int>(i);
  }
  return -1;
}

DType parse_dtype(const std::string& name, const std::string& tensor, const std::string& path) {
  for (const DTypeName& known : kDTypeNames) {
    if (known.name == name) return known.dtype;
  }
  for (const auto& [format_name, what] : kDTypesWithoutTessera) {
    if (format_name == name) {
      fail(path, "tensor '", tensor, "' has dtype ", name, " (", what,
           "), which tessera has no dtype for");
    }
  }
  std::string known_names;
  for (const DTypeName& known : kDTypeNames) {
    known_names += known_names.empty() ? "" : ", ";
    known_names += known.name;
  }
  fail(path, "tensor '", tensor, "' has unknown dtype '", name, "' (tessera reads ", known_names,
       ")");
}

// What a JSON value is, for messages: its type, and numbers themselves.
std::string describe(const Json& value) {
  if (value.is_number()) return "the number " + value.dump();
  return std::string("a JSON ") + value.type_name();
}

// The value of a non-negative JSON integer (any that fits in 64 bits).
std::optional<uint64_t> non_negative_integer(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  return std::nullopt;
}

const Json& field(const Json& entry, const char* key, const std::string& tensor,
                  const std::string& path) {
  const auto it = entry.find(key);
  if (it == entry.end()) fail(path, "tensor '", tensor, "' has no \"", key, "\"");
  return *it;
}

Shape parse_shape(const Json& shape, const std::string& tensor, const std::string& path) {
  if (!shape.is_array()) {
    fail(path, "tensor '", tensor, "': \"shape\" must be an array of sizes, not ",
         describe(shape));
  }
  if (shape.size() > kMaxRank) {
    fail(path, "tensor '", tensor, "' has rank ", shape.size(), ", beyond the limit of ",
         kMaxRank);
  }
  Shape sizes;
  for (const Json& size : shape) {
    const std::optional<uint64_t> value = non_negative_integer(size);
    if (!value) {
      fail(path, "tensor '", tensor, "': shape sizes must be non-negative integers, got ",
           describe(size));
    }
    if (*value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(path, "tensor '", tensor, "': shape size ", *value, " is too large");
    }
    sizes.push_back(static_cast<int64_t>(*value));
  }
  return sizes;
}

// [begin, end) of the tensor in the data section.
std::pair<size_t, size_t> parse_offsets(const Json& offsets, const std::string& tensor,
                                        const std::string& path) {
  if (!offsets.is_array() || offsets.size() != 2) {
    fail(path, "tensor '", tensor, "': \"data_offsets\" must be [begin, end], not ",
         offsets.is_array() ? "an array of " + std::to_string(offsets.size()) + " values"
                            : describe(offsets));
  }
  const std::optional<uint64_t> begin = non_negative_integer(offsets[0]);
  const std::optional<uint64_t> end = non_negative_integer(offsets[1]);
  if (!begin || !end) {
    fail(path, "tensor '", tensor, "': data offsets must be non-negative integers, got ",
         describe(begin ? offsets[1] : offsets[0]));
  }
  if (*begin > *end) {
    fail(path, "tensor '", tensor, "': data_offsets [", *begin, ", ", *end,
         "] begin after they end");
  }
  return {static_cast<size_t>(*begin), static_cast<size_t>(*end)};
}

SafetensorsFile::Entry parse_entry(const Json& value, const std::string& tensor,
                                   size_t data_bytes, const std::string& path) {
  if (!value.is_object()) {
    fail(path, "tensor '", tensor, "' must be a JSON object with dtype, shape and ",
         "data_offsets, not ", describe(value));
  }
  const Json& dtype_name = field(value, "dtype", tensor, path);
  if (!dtype_name.is_string()) {
    fail(path, "tensor '", tensor, "': \"dtype\" must be a string, not ", describe(dtype_name));
  }
  const DType dtype = parse_dtype(dtype_name.get<std::string>(), tensor, path);
  Shape shape = parse_shape(field(value, "shape", tensor, path), tensor, path);
  const auto [begin, end] = parse_offsets(field(value, "data_offsets", tensor, path), tensor, path);

  const std::string context =
      detail::concat("safetensors file '", path, "', tensor '", tensor, "' of shape ",
                     shape_to_string(shape));
  const int64_t numel = checked_numel(shape, context.c_str());
  const size_t nbytes = checked_mul_size(static_cast<size_t>(numel), itemsize(dtype),
                                         context.c_str());
  if (end > data_bytes) {
    fail(path, "tensor '", tensor, "': data_offsets [", begin, ", ", end,
         "] run past the end of the data section (", data_bytes, " bytes)");
  }
  if (end - begin != nbytes) {
    fail(path, "tensor '", tensor, "': data_offsets [", begin, ", ", end, "] hold ", end - begin,
         " bytes, but ", dtype_name.get<std::string>(), " ", shape_to_string(shape), " needs ",
         nbytes);
  }
  return SafetensorsFile::Entry{dtype, std::move(shape), begin, nbytes};
}

std::map<std::string, std::string> parse_metadata(const Json& value, const std::string& path) {
  std::map<std::string, std::string> metadata;
  if (value.is_null()) return metadata;  // the reference writer's "no metadata"
  if (!value.is_object()) {
    fail(path, "\"__metadata__\" must be an object mapping strings to strings, not ",
         describe(value));
  }
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) {
      fail(path, "\"__metadata__\" must map strings to strings, but \"", key, "\" maps to ",
           describe(text));
    }
    metadata.emplace(key, text.get<std::string>());
  }
  return metadata;
}

// The JSON library keeps the last of two equal keys in an object; a
// safetensors header must not have them (two tensors of one name, or an
// entry with two shapes), so a parser callback watches for them.
class DuplicateKeyWatch {
 public:
  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open_objects_.emplace_back(); break;
      case Json::parse_event_t::object_end: open_objects_.pop_back(); break;
      case Json::parse_event_t::key:
        if (!open_objects_.back().insert(parsed.get<std::string>()).second && !duplicate_) {
          duplicate_ = parsed.get<std::string>();
          duplicate_at_top_ = open_objects_.size() == 1;
        }
        break;
      default: break;
    }
    return true;
  }

  void check(const std::string& path) const {
    if (!duplicate_) return;
    if (duplicate_at_top_) fail(path, "the header lists tensor '", *duplicate_, "' twice");
    fail(path, "key \"", *duplicate_, "\" appears twice in one object of the header");
  }

 private:
  std::vector<std::set<std::string>> open_objects_;
  std::optional<std::string> duplicate_;
  bool duplicate_at_top_ = false;
};

// "[json.exception.parse_error.101] parse error at ...": without the tag,
// and with bytes beyond ASCII spelled \xNN: the library quotes the bytes
// it read last, which may be invalid UTF-8, and a message must be text
// (Python decodes it as UTF-8).
std::string json_error_text(const Json::exception& e) {
  std::string_view text = e.what();
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("] ");
    if (close != std::string_view::npos) text.remove_prefix(close + 2);
  }
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x80) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    }
  }
  return out;
}

// Checks that text is valid UTF-8 (the JSON library refuses to write it
// otherwise); `what` names it in the error.
void check_utf8(const std::string& text, const std::string& what, const std::string& path) {
  try {
    (void)OrderedJson(text).dump();
  } catch (const OrderedJson::type_error&) {
    const std::string shown =
        OrderedJson(text).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
    fail_save(path, what, " ", shown, " is not valid UTF-8");
  }
}

}  // namespace

std::string_view format_dtype_name(DType t) {
  return kDTypeNames[writer_rank(t)].name;
}

Header parse_header(std::string_view json, size_t data_bytes, const std::string& path) {
  // The JSON library takes a NUL byte for the end of its input, which
  // would accept "{}\0<anything>"; JSON text has none (a string spells it
  // \u0000).
  if (const size_t nul = json.find('\0'); nul != std::string_view::npos) {
    fail(path, "the header is not valid JSON: byte ", nul, " of it is a NUL byte");
  }
  DuplicateKeyWatch duplicates;
  Json root;
  try {
    root = Json::parse(json.begin(), json.end(), std::ref(duplicates));
  } catch (const Json::exception& e) {
    fail(path, "the header is not valid JSON: ", json_error_text(e));
  }
  if (!root.is_object()) fail(path, "the header must be a JSON object, not ", describe(root));
  duplicates.check(path);

  Header header;
  std::vector<std::pair<std::string, SafetensorsFile::Entry>> tensors;
  for (const auto& [name, value] : root.items()) {
    if (name == kMetadataKey) {
      header.metadata = parse_metadata(value, path);
    } else {
      tensors.emplace_back(name, parse_entry(value, name, data_bytes, path));
    }
  }

  // In data order, each tensor must start where the one before ends: the
  // format has no holes and no shared bytes, and ends with the last tensor.
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.offset, a.second.nbytes, a.first) <
           std::tie(b.second.offset, b.second.nbytes, b.first);
  });
  size_t covered = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, entry] = tensors[i];
    if (entry.offset < covered) {
      const auto& [previous_name, previous] = tensors[i - 1];
      fail(path, "tensors '", previous_name, "' [", previous.offset, ", ", covered, ") and '",
           name, "' [", entry.offset, ", ", entry.offset + entry.nbytes,
           ") overlap in the data section");
    }
    if (entry.offset > covered) {
      fail(path, "bytes [", covered, ", ", entry.offset,
           ") of the data section belong to no tensor (the tensors must cover it exactly)");
    }
    covered = entry.offset + entry.nbytes;
  }
  if (covered != data_bytes) {
    fail(path, "bytes [", covered, ", ", data_bytes,
         ") of the data section belong to no tensor (the tensors must cover it exactly)");
  }
  for (auto& [name, entry] : tensors) {
    header.names.push_back(std::move(name));
    header.entries.push_back(std::move(entry));
  }
  return header;
}

void sort_for_writing(std::vector<TensorToWrite>& tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorToWrite& a, const TensorToWrite& b) {
    const int rank_a = writer_rank(a.tensor->dtype()), rank_b = writer_rank(b.tensor->dtype());
    if (rank_a != rank_b) return rank_a > rank_b;
    return a.name < b.name;
  });
}

std::string encode_header(std::span<const TensorToWrite> tensors,
                          const std::map<std::string, std::string>& metadata,
                          const std::string& path) {
  OrderedJson root = OrderedJson::object();
  if (!metadata.empty()) {
    OrderedJson& entries = root[std::string(kMetadataKey)] = OrderedJson::object();
    for (const auto& [key, value] : metadata) {
      check_utf8(key, "metadata key", path);
      check_utf8(value, "the value of metadata key '" + key + "'", path);
      entries[key] = value;
    }
  }
  size_t offset = 0;
  for (const TensorToWrite& tensor : tensors) {
    const std::string name(tensor.name);
    check_utf8(name, "tensor name", path);
    const size_t end = checked_add_size(offset, tensor.tensor->nbytes(), "save_safetensors");
    OrderedJson shape = OrderedJson::array();
    for (int64_t size : tensor.tensor->sizes()) shape.push_back(size);
    root[name] = OrderedJson{{"dtype", std::string(format_dtype_name(tensor.tensor->dtype()))},
                             {"shape", std::move(shape)},
                             {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = root.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  if (text.size() > kMaxHeaderBytes) {
    fail_save(path, "the header would be ", text.size(), " bytes, beyond the limit of ",
         kMaxHeaderBytes, " that readers accept (too many tensors)");
  }
  return text;
}

}  // namespace tessera::safetensors
