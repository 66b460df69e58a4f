// Sentence-embedding inference with models::SentenceEncoder on one device:
// model load time, throughput at a batch size and the latency of one
// sentence. bench/bench_embedded.py runs it beside sentence-transformers on
// torch and prints the ratios (./dev bench).
//
//   embed_bench --model DIR --sentences FILE [--device cpu] [--batch 32]
//               [--repeats 5] [--latency-sentences 20]
//
// FILE holds one sentence per line. Prints one JSON object on stdout:
//   load_ms          SentenceEncoder::load (median of 3 loads)
//   throughput_sps   sentences per second encoding all of FILE at --batch
//                    (median of --repeats passes, after one warm-up pass)
//   latency_ms       median time to encode one sentence alone (batch 1),
//                    over the first --latency-sentences lines of FILE
// Each timed region ends with the embeddings on the host, so a device that
// runs asynchronously is timed to completion.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "models/sentence_encoder.h"
#include "runtime/tessera.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  std::string sentences;
  std::string device = "cpu";
  int64_t batch = 32;
  int repeats = 5;
  int latency_sentences = 20;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "embed_bench: %s\n", message.c_str());
  std::fprintf(stderr,
               "usage: embed_bench --model DIR --sentences FILE [--device cpu] [--batch 32] "
               "[--repeats 5] [--latency-sentences 20]\n");
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) usage_error("missing value after " + std::string(flag));
    const char* value = argv[++i];
    if (flag == "--model") o.model = value;
    else if (flag == "--sentences") o.sentences = value;
    else if (flag == "--device") o.device = value;
    else if (flag == "--batch") o.batch = std::atoll(value);
    else if (flag == "--repeats") o.repeats = std::atoi(value);
    else if (flag == "--latency-sentences") o.latency_sentences = std::atoi(value);
    else usage_error("unknown flag " + std::string(flag));
  }
  if (o.model.empty() || o.sentences.empty()) usage_error("--model and --sentences are required");
  if (o.batch < 1 || o.repeats < 1 || o.latency_sentences < 1) {
    usage_error("--batch, --repeats and --latency-sentences must be positive");
  }
  return o;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) usage_error("cannot read " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) usage_error(path + " has no sentences");
  return lines;
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Encodes and brings the result to the host: the end of the timed work.
void encode_to_host(const tessera::models::SentenceEncoder& encoder,
                    const std::vector<std::string>& sentences, int64_t batch) {
  tessera::Tensor embeddings = encoder.encode(sentences, batch).to(tessera::host_device());
  if (embeddings.numel() == 0) throw std::runtime_error("no embeddings");
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse_options(argc, argv);
  const std::vector<std::string> sentences = read_lines(o.sentences);
  const tessera::Device device = tessera::Device::parse(o.device);

  std::vector<double> load_ms;
  for (int i = 0; i < 3; ++i) {
    auto start = Clock::now();
    auto encoder = tessera::models::SentenceEncoder::load(o.model, device);
    tessera::synchronize(device);
    load_ms.push_back(ms_since(start));
  }
  auto encoder = tessera::models::SentenceEncoder::load(o.model, device);

  encode_to_host(encoder, sentences, o.batch);  // warm-up: caches, kernels
  std::vector<double> pass_ms;
  for (int i = 0; i < o.repeats; ++i) {
    auto start = Clock::now();
    encode_to_host(encoder, sentences, o.batch);
    pass_ms.push_back(ms_since(start));
  }

  const size_t n_latency = std::min(sentences.size(), static_cast<size_t>(o.latency_sentences));
  encode_to_host(encoder, {sentences[0]}, 1);
  std::vector<double> one_ms;
  for (size_t i = 0; i < n_latency; ++i) {
    auto start = Clock::now();
    encode_to_host(encoder, {sentences[i]}, 1);
    one_ms.push_back(ms_since(start));
  }

  std::printf(
      "{\"device\": \"%s\", \"sentences\": %zu, \"batch\": %lld, \"load_ms\": %.3f, "
      "\"throughput_sps\": %.3f, \"latency_ms\": %.3f}\n",
      device.to_string().c_str(), sentences.size(), static_cast<long long>(o.batch),
      median(load_ms), 1000.0 * static_cast<double>(sentences.size()) / median(pass_ms),
      median(one_ms));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "embed_bench: %s\n", e.what());
  return 1;
}
