/* A C program built outside the repository against the installed SDK
 * (tests/sdk/test_install.py builds it with CMake and with pkg-config).
 *
 *   embed_program MODEL_DIR DEVICE
 *
 * Embeds three sentences with the C API, checks that each embedding has unit
 * length and that the two sentences about the same thing are closer to each
 * other than to the third, then prints the first sentence's embedding as
 * one JSON array (the test compares it with tessera-embed's). Exits 0 when
 * all checks pass, 1 when one fails, 2 when the API reports an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/c/tessera_embed.h"

static double dot(const float* a, const float* b, size_t n) {
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += (double)a[i] * (double)b[i];
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL_DIR DEVICE\n", argv[0]);
    return 2;
  }
  tessera_embedder* embedder = tessera_embedder_create(argv[1], argv[2]);
  if (embedder == NULL) {
    fprintf(stderr, "tessera_embedder_create: %s\n", tessera_embed_last_error());
    return 2;
  }
  const char* const texts[] = {
      "A man is eating food.",
      "A man is eating a piece of bread.",
      "The girl is carrying a baby.",
  };
  const size_t n = sizeof texts / sizeof texts[0];
  const size_t dim = tessera_embedder_dimension(embedder);
  float* out = malloc(n * dim * sizeof(float));
  if (out == NULL) return 2;
  if (tessera_embedder_encode(embedder, texts, n, out, n * dim) != TESSERA_EMBED_OK) {
    fprintf(stderr, "tessera_embedder_encode: %s\n", tessera_embed_last_error());
    return 2;
  }
  /* A buffer one embedding short is the caller's mistake, reported as such. */
  int status = 0;
  if (tessera_embedder_encode(embedder, texts, n, out, n * dim - 1) !=
      TESSERA_EMBED_INVALID_ARGUMENT) {
    fprintf(stderr, "a short buffer was not refused\n");
    status = 1;
  }
  tessera_embedder_free(embedder);

  for (size_t i = 0; i < n; ++i) {
    const double norm = sqrt(dot(out + i * dim, out + i * dim, dim));
    if (fabs(norm - 1.0) > 1e-4) {
      fprintf(stderr, "embedding %zu has norm %.6f, not 1\n", i, norm);
      status = 1;
    }
  }
  const double same = dot(out, out + dim, dim), other = dot(out, out + 2 * dim, dim);
  fprintf(stderr, "dimension %zu; cosine(food, bread) = %.4f, cosine(food, baby) = %.4f\n", dim,
          same, other);
  if (!(same > other + 0.2)) {
    fprintf(stderr, "the sentences about eating are not the closest pair\n");
    status = 1;
  }
  printf("[");
  for (size_t i = 0; i < dim; ++i) printf(i == 0 ? "%.9g" : ", %.9g", out[i]);
  printf("]\n");
  free(out);
  return status;
}
