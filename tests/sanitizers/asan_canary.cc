// A deliberate heap-buffer-overflow, for sanitizer_canary_test: under the
// asan config AddressSanitizer must report it. Never run by itself.
#include <cstdio>
#include <vector>

int main() {
  std::vector<int> values(4, 1);
  volatile size_t past_the_end = values.size();
  std::printf("%d\n", values.data()[past_the_end]);
  return 0;
}
