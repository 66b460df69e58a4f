// Semantic search with no PyTorch and no Python: all-MiniLM-L6-v2 loaded
// from its safetensors file, a handful of sentences embedded on the CPU
// device, and each one's nearest neighbour by cosine similarity. The last
// part of `./dev demo`.
//
//   embed_demo MODEL_DIR [DEVICE]
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "models/sentence_encoder.h"
#include "runtime/tessera.h"

namespace {

const std::vector<std::string> kSentences = {
    "A man is playing a guitar on stage.",
    "Someone performs music with a stringed instrument.",
    "The new phone has a faster processor and a better camera.",
    "This smartphone's chip and camera were upgraded.",
    "Heavy rain is expected in the city tomorrow.",
    "The forecast says it will pour in town tomorrow.",
    "She is cooking pasta for dinner.",
    "A woman prepares an Italian meal in the evening.",
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: embed_demo MODEL_DIR [DEVICE]\n");
    return 2;
  }
  const tessera::Device device = tessera::Device::parse(argc == 3 ? argv[2] : "cpu");

  auto start = std::chrono::steady_clock::now();
  auto encoder = tessera::models::SentenceEncoder::load(argv[1], device);
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  encoder.encode(kSentences);  // warm-up: the first call pays one-time costs
  start = std::chrono::steady_clock::now();
  // [n, 384], each row of unit length: the dot product is the cosine.
  const tessera::Tensor embeddings = encoder.encode(kSentences).to(tessera::host_device());
  const double encode_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const tessera::Tensor similarity =
      tessera::mm(embeddings, embeddings.transpose(0, 1)).contiguous();

  const auto n = static_cast<int64_t>(kSentences.size());
  const float* s = similarity.data<float>();
  std::printf("all-MiniLM-L6-v2 on %s: %lld-dim embeddings; each sentence's nearest neighbour:\n",
              device.to_string().c_str(), static_cast<long long>(encoder.dimension()));
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (j != i && (best < 0 || s[i * n + j] > s[i * n + best])) best = j;
    }
    std::printf("  %-58s -> %-58s cosine %.3f\n", kSentences[i].c_str(), kSentences[best].c_str(),
                s[i * n + best]);
  }
  std::printf("model load %.1f ms; %.2f ms per sentence (%lld sentences in one batch)\n", load_ms,
              encode_ms / static_cast<double>(n), static_cast<long long>(n));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "embed_demo: %s\n", e.what());
  return 1;
}
