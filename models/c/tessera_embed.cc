// The C API over models::SentenceEncoder. Every entry point catches every
// exception: nothing may unwind into C code.
#include "models/c/tessera_embed.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "models/sentence_encoder.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

struct tessera_embedder {
  tessera::models::SentenceEncoder encoder;
  int64_t batch_size = 32;
};

namespace {

thread_local std::string last_error;

tessera_embed_status fail(tessera_embed_status status, const char* function,
                          const std::string& message) {
  try {
    last_error = std::string(function) + ": " + message;
  } catch (...) {
    // No memory even for the message: keep the old one rather than throw.
  }
  return status;
}

// Runs body, turning exceptions into statuses: tessera::ValueError into
// value_error_status (what a ValueError means depends on the call: the
// caller's input when encoding, the model folder when creating).
template <typename Body>
tessera_embed_status guarded(const char* function, tessera_embed_status value_error_status,
                             Body&& body) noexcept {
  try {
    return body();
  } catch (const tessera::OutOfMemoryError& e) {
    return fail(TESSERA_EMBED_OUT_OF_MEMORY, function, e.what());
  } catch (const tessera::ValueError& e) {
    return fail(value_error_status, function, e.what());
  } catch (const std::bad_alloc&) {
    return fail(TESSERA_EMBED_OUT_OF_MEMORY, function, "out of memory");
  } catch (const std::exception& e) {
    return fail(TESSERA_EMBED_ERROR, function, e.what());
  } catch (...) {
    return fail(TESSERA_EMBED_ERROR, function, "unknown error");
  }
}

}  // namespace

extern "C" {

tessera_embedder* tessera_embedder_create(const char* model_dir, const char* device) {
  const char* function = "tessera_embedder_create";
  if (model_dir == nullptr) {
    fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "model_dir is NULL");
    return nullptr;
  }
  tessera_embedder* embedder = nullptr;
  guarded(function, TESSERA_EMBED_ERROR, [&] {
    const tessera::Device where = tessera::Device::parse(device == nullptr ? "cpu" : device);
    embedder = new tessera_embedder{tessera::models::SentenceEncoder::load(model_dir, where)};
    return TESSERA_EMBED_OK;
  });
  return embedder;
}

void tessera_embedder_free(tessera_embedder* embedder) {
  // Destructors release tensors and the tokenizer; none throws.
  delete embedder;
}

size_t tessera_embedder_dimension(const tessera_embedder* embedder) {
  if (embedder == nullptr) {
    fail(TESSERA_EMBED_INVALID_ARGUMENT, "tessera_embedder_dimension", "embedder is NULL");
    return 0;
  }
  return static_cast<size_t>(embedder->encoder.dimension());
}

tessera_embed_status tessera_embedder_encode(const tessera_embedder* embedder,
                                             const char* const* texts, size_t n, float* out,
                                             size_t out_len) {
  const char* function = "tessera_embedder_encode";
  if (embedder == nullptr) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "embedder is NULL");
  }
  if (n == 0) return TESSERA_EMBED_OK;
  if (texts == nullptr) return fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "texts is NULL");
  if (out == nullptr) return fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "out is NULL");
  const size_t dimension = static_cast<size_t>(embedder->encoder.dimension());
  if (n > std::numeric_limits<size_t>::max() / dimension) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function,
                std::to_string(n) + " texts of " + std::to_string(dimension) +
                    " floats each overflow size_t");
  }
  const size_t needed = n * dimension;
  if (out_len < needed) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function,
                "out holds " + std::to_string(out_len) + " floats, " + std::to_string(needed) +
                    " needed (" + std::to_string(n) + " texts x " + std::to_string(dimension) +
                    ")");
  }
  for (size_t i = 0; i < n; ++i) {
    if (texts[i] == nullptr) {
      return fail(TESSERA_EMBED_INVALID_ARGUMENT, function,
                  "texts[" + std::to_string(i) + "] is NULL");
    }
  }
  return guarded(function, TESSERA_EMBED_INVALID_ARGUMENT, [&] {
    const std::vector<std::string> sentences(texts, texts + n);
    const tessera::Tensor embeddings =
        embedder->encoder.encode(sentences, embedder->batch_size)
            .to(tessera::host_device())
            .contiguous();
    std::memcpy(out, embeddings.data_ptr(), needed * sizeof(float));
    return TESSERA_EMBED_OK;
  });
}

tessera_embed_status tessera_embedder_set_batch_size(tessera_embedder* embedder,
                                                     size_t batch_size) {
  const char* function = "tessera_embedder_set_batch_size";
  if (embedder == nullptr) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "embedder is NULL");
  }
  if (batch_size == 0 || batch_size > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function,
                "batch_size must be at least 1, got " + std::to_string(batch_size));
  }
  embedder->batch_size = static_cast<int64_t>(batch_size);
  return TESSERA_EMBED_OK;
}

tessera_embed_status tessera_embedder_set_max_length(tessera_embedder* embedder,
                                                     size_t max_length) {
  const char* function = "tessera_embedder_set_max_length";
  if (embedder == nullptr) {
    return fail(TESSERA_EMBED_INVALID_ARGUMENT, function, "embedder is NULL");
  }
  return guarded(function, TESSERA_EMBED_INVALID_ARGUMENT, [&] {
    const size_t limit = static_cast<size_t>(std::numeric_limits<int64_t>::max());
    embedder->encoder.set_max_length(static_cast<int64_t>(std::min(max_length, limit)));
    return TESSERA_EMBED_OK;
  });
}

const char* tessera_embed_last_error(void) { return last_error.c_str(); }

}  // extern "C"
