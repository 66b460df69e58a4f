/* The C API of Tessera's sentence embeddings (models::SentenceEncoder), for
 * C programs and for other languages through their C foreign-function
 * interfaces. Link libtessera_models.so, libtessera.so and the device
 * libraries to run on (at least libtessera_cpu.so).
 *
 *   tessera_embedder* e = tessera_embedder_create("/path/to/all-MiniLM-L6-v2", "cpu");
 *   if (e == NULL) { fprintf(stderr, "%s\n", tessera_embed_last_error()); return 1; }
 *   const char* texts[] = {"A sentence.", "Another one."};
 *   size_t dim = tessera_embedder_dimension(e);        // 384
 *   float* out = malloc(2 * dim * sizeof(float));
 *   if (tessera_embedder_encode(e, texts, 2, out, 2 * dim) != TESSERA_EMBED_OK) { ... }
 *   tessera_embedder_free(e);
 *
 * No function throws or aborts: each reports failure through its result
 * and leaves a message for tessera_embed_last_error(). Several threads may
 * encode with one embedder at once; its setters must not run while another
 * call uses it. */
#ifndef TESSERA_MODELS_C_TESSERA_EMBED_H_
#define TESSERA_MODELS_C_TESSERA_EMBED_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a call returns. */
typedef enum tessera_embed_status {
  TESSERA_EMBED_OK = 0,
  /* The caller's mistake: a NULL pointer, a buffer too small, text that is
   * not valid UTF-8, a bad batch size or max length. */
  TESSERA_EMBED_INVALID_ARGUMENT = 1,
  /* The model folder or the device failed: missing or malformed files, an
   * unknown device, a device error. */
  TESSERA_EMBED_ERROR = 2,
  TESSERA_EMBED_OUT_OF_MEMORY = 3,
} tessera_embed_status;

/* A loaded model on one device. Opaque. */
typedef struct tessera_embedder tessera_embedder;

/* Loads the sentence-transformers model folder model_dir (for example
 * all-MiniLM-L6-v2's) onto device ("cpu", "vulkan:0", "cuda:0"; NULL means
 * "cpu"). Returns NULL on failure, with the reason in
 * tessera_embed_last_error(). */
tessera_embedder* tessera_embedder_create(const char* model_dir, const char* device);

/* Frees the embedder; NULL is allowed and does nothing. */
void tessera_embedder_free(tessera_embedder* embedder);

/* Floats per embedding (384 for all-MiniLM-L6-v2); 0 for a NULL embedder. */
size_t tessera_embedder_dimension(const tessera_embedder* embedder);

/* Embeds n NUL-terminated UTF-8 texts into out, row-major: text i's
 * embedding at out[i * dimension]. out_len, the floats out holds, must be
 * at least n * dimension. Texts longer than the max length are truncated.
 * n may be 0 (texts and out may then be NULL). */
tessera_embed_status tessera_embedder_encode(const tessera_embedder* embedder,
                                             const char* const* texts, size_t n, float* out,
                                             size_t out_len);

/* Sentences per forward pass in tessera_embedder_encode (default 32). */
tessera_embed_status tessera_embedder_set_batch_size(tessera_embedder* embedder,
                                                     size_t batch_size);

/* The longest input in tokens, [CLS] and [SEP] included (the model's
 * max_seq_length by default): from 2 to the model's positions. */
tessera_embed_status tessera_embedder_set_max_length(tessera_embedder* embedder,
                                                     size_t max_length);

/* The message of the last call on this thread that failed ("" if none
 * has). Valid until the next failing call on this thread. */
const char* tessera_embed_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_MODELS_C_TESSERA_EMBED_H_ */
