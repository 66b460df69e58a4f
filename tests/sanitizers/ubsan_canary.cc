// A deliberate signed integer overflow, for sanitizer_canary_test: under
// the asan config (which adds UBSan) it must be reported. Never run by
// itself.
#include <climits>
#include <cstdio>

int main() {
  volatile int largest = INT_MAX;
  const int overflowed = largest + 1;
  std::printf("%d\n", overflowed);
  return 0;
}
